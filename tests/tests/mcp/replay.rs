//! Where a `requestState` meets a run that moved on: a parked call's `requestState` names the
//! request it was made for. Replayed after the run went on to another request (here: the
//! call was cut by a crash and a worker parked it on `reconcile`), it must be refused and
//! answer nothing; the new request waits for its own answer, and the tool never runs twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses};
use serde_json::{Value, json};
use toolnexus::store::{Claim, MemoryStore, RunState, RunStore};
use toolnexus::{Client, FnModel, FnTool, Reply, Request, ToolResult, Toolkit};
use toolnexus_tests::mcp_fixtures::Script;

use super::parked::{in_process, text};

/// `pay`'s retry of `state` with `reply` under the request key.
fn retry(state: &str, reply: Value) -> CallToolRequestParams {
    let mut responses = InputResponses::new();
    responses.insert("toolnexus".to_owned(), reply);
    let mut params = CallToolRequestParams::new("pay");
    params.request_state = Some(state.to_owned());
    params.input_responses = Some(responses);
    params
}

/// `pay` (not idempotent): asks `Pay 40 EUR?`; its approved run is cut inside (it counts
/// itself in the first value, tells the second, and never returns), as a serving process dies
/// there.
pub(crate) fn stalling_pay() -> (Toolkit, Arc<AtomicU32>, Arc<tokio::sync::Notify>) {
    let runs = Arc::new(AtomicU32::new(0));
    let inside = Arc::new(tokio::sync::Notify::new());
    let pay = {
        let (runs, inside) = (Arc::clone(&runs), Arc::clone(&inside));
        FnTool::builder("pay")
            .description("Pays.")
            .handler(move |_, ctx| {
                let (runs, inside) = (Arc::clone(&runs), Arc::clone(&inside));
                async move {
                    if ctx.answer().is_none() {
                        return ToolResult::suspended(Request::approval("Pay 40 EUR?"));
                    }
                    runs.fetch_add(1, Ordering::SeqCst);
                    // the serving process's resume dies here
                    inside.notify_one();
                    std::future::pending::<ToolResult>().await
                }
            })
            .build()
            .unwrap()
    };
    (Toolkit::builder().tool(pay).build().unwrap(), runs, inside)
}

/// Once the approved call is inside `pay` (it told `inside`), waits for the serving process's
/// lease of `lease` to lapse, then a worker takes the run over from its started marker and
/// resumes it: it parks on `reconcile`. The worker's claim and that `reconcile` request.
pub(crate) async fn taken_over_to_reconcile(
    store: &dyn RunStore,
    toolkit: &Toolkit,
    inside: &tokio::sync::Notify,
    lease: Duration,
) -> (Claim, Request) {
    tokio::time::timeout(Duration::from_secs(10), inside.notified())
        .await
        .expect("the approved call is inside pay");
    tokio::time::sleep(lease + Duration::from_millis(150)).await;
    let taken = store.take_over("worker-b").await.unwrap().expect("lapsed");
    let worker = Client::builder(FnModel::new(|_| async { Reply::text("") }))
        .model_name("mcp")
        .build()
        .unwrap();
    let parked = worker.resume_claim(store, &taken, toolkit).await.unwrap();
    let reconcile = parked.pending.as_deref().expect("parked").clone();
    assert_eq!(reconcile.kind, "reconcile");
    (taken, reconcile)
}

/// Attack: the client's retry of round one (approve `Pay 40 EUR?`) claims the run and `pay`
/// is cut inside (its serving resume stalls, its lease lapses); a worker takes it over and
/// parks it on `reconcile`. The client then sends round one again, byte for byte: refused
/// (its request was answered), the `reconcile` request still waits unanswered, `pay` ran once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_replayed_after_the_run_moved_on_answers_nothing() {
    let lease = Duration::from_millis(200);
    let (toolkit, runs, inside) = stalling_pay();
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new().with_lease(lease));
    let service = toolnexus::mcp::McpService::new(toolkit.clone()).with_store(Arc::clone(&store));
    let client = Arc::new(in_process(service, Script::new(), true).await);

    let state = match client
        .call_tool_once(CallToolRequestParams::new("pay"))
        .await
        .expect("tools/call")
    {
        CallToolResponse::InputRequired(asked) => asked.request_state.expect("a requestState"),
        other => panic!("input_required: {other:?}"),
    };
    let round_one = json!({"action": "accept", "content": {}});
    let cut = {
        let (client, params) = (Arc::clone(&client), retry(&state, round_one.clone()));
        tokio::spawn(async move { client.call_tool_once(params).await })
    };
    let (taken, reconcile) =
        taken_over_to_reconcile(store.as_ref(), &toolkit, &inside, lease).await;

    let replayed = client
        .call_tool_once(retry(&state, round_one))
        .await
        .expect("tools/call");
    let CallToolResponse::Complete(result) = replayed else {
        panic!("a complete result: {replayed:?}");
    };
    let (said, is_error) = text(&result);
    assert!(is_error, "{said}");
    let run = store.get(&taken.run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked, "{said}");
    assert_eq!(run.info.request_id, reconcile.id);
    assert_eq!(run.info.answered_by(), None, "{said}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "pay ran once");
    cut.abort();
}
