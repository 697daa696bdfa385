//! The agent's name (`ClientBuilder::agent_name`): kept in the record of every run that
//! halts, through a store and a restart, bound by the fingerprint (an edited name is refused,
//! nothing runs), kept by a resume in a client of another name (or none); a record without a name reads
//! as before (its fingerprint: the unit vector in `run/fingerprint.rs`).

use std::sync::Arc;

use serde_json::{Value, json};
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
};
use toolnexus_tests::Calls;

/// `book` asks for an approval, then books (counted).
fn booker() -> (Toolkit, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let tool = FnTool::builder("book")
        .description("Books an expense after an approval.")
        .handler(move |args, ctx| {
            let amount = args["amount"].as_i64().unwrap_or_default();
            let reply = if ctx.accepted().is_some() {
                seen.bump();
                ToolResult::success(format!("booked {amount}"))
            } else {
                ToolResult::suspended(Request::approval(format!("Book {amount} EUR?")))
            };
            async move { reply }
        })
        .build()
        .unwrap();
    (Toolkit::builder().tool(tool).build().unwrap(), calls)
}

/// A model that books 10, then 20, then says done.
fn model() -> ScriptedModel {
    ScriptedModel::new([
        Reply::tool_call("book", json!({"amount": 10})),
        Reply::tool_call("book", json!({"amount": 20})),
        Reply::text("done"),
    ])
}

fn client(name: Option<&str>, model: ScriptedModel) -> Client {
    let b = Client::builder(model).model_name("m");
    match name {
        Some(name) => b.agent_name(name),
        None => b,
    }
    .build()
    .unwrap()
}

async fn halted(name: Option<&str>, toolkit: &Toolkit) -> PendingRun {
    let run = client(name, model())
        .run("book both", toolkit)
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    PendingRun::try_from(run).unwrap()
}

