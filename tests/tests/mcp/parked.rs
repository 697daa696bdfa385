//! Issue 26, served and durable: a toolkit served with a run store parks a suspended call in
//! it, and the `input_required` result's `requestState` names the parked run, so the answer
//! resumes it in another server process on the same SQLite file, once.

use std::time::Duration;

use rmcp::ClientServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, InputResponses,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use toolnexus_tests::mcp_fixtures::Script;

const KEY: &str = "a test key for sealing requestState, 32+ bytes long";

/// A server process on `file`, and a 2026-07-28 client session with it.
async fn process(file: &std::path::Path) -> (RunningService<RoleClient, Script>, u32) {
    process_with(file, Script::new()).await
}

/// A server process on `file`, and a 2026-07-28 session of `script` with it.
pub(crate) async fn process_with(
    file: &std::path::Path,
    script: Script,
) -> (RunningService<RoleClient, Script>, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_peer"));
    cmd.arg("toolnexus-store")
        .arg(file)
        .env("TOOLNEXUS_MCP_KEY", KEY);
    let child = TokioChildProcess::new(cmd).expect("mcp_peer starts");
    let pid = child.id().expect("a process id");
    let client = script
        .serve_with_lifecycle(
            child,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("client starts");
    (client, pid)
}

pub(crate) fn text(r: &CallToolResult) -> (String, bool) {
    let t = r.content[0].as_text().expect("a text block").text.clone();
    (t, r.is_error.unwrap_or(false))
}

async fn retry(
    client: &RunningService<RoleClient, Script>,
    state: &str,
    reply: Value,
) -> (String, bool) {
    let mut responses = InputResponses::new();
    responses.insert("toolnexus".to_owned(), reply);
    let mut params = CallToolRequestParams::new("book_trip");
    params.request_state = Some(state.to_owned());
    params.input_responses = Some(responses);
    match client.call_tool_once(params).await.expect("tools/call") {
        CallToolResponse::Complete(r) => text(&r),
        other => panic!("a complete result: {other:?}"),
    }
}

#[tokio::test]
async fn a_parked_call_survives_a_server_restart_and_resumes_once() {
    let dir = std::env::temp_dir().join(format!("toolnexus-mcp-parked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("runs.sqlite");

    // process 1: the call suspends; the run is parked in the file
    let (client, pid) = process(&file).await;
    let asked = client
        .call_tool_once(CallToolRequestParams::new("book_trip"))
        .await
        .expect("tools/call");
    let CallToolResponse::InputRequired(asked) = asked else {
        panic!("input_required: {asked:?}");
    };
    let state = asked.request_state.clone().expect("a requestState");
    let requests = asked.input_requests.expect("an input request");
    let Some(InputRequest::Elicitation(e)) = requests.get("toolnexus") else {
        panic!("an elicitation: {requests:?}");
    };
    let wire = serde_json::to_value(e).expect("serializes");
    assert_eq!(wire["params"]["message"], "Which city?");
    assert_eq!(wire["params"]["_meta"]["toolnexus/pending"]["id"], "r-city");

    // the server is killed while the request waits for its answer
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let _ = client.cancel().await;

    // process 2 on the same file: the retry with the answer resumes the parked run
    let (client, _) = process(&file).await;
    let accept = json!({"action": "accept", "content": {"city": "Oslo"}});
    assert_eq!(
        retry(&client, &state, accept.clone()).await,
        ("booked to Oslo".to_owned(), false)
    );
    // once: the same state and answer again are refused
    let (again, is_error) = retry(&client, &state, accept).await;
    assert!(is_error);
    assert!(
        again.starts_with("this answer was not used: request `")
            && again.contains("was already answered (the run is finished now)"),
        "{again}"
    );
    // a state for another call is refused before anything is claimed
    let mut params = CallToolRequestParams::new("take_note");
    params.request_state = Some(state.clone());
    let CallToolResponse::Complete(other) = client.call_tool_once(params).await.expect("call")
    else {
        panic!("complete");
    };
    assert_eq!(
        text(&other),
        (
            "invalid requestState: it belongs to another tool call".to_owned(),
            true
        )
    );
    let _ = client.cancel().await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An in-process server with a `MemoryStore`, and a client session (`rounds`: 2026-07-28).
pub(crate) async fn in_process(
    service: toolnexus::mcp::McpService,
    script: Script,
    rounds: bool,
) -> RunningService<RoleClient, Script> {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = service.serve(b).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = if rounds {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    script
        .serve_with_lifecycle(a, lifecycle)
        .await
        .expect("client starts")
}

pub(crate) fn with_memory_store() -> toolnexus::mcp::McpService {
    toolnexus::mcp::McpService::new(toolnexus_tests::mcp_fixtures::toolkit())
        .with_store(std::sync::Arc::new(toolnexus::store::MemoryStore::new()))
}

/// On an older session the parked call's elicitation is asked live; the answer claims and
/// resumes the parked run (accept runs the tool, decline does not).
#[tokio::test]
async fn a_parked_call_on_an_older_session_is_asked_live_and_resumed() {
    let script = Script::new();
    let client = in_process(with_memory_store(), script.clone(), false).await;
    script.reply(toolnexus_tests::mcp_fixtures::accept(
        json!({"city": "Oslo"}),
    ));
    let r = client
        .call_tool(CallToolRequestParams::new("book_trip"))
        .await
        .expect("tools/call");
    assert_eq!(text(&r), ("booked to Oslo".to_owned(), false));
    script.reply(toolnexus_tests::mcp_fixtures::decline());
    let mut params = CallToolRequestParams::new("delete_file");
    params.arguments = json!({"path": "/tmp/x"}).as_object().cloned();
    let r = client.call_tool(params).await.expect("tools/call");
    assert_eq!(
        text(&r),
        ("declined/expired: Delete /tmp/x?".to_owned(), true)
    );
    assert_eq!(
        script
            .pending()
            .iter()
            .map(|p| p["id"].clone())
            .collect::<Vec<_>>(),
        [json!("r-city"), json!("r-delete")]
    );
    let _ = client.cancel().await;
}

/// The parked run's `requestState` is bound to the session's principal: another client's
/// retry is refused, and the run stays parked for its own client.
#[tokio::test]
async fn a_parked_calls_request_state_is_bound_to_its_principal() {
    let who = std::sync::Arc::new(std::sync::Mutex::new("ada".to_owned()));
    let current = std::sync::Arc::clone(&who);
    let service =
        with_memory_store().with_principal(move |_| Some(current.lock().unwrap().clone()));
    let client = in_process(service, Script::new(), true).await;
    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(CallToolRequestParams::new("book_trip"))
        .await
        .expect("tools/call")
    else {
        panic!("input_required");
    };
    let state = asked.request_state.expect("a requestState");
    let accept = json!({"action": "accept", "content": {"city": "Oslo"}});
    *who.lock().unwrap() = "mallory".to_owned();
    assert_eq!(
        retry(&client, &state, accept.clone()).await,
        (
            "invalid requestState: it belongs to another client".to_owned(),
            true
        )
    );
    *who.lock().unwrap() = "ada".to_owned();
    assert_eq!(
        retry(&client, &state, accept).await,
        ("booked to Oslo".to_owned(), false)
    );
    let _ = client.cancel().await;
}
