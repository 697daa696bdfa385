//! A request that needs two approvals, served over MCP with a run store: the MCP client is
//! one person (the session's principal). Its acceptance before anyone else's is recorded as
//! that person's one vote, the tool does not run, and the result says how many approvals are
//! still needed; when another person approved first (through the store, as the inbox does),
//! the client's acceptance reaches the count and the tool runs once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses};
use serde_json::{Value, json};
use toolnexus::Toolkit;
use toolnexus::store::{MemoryStore, PendingQuery, RunState, RunStore};
use toolnexus_tests::mcp_fixtures::Script;

use super::parked::{in_process, text};

static PAID: AtomicU32 = AtomicU32::new(0);

/// Pays, once two people approved.
#[toolnexus::tool(approval = "Pay {amount} EUR?", approvals = 2)]
fn pay_twice(amount: u32) -> String {
    PAID.fetch_add(1, Ordering::SeqCst);
    format!("paid {amount} EUR")
}

type Session = rmcp::service::RunningService<rmcp::service::RoleClient, Script>;

/// `toolkit` served over MCP with a memory run store, the session's person being `principal`.
async fn served(toolkit: Toolkit, principal: &'static str) -> (Arc<MemoryStore>, Session) {
    let store = Arc::new(MemoryStore::new());
    let service = toolnexus::mcp::McpService::new(toolkit)
        .with_store(store.clone() as Arc<dyn RunStore>)
        .with_principal(move |_| Some(principal.to_owned()));
    (store, in_process(service, Script::new(), true).await)
}

/// Calls `tool` with `args`; the `requestState` of its `input_required`.
async fn call(client: &Session, tool: &str, args: &Value) -> String {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    match client.call_tool_once(params).await.expect("tools/call") {
        CallToolResponse::InputRequired(asked) => asked.request_state.expect("a requestState"),
        other => panic!("input_required: {other:?}"),
    }
}

/// Calls `tool` with `args` again, with `reply` to the request `state` names; the text of
/// its complete result and whether it is an error.
async fn reply(
    client: &Session,
    tool: &str,
    args: &Value,
    state: &str,
    reply: Value,
) -> (String, bool) {
    let mut responses = InputResponses::new();
    responses.insert("toolnexus".to_owned(), reply);
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    params.request_state = Some(state.to_owned());
    params.input_responses = Some(responses);
    match client.call_tool_once(params).await.expect("tools/call") {
        CallToolResponse::Complete(r) => text(&r),
        other => panic!("a complete result: {other:?}"),
    }
}

/// The MCP client's acceptance.
fn accepted() -> Value {
    json!({"action": "accept", "content": {}})
}

/// Calls `pay_twice` as the session's person; the `requestState` of its `input_required`.
async fn ask(client: &Session) -> String {
    call(client, "pay_twice", &json!({"amount": 4000})).await
}

/// Accepts the request `state` names.
async fn accept(client: &Session, state: &str) -> (String, bool) {
    reply(
        client,
        "pay_twice",
        &json!({"amount": 4000}),
        state,
        accepted(),
    )
    .await
}

#[tokio::test]
async fn an_mcp_client_is_one_vote_of_a_two_approval_request() {
    let toolkit = Toolkit::builder().tool(PayTwice).build().unwrap();
    let (store, client) = served(toolkit, "bob").await;

    // bob first: his vote is kept, the tool waits for one more
    let state = ask(&client).await;
    let (said, is_error) = accept(&client, &state).await;
    assert!(is_error, "{said}");
    assert_eq!(
        said,
        "approval recorded (1 of 2): the call waits for 1 more approval from other people before it runs"
    );
    assert_eq!(PAID.load(Ordering::SeqCst), 0);
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(page.runs.len(), 1);
    let run = store.get(&page.runs[0].run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(
        run.votes.iter().map(|v| v.by.as_str()).collect::<Vec<_>>(),
        ["bob"]
    );
    // bob again over MCP: still his one vote
    let (said, _) = accept(&client, &state).await;
    assert!(said.starts_with("approval recorded (1 of 2)"), "{said}");
    assert_eq!(
        store
            .get(&run.info.run_id)
            .await
            .unwrap()
            .unwrap()
            .votes
            .len(),
        1
    );

    // carol first (through the store), then bob over MCP: his vote reaches the count and the
    // tool runs once, in this call
    let state = ask(&client).await;
    let waiting = store.list_pending(&PendingQuery::new()).await.unwrap();
    let second = waiting
        .runs
        .iter()
        .find(|r| r.run_id != run.info.run_id)
        .expect("the second call parked");
    let request = store.request(&second.request_id).await.unwrap().unwrap();
    assert_eq!(request.required_approvals(), 2);
    let info = store
        .submit(&request.accept(json!({})), "carol")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Parked);
    assert_eq!(
        accept(&client, &state).await,
        ("paid 4000 EUR".to_owned(), false)
    );
    assert_eq!(PAID.load(Ordering::SeqCst), 1);
    let done = store.get(&second.run_id).await.unwrap().unwrap();
    assert_eq!(done.info.state, RunState::Finished);
    assert_eq!(
        done.votes.iter().map(|v| v.by.as_str()).collect::<Vec<_>>(),
        ["carol", "bob"]
    );
    let _ = client.cancel().await;
}