fn temp_db(tag: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "toolnexus-agent-{tag}-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

#[tokio::test]
async fn the_name_survives_a_restart_and_a_resume_by_another_client() {
    let (toolkit, calls) = booker();
    let path = temp_db("restart");
    let store = SqliteStore::open(&path).await.unwrap();
    let request = {
        let record = halted(Some("expense-bot"), &toolkit).await;
        assert_eq!(record.agent(), Some("expense-bot"));
        let json: Value = serde_json::from_str(&record.to_json()).unwrap();
        assert_eq!(json["halted"]["agent"], "expense-bot");
        let request = record.pending().clone();
        store.park(record).await.unwrap();
        request
    };
    drop(store);

    // another process: the store opened again, a worker client with no name (or another)
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let stored = store.get_by_request(&request.id).await.unwrap().unwrap();
    assert_eq!(stored.record.agent(), Some("expense-bot"));
    let claim = store.claim(&request.accept(true), "worker").await.unwrap();
    let worker = client(
        Some("a-worker"),
        ScriptedModel::new([Reply::tool_call("book", json!({"amount": 20}))]),
    );
    let again = worker
        .resume_claim(store.as_ref(), &claim, &toolkit)
        .await
        .unwrap();
    assert_eq!(again.status, RunStatus::Pending);
    assert_eq!(calls.get(), 1, "the first booking ran");
    let parked = store.get(&claim.run_id).await.unwrap().unwrap();
    assert_ne!(parked.record.pending().id, request.id);
    assert_eq!(
        parked.record.agent(),
        Some("expense-bot"),
        "the run keeps the name it started with"
    );
    drop(store);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn an_edited_name_is_refused_and_nothing_runs() {
    let (toolkit, calls) = booker();
    let record = halted(Some("expense-bot"), &toolkit).await;
    let json: Value = serde_json::from_str(&record.to_json()).unwrap();
    let fingerprint = json["halted"]["fingerprint"].as_str().unwrap().to_owned();

    let mut renamed = json.clone();
    renamed["halted"]["agent"] = json!("payroll-bot");
    let err = PendingRun::from_json(&renamed.to_string())
        .unwrap_err()
        .to_string();
    let head = format!(
        "invalid persisted run: `halted.fingerprint` is \"{fingerprint}\" but the halted call (\"book\" with `messages[1].tool_calls[0].arguments` {{\"amount\":10}} and `toolCalls[0].args` {{\"amount\":10}}, in run {} asking request {} for agent \"payroll-bot\") hashes to \"",
        json["runId"], json["pending"]["id"]
    );
    assert!(err.starts_with(&head), "{err}");
    assert!(
        err.ends_with(
            "\": the call, its run id, its request id, its agent's name, its conversation or its principal changed after its request was made"
        ),
        "{err}"
    );

    // the name taken out: refused too (the fingerprint bound it)
    let mut unnamed = json.clone();
    unnamed["halted"].as_object_mut().unwrap().remove("agent");
    let err = PendingRun::from_json(&unnamed.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            ": the call, its run id or its request id changed after its request was made"
        ),
        "{err}"
    );

    // and the resume of the edited record runs nothing
    let forged = PendingRun::from_json(&json.to_string()).unwrap();
    assert_eq!(forged.agent(), Some("expense-bot"));
    assert_eq!(calls.get(), 0);
}

#[tokio::test]
async fn a_record_without_a_name_reads_as_before_and_keeps_none() {
    let (toolkit, calls) = booker();
    let record = halted(None, &toolkit).await;
    assert_eq!(record.agent(), None);
    let json: Value = serde_json::from_str(&record.to_json()).unwrap();
    assert!(
        json["halted"].get("agent").is_none(),
        "no name, no member: {json}"
    );
    // an empty name is no name
    let blank = halted(Some("  "), &toolkit).await;
    assert_eq!(blank.agent(), None);

    let answer = record.pending().accept(true);
    let worker = client(
        Some("expense-bot"),
        ScriptedModel::new([Reply::tool_call("book", json!({"amount": 20}))]),
    );
    let again = worker.resume(record, answer, &toolkit).await.unwrap();
    assert_eq!(calls.get(), 1);
    let next = PendingRun::try_from(again).unwrap();
    assert_eq!(
        next.agent(),
        None,
        "a run keeps the name it started with, here none"
    );
}

#[tokio::test]
async fn a_conversation_turn_keeps_its_conversation_id_bound_in_the_record() {
    let (toolkit, calls) = booker();
    let store: Arc<dyn RunStore> = Arc::new(toolnexus::store::MemoryStore::new());
    let asker = Client::builder(model())
        .model_name("m")
        .agent_name("expense-bot")
        .store(store.clone())
        .build()
        .unwrap();
    let halted = asker.ask("c-42", "book both", &toolkit).await.unwrap();
    let request = halted.pending.expect("the turn halts");
    let stored = store.get_by_request(&request.id).await.unwrap().unwrap();
    assert_eq!(stored.record.conversation(), Some("c-42"));
    assert_eq!(stored.record.agent(), Some("expense-bot"));

    // a run of its own has none
    let alone = halted_alone(&toolkit).await;
    assert_eq!(alone.conversation(), None);

    let json: Value = serde_json::from_str(&stored.record.to_json()).unwrap();
    assert_eq!(json["halted"]["conversation"], "c-42");
    let mut moved = json.clone();
    moved["halted"]["conversation"] = json!("c-43");
    let err = PendingRun::from_json(&moved.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(" for agent \"expense-bot\" in conversation \"c-43\") hashes to \""),
        "{err}"
    );
    assert!(
        err.ends_with(
            ": the call, its run id, its request id, its agent's name, its conversation or its principal changed after its request was made"
        ),
        "{err}"
    );
    assert_eq!(calls.get(), 0);
}

async fn halted_alone(toolkit: &Toolkit) -> PendingRun {
    halted(Some("expense-bot"), toolkit).await
}

/// Three approvals in one turn, resumed by a client of another name: the second surfaces in a
/// record that loads (the third still waiting in it), under the run's own name (or none).
#[tokio::test]
async fn a_second_suspension_of_the_turn_surfaces_under_the_runs_own_name() {
    for name in [Some("expense-bot"), None] {
        let (toolkit, calls) = booker();
        let both = ScriptedModel::new([Reply::tool_call("book", json!({"amount": 10}))
            .with_call("book", json!({"amount": 20}))
            .with_call("book", json!({"amount": 30}))]);
        let run = client(name, both).run("book both", &toolkit).await.unwrap();
        let record = PendingRun::try_from(run).unwrap();
        assert_eq!(record.agent(), name);
        let answer = record.pending().accept(true);
        let other = client(Some("a-worker"), ScriptedModel::new([Reply::text("done")]));
        let again = other.resume(record, answer, &toolkit).await.unwrap();
        assert_eq!(
            again.status,
            RunStatus::Pending,
            "the second approval surfaces"
        );
        assert_eq!(calls.get(), 1);
        let next = PendingRun::from_json(&PendingRun::try_from(again).unwrap().to_json())
            .expect("the record loads: its fingerprints agree");
        assert_eq!(next.agent(), name);
        assert_eq!(next.pending().prompt, "Book 20 EUR?");
    }
}
