//! CONTRACT section 4: a parked run is bound to what the human saw. A record whose halted call
//! (tool name, arguments) or pending request was changed, or whose transcript is unbalanced, is
//! refused on load, naming the field and both values; nothing runs.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
};

/// `delete` asks `Delete <path>?` and, once approved, records the path it deleted; `wipe` is
/// another tool an attacker would like to run with the same approval.
fn toolkit() -> (Toolkit, Arc<Mutex<Vec<String>>>) {
    let deleted = Arc::new(Mutex::new(Vec::new()));
    let mk = |name: &'static str| {
        let deleted = deleted.clone();
        FnTool::builder(name)
            .description("Deletes a path after an approval.")
            .handler(move |args, ctx| {
                let path = args["path"].as_str().unwrap_or_default().to_owned();
                let reply = if ctx.accepted().is_some() {
                    deleted.lock().unwrap().push(format!("{name} {path}"));
                    ToolResult::success(format!("deleted {path}"))
                } else {
                    ToolResult::suspended(Request::approval(format!("Delete {path}?")))
                };
                async move { reply }
            })
            .build()
            .unwrap()
    };
    let toolkit = Toolkit::builder()
        .tool(echo_tool())
        .tool(mk("delete"))
        .tool(mk("wipe"))
        .build()
        .unwrap();
    (toolkit, deleted)
}

fn echo_tool() -> FnTool {
    FnTool::builder("echo")
        .description("Echoes.")
        .handler(|args, _| async move { args["text"].as_str().unwrap_or_default().to_owned() })
        .build()
        .unwrap()
}

/// Halts on `delete {"path": "/tmp/x"}` after a first turn that ran `echo`; returns the
/// record as a JSON value.
async fn parked(toolkit: &Toolkit) -> Value {
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "hi"})),
        Reply::tool_call("delete", json!({"path": "/tmp/x"})),
    ]);
    let client = Client::builder(model)
        .model_name("m")
        .system("sys")
        .build()
        .unwrap();
    let halted = client.run("clean up", toolkit).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    serde_json::from_str(&PendingRun::try_from(&halted).unwrap().to_json()).unwrap()
}

fn refused(record: &Value) -> String {
    PendingRun::from_json(&record.to_string())
        .unwrap_err()
        .to_string()
}

/// Resumes `record` with an approval; what the tools deleted.
async fn approve(record: &str, toolkit: &Toolkit, deleted: &Mutex<Vec<String>>) -> Vec<String> {
    let record = PendingRun::from_json(record).unwrap();
    let answer = record.pending().accept(true);
    let client = Client::builder(ScriptedModel::new([Reply::text("done")]))
        .model_name("m")
        .build()
        .unwrap();
    let done = client.resume(record, answer, toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    deleted.lock().unwrap().clone()
}

/// `message` is the fingerprint refusal for the halted `delete` call with these argument copies
/// (the run id and the request id as `record` holds them).
fn assert_fingerprint_refusal(message: &str, record: &Value, arguments: &str, args: &str) {
    let head = format!(
        "invalid persisted run: `halted.fingerprint` is \"{}\" but the halted call (\"{}\" with `messages[4].tool_calls[0].arguments` {arguments} and `toolCalls[1].args` {args}, in run {} asking request {}) hashes to \"",
        record["halted"]["fingerprint"].as_str().unwrap(),
        record["messages"][4]["tool_calls"][0]["name"]
            .as_str()
            .unwrap(),
        record["runId"],
        record["pending"]["id"],
    );
    let rest = message
        .strip_prefix(&head)
        .unwrap_or_else(|| panic!("{message}"));
    let (hash, tail) = rest.split_at(64);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()), "{message}");
    assert_ne!(hash, record["halted"]["fingerprint"].as_str().unwrap());
    assert_eq!(
        tail,
        "\": the call, its run id or its request id changed after its request was made"
    );
}

#[tokio::test]
async fn an_untouched_record_resumes_the_call_the_human_approved() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;
    assert_eq!(record["pending"]["prompt"], "Delete /tmp/x?");
    let done = approve(&record.to_string(), &toolkit, &deleted).await;
    assert_eq!(done, ["delete /tmp/x"]);
}