static PAID_BY_FINANCE: AtomicU32 = AtomicU32::new(0);

/// Pays, once finance approved.
#[toolnexus::tool(approval = "Pay {amount} EUR?", approvers = "finance")]
fn pay_by_finance(amount: u32) -> String {
    PAID_BY_FINANCE.fetch_add(1, Ordering::SeqCst);
    format!("paid {amount} EUR")
}

/// An MCP client's groups are unknown: its acceptance of a request for the finance group is
/// refused with the group named, nothing is recorded, the tool does not run, and the request
/// stays for finance to answer through the store.
#[tokio::test]
async fn an_mcp_client_cannot_answer_a_request_for_a_group() {
    let toolkit = Toolkit::builder().tool(PayByFinance).build().unwrap();
    let (store, client) = served(toolkit, "bob").await;
    let args = json!({"amount": 4000});
    let state = call(&client, "pay_by_finance", &args).await;
    let (said, is_error) = reply(&client, "pay_by_finance", &args, &state, accepted()).await;
    assert!(is_error, "{said}");
    assert!(
        said.contains("may be answered by group `finance` only"),
        "{said}"
    );
    assert_eq!(PAID_BY_FINANCE.load(Ordering::SeqCst), 0);
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(page.runs.len(), 1);
    let run = store.get(&page.runs[0].run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(run.info.answered_by(), None);
    let _ = client.cancel().await;
}

static DEPLOYED: AtomicU32 = AtomicU32::new(0);

/// Deploys, once someone other than the requester approved.
#[toolnexus::tool(approval = "Deploy build {build}?", not_by_requester)]
fn deploy(build: u32) -> String {
    DEPLOYED.fetch_add(1, Ordering::SeqCst);
    format!("deployed build {build}")
}

/// Attack: the session's principal (alice) calls a tool whose approval refuses its requester,
/// then accepts it herself over MCP. The parked run is hers, so her acceptance is refused
/// (naming the rule), nothing is recorded and the tool does not run; bob's answer through the
/// store is taken.
#[tokio::test]
async fn the_session_that_asked_cannot_approve_its_own_call() {
    let toolkit = Toolkit::builder().tool(Deploy).build().unwrap();
    let (store, client) = served(toolkit, "alice").await;
    let args = json!({"build": 7});
    let state = call(&client, "deploy", &args).await;
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    let run = store.get(&page.runs[0].run_id).await.unwrap().unwrap();
    assert_eq!(run.record.principal(), Some("alice"), "the run is alice's");

    let (said, is_error) = reply(&client, "deploy", &args, &state, accepted()).await;
    assert!(is_error, "{said}");
    assert!(said.contains("notByRequester"), "{said}");
    assert_eq!(DEPLOYED.load(Ordering::SeqCst), 0);
    let run = store.get(&run.info.run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(run.info.answered_by(), None);
    let request = run.record.pending().clone();
    let info = store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    let _ = client.cancel().await;
}

static PAID_LIVE: AtomicU32 = AtomicU32::new(0);

/// Pays, once two people approved (served without a run store).
#[toolnexus::tool(approval = "Pay {amount} EUR?", approvals = 2)]
fn pay_two_live(amount: u32) -> String {
    PAID_LIVE.fetch_add(1, Ordering::SeqCst);
    format!("paid {amount} EUR")
}

/// Attack: served without a run store, nothing can count votes, check the requester or know
/// a client's groups. The client's acceptance of a request that needs two approvers is
/// refused (the result says why), and the tool does not run; a decline still declines.
#[tokio::test]
async fn without_a_store_an_mcp_client_cannot_approve_a_governed_request() {
    let toolkit = Toolkit::builder().tool(PayTwoLive).build().unwrap();
    let service = toolnexus::mcp::McpService::new(toolkit);
    let client = in_process(service, Script::new(), true).await;
    let args = json!({"amount": 4000});
    for (answer, refused) in [(accepted(), true), (json!({"action": "decline"}), false)] {
        let state = call(&client, "pay_two_live", &args).await;
        let (said, is_error) = reply(&client, "pay_two_live", &args, &state, answer).await;
        assert!(is_error, "{said}");
        if refused {
            assert!(said.contains("2 approvers"), "{said}");
            assert!(said.contains("run store"), "{said}");
        } else {
            assert_eq!(said, "declined/expired: Pay 4000 EUR?");
        }
    }
    assert_eq!(PAID_LIVE.load(Ordering::SeqCst), 0);
    let _ = client.cancel().await;
}
