//! Serving over MCP at the edges: a client without elicitation, a login form asking for a
//! password, a form-only client, an unanswered elicitation, disconnects mid-elicitation and
//! between rounds, stdin closed with an elicitation pending, the example's annotations.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::ClientLifecycleMode;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use toolnexus::mcp::McpService;
use toolnexus::{Context, FnTool, Form, ToolResult, Toolkit};
use toolnexus_tests::mcp_fixtures::{Destination, Script, toolkit};

#[allow(clippy::wildcard_imports)]
use super::serve::*;

/// A client that declared no elicitation gets the output as an error, the request in _meta.
async fn no_elicitation(via: Via) {
    let s = connect(via, Script::with_modes(None)).await;
    let r = call(&s, "book_trip", json!({})).await;
    assert_eq!(text(&r), ("Input required: Which city?".into(), true));
    let pending = &r.meta.as_ref().expect("_meta").0["toolnexus/pending"];
    assert_eq!(
        pending,
        &json!({"id": "r-city", "kind": "input", "prompt": "Which city?", "data": {"schema": Destination::answer_schema()}})
    );
    // the bytes: rmcp builds its messages from serde_json values, whose maps order their keys
    // as serde_json is built (sorted here: toolnexus turns on none of its features), so the
    // Request inside `_meta` has the same members in that order, not the contract's
    assert_eq!(
        serde_json::to_string(pending).unwrap(),
        serde_json::to_value(
            toolnexus::Request::input("Which city?")
                .with_id("r-city")
                .with_data_entry("schema", Destination::answer_schema())
        )
        .unwrap()
        .to_string()
    );
}

#[tokio::test]
async fn without_elicitation_the_request_travels_in_meta() {
    for via in [Via::Pipe, Via::PipeRounds, Via::Http] {
        no_elicitation(via).await;
    }
}

/// Issue 22: a suspension of another kind (`login`) whose form asks for the online-banking
/// password went out as a form elicitation. No elicitation leaves; the client reads the
/// boundary's refusal, on both protocol shapes.
#[tokio::test]
async fn a_login_form_asking_for_the_banking_password_never_leaves_as_an_elicitation() {
    let tool = FnTool::builder("bank_login")
        .description("Asks for the online-banking password.")
        .handler(|_, _| async {
            ToolResult::suspended(
                toolnexus::Request::custom("login", "Online banking").with_data_entry(
                    "schema",
                    json!({"type": "object", "properties": {
                        "p": {"type": "string", "title": "Online-banking password"}
                    }}),
                ),
            )
        })
        .build()
        .expect("valid tool");
    let kit = Toolkit::builder()
        .tool(tool)
        .build()
        .expect("valid toolkit");
    for via in [Via::Pipe, Via::PipeRounds] {
        let script = Script::new();
        let s = connect_with(via, script.clone(), McpService::new(kit.clone())).await;
        let r = call(&s, "bank_login", json!({})).await;
        assert_eq!(
            text(&r),
            (
                "invalid suspension: `data.schema.properties.p.title` of the `login` request has \
                 the text `Online-banking password`, which mentions the credential word \
                 `password`; secrets must never pass through answer data: use an \
                 `authorization` request with a `url` instead"
                    .to_owned(),
                true
            )
        );
        assert!(script.seen().is_empty(), "{via:?}: {:?}", script.seen());
    }
}

#[tokio::test]
async fn a_form_only_client_gets_the_login_as_text() {
    let s = connect(Via::Pipe, Script::with_modes(Some((true, false)))).await;
    let r = call(&s, "read_inbox", json!({})).await;
    assert_eq!(
        text(&r),
        ("Login required: https://example.com/login".into(), true)
    );
    assert_eq!(
        serde_json::to_string(&r.meta.as_ref().expect("_meta").0["toolnexus/pending"]).unwrap(),
        r#"{"id":"r-login","kind":"authorization","prompt":"Login required: https://example.com/login","url":"https://example.com/login"}"#
    );
}