#[tokio::test]
async fn forged_arguments_are_refused_on_load_and_nothing_runs() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;

    // the arguments the tool would run with
    let mut forged = record.clone();
    forged["toolCalls"][1]["args"]["path"] = json!("/etc");
    assert_fingerprint_refusal(
        &refused(&forged),
        &record,
        r#"{"path":"/tmp/x"}"#,
        r#"{"path":"/etc"}"#,
    );

    // the arguments as the transcript shows them
    let mut forged = record.clone();
    forged["messages"][4]["tool_calls"][0]["arguments"]["path"] = json!("/etc");
    assert_fingerprint_refusal(
        &refused(&forged),
        &record,
        r#"{"path":"/etc"}"#,
        r#"{"path":"/tmp/x"}"#,
    );

    // both copies, consistently: the fingerprint still tells
    let mut forged = record.clone();
    forged["toolCalls"][1]["args"]["path"] = json!("/etc");
    forged["messages"][4]["tool_calls"][0]["arguments"]["path"] = json!("/etc");
    assert_fingerprint_refusal(
        &refused(&forged),
        &record,
        r#"{"path":"/etc"}"#,
        r#"{"path":"/etc"}"#,
    );

    // a second copy of the arguments is not part of a record any more
    let mut forged = record.clone();
    forged["halted"]["args"] = json!({"path": "/etc"});
    assert_eq!(
        refused(&forged),
        "invalid persisted run: not a pending-run record: at `halted.args`: unknown field `args`, expected one of `callIndex`, `fingerprint`, `deferred`, `agent`, `conversation`, `principal`, `together`"
    );
    assert!(deleted.lock().unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn a_changed_tool_name_is_refused_on_load() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;

    let mut forged = record.clone();
    forged["messages"][4]["tool_calls"][0]["name"] = json!("wipe");
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `toolCalls[1].name` is \"delete\" but the transcript's call it records is \"wipe\""
    );

    let mut forged = record.clone();
    forged["messages"][4]["tool_calls"][0]["name"] = json!("wipe");
    forged["toolCalls"][1]["name"] = json!("wipe");
    let mut shown = record.clone();
    shown["messages"][4]["tool_calls"][0]["name"] = json!("wipe");
    assert_fingerprint_refusal(
        &refused(&forged),
        &shown,
        r#"{"path":"/tmp/x"}"#,
        r#"{"path":"/tmp/x"}"#,
    );
    assert!(deleted.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_changed_pending_request_is_refused_on_load() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;
    let id = record["pending"]["id"].as_str().unwrap().to_owned();

    let mut forged = record.clone();
    forged["pending"]["id"] = json!("sus-forged");
    assert_eq!(
        refused(&forged),
        format!(
            "invalid persisted run: `pending.id` is \"sus-forged\" but the halted call's own request (`toolCalls[1].metadata.pending.id`) is \"{id}\""
        )
    );

    let mut forged = record.clone();
    forged["pending"]["kind"] = json!("input");
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `pending.kind` is \"input\" but the halted call's own request (`toolCalls[1].metadata.pending.kind`) is \"approval\""
    );

    let mut forged = record.clone();
    forged["pending"]["prompt"] = json!("Delete nothing?");
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[5]` (the halted call's result) is [\"Delete /tmp/x?\",true] but the pending request's prompt is \"Delete nothing?\" (isError true)"
    );
    assert!(deleted.lock().unwrap().is_empty());
}

/// The attack: the record's run id is rewritten (a record moved to another run's row, or a
/// run given a new id so that its tools' idempotency keys change and a call runs twice). The
/// fingerprint binds the run id: refused, and nothing runs.
#[tokio::test]
async fn a_record_whose_run_id_was_changed_is_refused_on_load() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;
    let mut forged = record.clone();
    forged["runId"] = json!("run-forged");
    let mut shown = record.clone();
    shown["runId"] = json!("run-forged");
    assert_fingerprint_refusal(
        &refused(&forged),
        &shown,
        r#"{"path":"/tmp/x"}"#,
        r#"{"path":"/tmp/x"}"#,
    );
    assert!(deleted.lock().unwrap().is_empty(), "nothing ran");
}

/// The attack: the record's request id is rewritten everywhere it appears, consistently (so
/// that an answer given to another request resumes this call). The fingerprint binds the
/// request id: refused, and nothing runs.
#[tokio::test]
async fn a_record_whose_request_id_was_changed_is_refused_on_load() {
    let (toolkit, deleted) = toolkit();
    let record = parked(&toolkit).await;
    let mut forged = record.clone();
    forged["pending"]["id"] = json!("sus-forged");
    forged["toolCalls"][1]["metadata"]["pending"]["id"] = json!("sus-forged");
    assert_fingerprint_refusal(
        &refused(&forged),
        &forged,
        r#"{"path":"/tmp/x"}"#,
        r#"{"path":"/tmp/x"}"#,
    );
    assert!(deleted.lock().unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn an_unbalanced_transcript_is_refused_on_load() {
    let (toolkit, _) = toolkit();
    let record = parked(&toolkit).await;
    assert_eq!(record["messages"][3]["tool_call_id"], "call_1_0");

    // an earlier turn's result names a call that does not exist
    let mut forged = record.clone();
    forged["messages"][3]["tool_call_id"] = json!("call_1_9");
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[3].tool_call_id` is \"call_1_9\" but the calls of `messages[2]` are [\"call_1_0\"]: it names no call of its turn"
    );

    // an earlier turn's result was removed
    let mut forged = record.clone();
    forged["messages"].as_array_mut().unwrap().remove(3);
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[2].tool_calls[0]` (\"call_1_0\" of \"echo\") has no result: the turn has 0 results for 1 calls"
    );

    // an earlier turn's result given twice
    let mut forged = record.clone();
    let twice = forged["messages"][3].clone();
    forged["messages"].as_array_mut().unwrap().insert(3, twice);
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[4].tool_call_id` is \"call_1_0\" but the calls of `messages[2]` are [\"call_1_0\"]: that call has a result already"
    );

    // a result with no call before it
    let mut forged = record.clone();
    let stray = forged["messages"][3].clone();
    forged["messages"].as_array_mut().unwrap().insert(1, stray);
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[1].tool_call_id` is \"call_1_0\" but `messages[0]` is not an assistant turn calling tools: the result answers no call"
    );

    // a turn after the halted one
    let mut forged = record.clone();
    forged["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "more"}));
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `messages[6]` (\"user\") follows the halted call's result: the halted turn must end the transcript"
    );

    // indices and counts out of range
    let mut forged = record.clone();
    forged["turns"] = json!(7);
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `turns` is 7 but the transcript holds 2 assistant turns (each model turn of a run adds one, and the halted turn is one)"
    );
    let mut forged = record.clone();
    forged["halted"]["deferred"] = json!([null]);
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `halted.deferred` has 1 entries but the halted turn has 0 calls after the halted one"
    );
    let mut forged = record.clone();
    forged["runId"] = json!("");
    assert_eq!(
        refused(&forged),
        "invalid persisted run: `runId` is empty: every record names its run"
    );
}

#[tokio::test]
async fn a_version_1_record_is_refused_saying_why() {
    let (toolkit, _deleted) = toolkit();
    let record = parked(&toolkit).await;
    // the same run as an earlier release wrote it: no run id, no fingerprint, `halted.args`
    let mut v1 = record.clone();
    let map = v1.as_object_mut().unwrap();
    map.insert("version".to_owned(), json!(1));
    map.remove("runId");
    map["halted"] = json!({"callIndex": 0, "args": {"path": "/tmp/x"}, "deferred": []});
    assert_eq!(
        refused(&v1),
        "invalid persisted run: record version 1 was written by an earlier release and carries no fingerprint of its halted call, so it cannot be checked: start the run again"
    );
    // the fixture a first release wrote, too
    let fixture = include_str!("../../fixtures/pending_run_v1.json");
    assert_eq!(
        PendingRun::from_json(fixture).unwrap_err().to_string(),
        "invalid persisted run: record version 1 was written by an earlier release and carries no fingerprint of its halted call, so it cannot be checked: start the run again"
    );
}

#[tokio::test]
async fn a_suspension_too_deep_to_keep_in_a_record_is_a_failure_the_model_reads() {
    // a record holds values nested at most 128 levels: the loop refuses a result whose
    // metadata goes deeper before the run could park on it, so no record is ever made that
    // would not load again
    let mut deep = json!("leaf");
    for _ in 0..140 {
        deep = Value::Array(vec![deep]);
    }
    let tool = FnTool::builder("trace")
        .description("Suspends with a deep trace in its metadata.")
        .handler(move |_, _| {
            let reply = ToolResult::suspended(Request::input("Go on?"))
                .with_metadata("trace", deep.clone());
            async move { reply }
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(tool).build().unwrap();
    let client = Client::builder(ScriptedModel::new([
        Reply::tool_call("trace", json!({})),
        Reply::text("noted"),
    ]))
    .model_name("m")
    .build()
    .unwrap();
    let run = client.run("go", &toolkit).await.unwrap();
    assert_eq!(run.status, RunStatus::Done);
    assert!(run.pending.is_none());
    assert_eq!(run.text, "noted");
    assert_eq!(run.tool_calls.len(), 1);
    assert!(run.tool_calls[0].is_error);
    assert_eq!(
        run.tool_calls[0].output,
        "the tool's result metadata nests deeper than 128 levels"
    );
    assert!(
        PendingRun::try_from(&run).is_err(),
        "a finished run is no pending record"
    );
}

#[tokio::test]
async fn a_run_whose_record_would_not_load_is_refused_when_the_record_is_made() {
    let (toolkit, _) = toolkit();
    // a history whose assistant turn called a tool that never got its result
    let history = vec![
        toolnexus::Message::user("earlier"),
        toolnexus::Message::assistant_tool_calls(
            None,
            vec![toolnexus::model::ToolCall::new("old", "echo", json!({}))],
        ),
    ];
    let client = Client::builder(ScriptedModel::new([Reply::tool_call(
        "delete",
        json!({"path": "/tmp/x"}),
    )]))
    .model_name("m")
    .build()
    .unwrap();
    let halted = client
        .run_with_history(history, "clean up", &toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(
        PendingRun::try_from(&halted).unwrap_err().to_string(),
        "invalid persisted run: `messages[1].tool_calls[0]` (\"old\" of \"echo\") has no result: the turn has 0 results for 1 calls"
    );
}

#[tokio::test]
async fn a_later_suspended_call_keeps_its_request_and_its_changed_arguments_are_refused() {
    let (toolkit, deleted) = toolkit();
    let model = ScriptedModel::new([Reply::tool_call("delete", json!({"path": "/tmp/x"}))
        .with_call("delete", json!({"path": "/tmp/y"}))]);
    let client = Client::builder(model).model_name("m").build().unwrap();
    let halted = client.run("clean up", &toolkit).await.unwrap();
    let record: Value =
        serde_json::from_str(&PendingRun::try_from(&halted).unwrap().to_json()).unwrap();
    let later = &record["halted"]["deferred"][0];
    assert_eq!(later["args"], json!({"path": "/tmp/y"}));
    assert_eq!(
        later["result"]["metadata"]["pending"]["prompt"],
        "Delete /tmp/y?"
    );
    let later_id = later["result"]["metadata"]["pending"]["id"].clone();

    let mut forged = record.clone();
    forged["halted"]["deferred"][0]["args"]["path"] = json!("/etc");
    let message = refused(&forged);
    assert!(
        message.starts_with(&format!(
            "invalid persisted run: `halted.deferred[0].fingerprint` is \"{}\" but the suspended call (\"delete\" with `messages[1].tool_calls[1].arguments` {{\"path\":\"/tmp/y\"}} and `halted.deferred[0].args` {{\"path\":\"/etc\"}}, in run {} asking request {later_id}) hashes to \"",
            later["fingerprint"].as_str().unwrap(),
            record["runId"],
        )),
        "{message}"
    );
    assert!(
        message.ends_with(
            "\": the call, its run id or its request id changed after its request was made"
        ),
        "{message}"
    );

    // the later call's request id, changed in its result and kept consistent: refused
    let mut forged = record.clone();
    forged["halted"]["deferred"][0]["result"]["metadata"]["pending"]["id"] = json!("sus-forged");
    let message = refused(&forged);
    assert!(
        message.starts_with(&format!(
            "invalid persisted run: `halted.deferred[0].fingerprint` is \"{}\" but the suspended call (\"delete\" with `messages[1].tool_calls[1].arguments` {{\"path\":\"/tmp/y\"}} and `halted.deferred[0].args` {{\"path\":\"/tmp/y\"}}, in run {} asking request \"sus-forged\") hashes to \"",
            later["fingerprint"].as_str().unwrap(),
            record["runId"],
        )),
        "{message}"
    );

    // untouched, the first answer surfaces the second request, the one first made
    let record = PendingRun::from_json(&record.to_string()).unwrap();
    let answer = record.pending().accept(true);
    let next = Client::builder(ScriptedModel::new([Reply::text("done")]))
        .model_name("m")
        .build()
        .unwrap()
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Pending);
    assert_eq!(json!(next.pending.as_ref().unwrap().id), later_id);
    assert_eq!(*deleted.lock().unwrap(), ["delete /tmp/x"]);
}
