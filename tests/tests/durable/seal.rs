//! CONTRACT section 4: a record may be sealed (HMAC-SHA-256) so that any edit is refused; keys
//! rotate through the key id in the envelope.

use serde_json::{Value, json};
use toolnexus::run::SealKey;
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
};
use toolnexus_tests::Calls;

fn key(id: &str, byte: u8) -> SealKey {
    SealKey::new(id, [byte; 32]).unwrap()
}

fn deleter() -> (Toolkit, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let tool = FnTool::builder("delete")
        .description("Deletes after an approval.")
        .handler(move |args, ctx| {
            seen.bump();
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            let reply = if ctx.accepted().is_some() {
                ToolResult::success(format!("deleted {path}"))
            } else {
                ToolResult::suspended(Request::approval(format!("Delete {path}?")))
            };
            async move { reply }
        })
        .build()
        .unwrap();
    (Toolkit::builder().tool(tool).build().unwrap(), calls)
}

async fn halted(toolkit: &Toolkit) -> PendingRun {
    let model = ScriptedModel::new([Reply::tool_call("delete", json!({"path": "/tmp/x"}))]);
    let client = Client::builder(model).model_name("m").build().unwrap();
    let run = client.run("clean up", toolkit).await.unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    PendingRun::try_from(run).unwrap()
}

fn opened_err(sealed: &str, keys: &[SealKey]) -> String {
    PendingRun::open(sealed, keys).unwrap_err().to_string()
}

const CHANGED: &str = "invalid persisted run: the sealed record was changed after it was sealed (its MAC does not verify under key `k1`): refuse it";

#[tokio::test]
async fn a_sealed_record_opens_with_its_key_and_resumes() {
    let (toolkit, calls) = deleter();
    let record = halted(&toolkit).await;
    let sealed = record.seal(&key("k1", 1));
    let envelope: Value = serde_json::from_str(&sealed).unwrap();
    assert_eq!(
        toolnexus_tests::keys_in_order(&sealed),
        ["kid", "alg", "record", "mac"]
    );
    assert_eq!(envelope["kid"], "k1");
    assert_eq!(envelope["alg"], "HS256");
    assert!(
        sealed.contains(&format!(r#","record":{},"mac":"#, record.to_json())),
        "the record, verbatim"
    );
    assert_eq!(envelope["mac"].as_str().unwrap().len(), 64);

    let opened = PendingRun::open(&sealed, &key("k1", 1)).unwrap();
    assert_eq!(opened, record);
    let answer = opened.pending().accept(true);
    let client = Client::builder(ScriptedModel::new([Reply::text("done")]))
        .model_name("m")
        .build()
        .unwrap();
    let done = client.resume(opened, answer, &toolkit).await.unwrap();
    assert_eq!(done.tool_calls[0].output, "deleted /tmp/x");
    assert_eq!(calls.get(), 2);
}

#[tokio::test]
async fn any_edit_of_a_sealed_record_is_refused() {
    let (toolkit, _) = deleter();
    let sealed = halted(&toolkit).await.seal(&key("k1", 1));
    let keys = [key("k1", 1)];
    let edits = [
        // the arguments the tool would run with, in both copies
        sealed.replace("/tmp/x", "/etc"),
        // the request the answer must echo
        sealed.replacen("\"id\":\"sus-", "\"id\":\"sus-0", 1),
        // even whitespace: the MAC covers the exact bytes
        sealed.replacen("{\"version\"", "{ \"version\"", 1),
        // the MAC itself
        {
            let mut v: Value = serde_json::from_str(&sealed).unwrap();
            let mac = v["mac"].as_str().unwrap().to_owned();
            let flipped = if mac.starts_with('0') { "1" } else { "0" };
            v["mac"] = json!(format!("{flipped}{}", &mac[1..]));
            v.to_string()
        },
    ];
    for edited in &edits {
        assert_ne!(edited, &sealed);
        assert_eq!(opened_err(edited, &keys), CHANGED, "{edited}");
    }
    // sealed with another secret under the same id
    let forged = halted(&toolkit).await.seal(&key("k1", 9));
    assert_eq!(opened_err(&forged, &keys), CHANGED);
    // a MAC that is not hex
    let mut v: Value = serde_json::from_str(&sealed).unwrap();
    v["mac"] = json!("zz");
    assert_eq!(opened_err(&v.to_string(), &keys), CHANGED);
    // another algorithm
    let other = sealed.replacen("\"HS256\"", "\"none\"", 1);
    assert_eq!(
        opened_err(&other, &keys),
        "invalid persisted run: `alg` is \"none\" but sealed records use \"HS256\""
    );
}

#[tokio::test]
async fn keys_rotate_through_the_key_id() {
    let (toolkit, _) = deleter();
    let record = halted(&toolkit).await;
    let (old, new) = (key("2025-12", 1), key("2026-01", 2));
    let by_old = record.seal(&old);
    let by_new = record.seal(&new);
    // during the rotation both keys open
    let both = [new.clone(), old.clone()];
    assert_eq!(PendingRun::open(&by_old, &both).unwrap(), record);
    assert_eq!(PendingRun::open(&by_new, &both).unwrap(), record);
    assert_eq!(
        PendingRun::open(&by_new, &vec![new.clone()]).unwrap(),
        record
    );
    // once the old key is retired, its records are refused, saying which key they need
    assert_eq!(
        PendingRun::open(&by_old, &new).unwrap_err().to_string(),
        "invalid persisted run: the record was sealed with key `2025-12`, which is not in the key set (it has `2026-01`): add that key, or the record can no longer be opened"
    );
    // changing the key id makes the MAC fail too: the id is covered
    let relabelled = by_old.replacen("\"kid\":\"2025-12\"", "\"kid\":\"2026-01\"", 1);
    assert_eq!(
        opened_err(&relabelled, &both),
        "invalid persisted run: the sealed record was changed after it was sealed (its MAC does not verify under key `2026-01`): refuse it"
    );
}

#[tokio::test]
async fn sealed_and_plain_records_are_not_mixed_up() {
    let (toolkit, _) = deleter();
    let record = halted(&toolkit).await;
    let sealed = record.seal(&key("k1", 1));
    assert_eq!(
        PendingRun::from_json(&sealed).unwrap_err().to_string(),
        "invalid persisted run: this record is sealed: read it with `PendingRun::open` and the key set"
    );
    let plain = PendingRun::open(&record.to_json(), &key("k1", 1))
        .unwrap_err()
        .to_string();
    assert!(
        plain.starts_with("invalid persisted run: not a sealed record (`{\"kid\",\"alg\",\"record\",\"mac\"}` from `PendingRun::seal`): unknown field `version`"),
        "{plain}"
    );
}

#[test]
fn seal_keys_check_their_id_and_length_and_never_show_the_secret() {
    assert_eq!(
        SealKey::new("", [0u8; 32]).unwrap_err().to_string(),
        "invalid seal key id \"\": use 1 to 64 characters of [A-Za-z0-9._-]"
    );
    assert_eq!(
        SealKey::new("a b", [0u8; 32]).unwrap_err().to_string(),
        "invalid seal key id \"a b\": use 1 to 64 characters of [A-Za-z0-9._-]"
    );
    assert_eq!(
        SealKey::new("k", [0u8; 31]).unwrap_err().to_string(),
        "a seal key needs a secret of at least 32 bytes, got 31"
    );
    let key = SealKey::new("k", *b"0123456789abcdef0123456789abcdef").unwrap();
    let shown = format!("{key:?}");
    assert_eq!(shown, "SealKey { id: \"k\", .. }");
}