#[tokio::test]
async fn an_unanswered_elicitation_expires_after_the_timeout() {
    let script = Script::new();
    script.reply(None); // never answers
    let service = McpService::new(toolkit()).with_timeout(Duration::from_millis(200));
    let s = connect_with(Via::Pipe, script.clone(), service).await;
    let started = std::time::Instant::now();
    let r = call(&s, "book_trip", json!({})).await;
    assert_eq!(text(&r), ("declined/expired: Which city?".into(), true));
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The client disconnects while the human is being asked: the call is cancelled, the tool
/// does not run again, and the server's session ends.
async fn disconnect_mid_elicitation(via: Via) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let asking = FnTool::builder("ask")
        .description("Asks, counting its runs.")
        .handler(move |_args, ctx: Context| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                let _ = n;
                match ctx.answer() {
                    Some(_) => ToolResult::success("answered"),
                    None => ToolResult::suspended(
                        toolnexus::Request::input("Which city?").with_id("r1"),
                    ),
                }
            }
        })
        .build()
        .expect("valid tool");
    let toolkit = Toolkit::builder()
        .tool(asking)
        .build()
        .expect("valid toolkit");
    let service = McpService::new(toolkit);

    let (a, b) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(async move {
        let running = service.serve(b).await.expect("serves");
        running.waiting().await.expect("server ends cleanly")
    });
    let script = Script::new();
    script.reply(None); // the human never answers
    let client = if via == Via::Pipe {
        script.clone().serve(a).await.expect("client starts")
    } else {
        script
            .clone()
            .serve_with_lifecycle(
                a,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("client starts")
    };
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let call =
        tokio::spawn(async move { caller.call_tool(CallToolRequestParams::new("ask")).await });
    tokio::time::timeout(Duration::from_secs(5), script.arrived.notified())
        .await
        .expect("the elicitation reaches the client");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // disconnect: the client goes away mid-elicitation
    client.cancellation_token().cancel();
    // rmcp gives in-flight handlers 5 s to drain after EOF, then cancels them (our select
    // on the request's cancellation ends the call there)
    let ended = tokio::time::timeout(Duration::from_secs(15), server).await;
    assert!(
        ended.is_ok(),
        "the server's session ends when the client disconnects"
    );
    // (in rounds mode the client's own handler still waits for its human: stop the caller)
    call.abort();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool is not run again");
}

#[tokio::test]
async fn a_client_that_disconnects_mid_elicitation_cancels_the_call() {
    disconnect_mid_elicitation(Via::Pipe).await;
}

#[tokio::test]
async fn a_client_that_disconnects_between_rounds_leaves_nothing_behind() {
    disconnect_mid_elicitation(Via::PipeRounds).await;
}

/// Closing stdin while an elicitation waits for the human ends the server at once: the call is
/// cancelled, nothing waits out rmcp's drain window (5 s), the tool does not run again.
#[tokio::test]
async fn closing_stdin_with_an_elicitation_pending_ends_the_server_at_once() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_peer"))
        .arg("toolnexus")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp_peer starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let send = |v: Value| format!("{v}\n");
    stdin
        .write_all(
            send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {"form": {}}},
                    "clientInfo": {"name": "raw", "version": "1"}
                }}),
            )
            .as_bytes(),
        )
        .await
        .expect("writes");
    let first = lines.next_line().await.expect("reads").expect("a line");
    let init: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(init["id"], 1, "{init}");
    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).as_bytes(),
        )
        .await
        .expect("writes");
    stdin
        .write_all(send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "book_trip", "arguments": {}}})).as_bytes())
        .await
        .expect("writes");
    // the server asks the human
    let asked = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let line = lines.next_line().await.expect("reads").expect("a line");
            let msg: Value = serde_json::from_str(&line).expect("JSON");
            if msg["method"] == "elicitation/create" {
                return msg;
            }
        }
    })
    .await
    .expect("the elicitation arrives");
    assert_eq!(asked["params"]["message"], "Which city?");
    assert_eq!(
        asked["params"]["_meta"]["toolnexus/pending"]["id"],
        "r-city"
    );

    // the host goes away: stdin closes with the elicitation unanswered
    drop(stdin);
    let started = std::time::Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits")
        .expect("waits");
    let took = started.elapsed();
    assert!(status.success(), "{status}");
    assert!(
        took < Duration::from_secs(2),
        "the server took {took:?} to exit after stdin closed (rmcp's drain window is 5 s)"
    );
}

/// The example declares its tools' annotations: a host sees `delete_note` is destructive.
#[tokio::test]
async fn the_example_declares_its_tools_annotations() {
    let Some(server) = crate::python::example_server() else {
        return;
    };
    let child =
        TokioChildProcess::new(tokio::process::Command::new(server)).expect("the example starts");
    let client = Script::new().serve(child).await.expect("client starts");
    let listed = client.list_all_tools().await.expect("tools/list");
    let annotations: Vec<(String, Value)> = listed
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                serde_json::to_value(t.annotations.as_ref()).expect("serializes"),
            )
        })
        .collect();
    let closed = |read_only: bool, destructive: bool| {
        let mut a = serde_json::Map::new();
        if read_only {
            a.insert("readOnlyHint".into(), json!(true));
        }
        if destructive {
            a.insert("destructiveHint".into(), json!(true));
        }
        a.insert("idempotentHint".into(), json!(true));
        a.insert("openWorldHint".into(), json!(false));
        Value::Object(a)
    };
    assert_eq!(
        annotations,
        [
            ("save_note".to_owned(), closed(false, true)),
            ("list_notes".to_owned(), closed(true, false)),
            ("delete_note".to_owned(), closed(false, true)),
            ("word_count".to_owned(), closed(true, false)),
        ]
    );
    let _ = client.cancel().await;
}
