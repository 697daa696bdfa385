//! Issue 26: a consumed server's `input_required` result goes the way of any suspension
//! (`on_elicitation`, the loop's `wait_for`, a durable halt resumed with `Client::resume`),
//! elicitations are matched to the call that caused them by id (concurrent calls on one
//! server), and a person's time never times a call out (progress notifications on the served
//! side, a paused timeout on the consuming side).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};
use toolnexus::mcp::{HttpServer, McpServer, McpServerBuilder, McpService, ROUND_KEY};
use toolnexus::{
    Answer, Client, Context, Form, PendingRun, Reply, Request, RunStatus, ScriptedModel, Toolkit,
};
use toolnexus_tests::mcp_fixtures::{
    Destination, RmcpPeer, Script, accept, http_client, serve_rmcp_http, toolkit,
};

/// The fixture toolkit served over streamable HTTP by toolnexus on 127.0.0.1.
async fn served() -> HttpServer {
    McpService::new(toolkit())
        .serve_http("127.0.0.1:0")
        .await
        .expect("serves HTTP")
}

/// A consumer of `url` on the 2026-07-28 protocol (multi-round-trip).
fn rounds(url: &str) -> McpServerBuilder {
    McpServer::http("tn", url).multi_round_trip(true)
}

async fn consumed(builder: McpServerBuilder) -> (McpServer, Toolkit) {
    let server = builder.connect().await.expect("connects");
    let kit = Toolkit::builder()
        .tools(server.tools())
        .build()
        .expect("valid toolkit");
    (server, kit)
}

async fn run(kit: &Toolkit, name: &str, args: Value) -> (String, bool) {
    let r = kit.execute(name, args, &Context::new()).await;
    (r.output, r.is_error)
}

/// An `input_required` result reaches `on_elicitation` with the request the server sent
/// (its kind, id and data from `_meta["toolnexus/pending"]`), and the answer resumes the call.
#[tokio::test]
async fn an_input_required_result_reaches_on_elicitation_and_resumes() {
    let http = served().await;
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let log = Arc::clone(&seen);
    let (server, kit) = consumed(rounds(&http.url()).on_elicitation(move |r: Request| {
        log.lock().unwrap().push(r.clone());
        let answer = match r.kind.as_str() {
            "input" => r.accept(json!({"city": "Oslo"})),
            _ => Answer::ok(r.id.clone()),
        };
        async move { answer }
    }))
    .await;
    assert_eq!(
        run(&kit, "book_trip", json!({})).await,
        ("booked to Oslo".into(), false)
    );
    assert_eq!(
        run(&kit, "delete_file", json!({"path": "/tmp/x"})).await,
        ("deleted /tmp/x".into(), false)
    );
    assert_eq!(
        run(&kit, "wire_money", json!({})).await,
        ("wired".into(), false)
    );
    let seen = seen.lock().unwrap().clone();
    let wire: Vec<String> = seen
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    assert_eq!(
        wire,
        [
            format!(
                // `data` is a serde_json map: its keys sorted (no serde_json feature is on)
                r#"{{"id":"r-city","kind":"input","prompt":"Which city?","data":{{"mcpServer":"tn","schema":{}}}}}"#,
                Destination::answer_schema()
            ),
            r#"{"id":"r-delete","kind":"approval","prompt":"Delete /tmp/x?","data":{"mcpServer":"tn"}}"#.to_owned(),
            r#"{"id":"r-wire","kind":"wire","prompt":"Wire 5 EUR?","data":{"mcpServer":"tn"}}"#.to_owned(),
        ]
    );
    server.close().await;
    http.shutdown();
}

/// Without a handler the call suspends like any tool: `wait_for` answers it, and the retry
/// carries the answer with the echoed `requestState`.
#[tokio::test]
async fn without_a_handler_an_input_required_call_suspends_and_wait_for_answers_it() {
    let http = served().await;
    let (server, kit) = consumed(rounds(&http.url())).await;
    let asked: Arc<Mutex<Vec<Request>>> = Arc::default();
    let log = Arc::clone(&asked);
    let model = ScriptedModel::new([
        Reply::tool_call("book_trip", json!({})),
        Reply::text("done"),
    ]);
    let client = Client::builder(model)
        .model_name("m")
        .wait_for(move |r: Request| {
            log.lock().unwrap().push(r.clone());
            async move { r.accept(json!({"city": "Bergen"})) }
        })
        .build()
        .expect("valid client");
    let done = client.run("book it", &kit).await.expect("runs");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls.len(), 1);
    assert_eq!(done.tool_calls[0].output, "booked to Bergen");
    assert!(!done.tool_calls[0].is_error);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].id, "r-city");
    assert_eq!(asked[0].kind, "input");
    let round = &asked[0].data.as_ref().expect("data")[ROUND_KEY];
    assert_eq!(round["inputKey"], "toolnexus");
    assert!(
        round["requestState"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{round}"
    );
    server.close().await;
    http.shutdown();
}

/// Without `wait_for` the run halts durably; the record, as JSON, resumes later through a new
/// connection (a new MCP session) and the server completes the call once.
#[tokio::test]
async fn without_a_handler_an_input_required_call_halts_durably_and_resumes_later() {
    let http = served().await;
    let (first, kit) = consumed(rounds(&http.url())).await;
    let model = ScriptedModel::new([Reply::tool_call("delete_file", json!({"path": "/tmp/y"}))]);
    let halted = Client::builder(model)
        .model_name("m")
        .build()
        .expect("valid client")
        .run("delete it", &kit)
        .await
        .expect("runs");
    assert_eq!(halted.status, RunStatus::Pending);
    let pending = halted.pending.clone().expect("a request");
    assert_eq!(pending.id, "r-delete");
    assert_eq!(pending.kind, "approval");
    let record = PendingRun::try_from(&halted).expect("a record").to_json();
    first.close().await;

    // later: a new session, a new toolkit, the answer
    let (second, kit) = consumed(rounds(&http.url())).await;
    let record = PendingRun::from_json(&record).expect("reads back");
    let answer = record.pending().accept(json!({}));
    let resumer = Client::builder(ScriptedModel::new([Reply::text("deleted")]))
        .model_name("m")
        .build()
        .expect("valid client");
    let done = resumer.resume(record, answer, &kit).await.expect("resumes");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(
        done.tool_calls.last().expect("a call").output,
        "deleted /tmp/y"
    );
    second.close().await;
    http.shutdown();
}

/// Two calls in flight on one server, each elicitation cancelled for want of a handler: each
/// call is told of its own, never of the other's (matched by the request whose response
/// stream carried it, not by order).
#[tokio::test]
async fn concurrent_calls_are_told_of_their_own_elicitations_only() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    let (server, kit) = consumed(McpServer::http("peer", url)).await;
    let kit = Arc::new(kit);
    let call = |message: &'static str| {
        let kit = Arc::clone(&kit);
        tokio::spawn(async move {
            run(
                &kit,
                "ask_after",
                json!({"message": message, "delay_ms": 300}),
            )
            .await
        })
    };
    let (a, b) = (call("first?"), call("second?"));
    let (a, b) = (a.await.expect("joins"), b.await.expect("joins"));
    let told = |message: &str| {
        format!(
            "MCP server \"peer\" needed a human to answer \"{message}\", but no one can answer here (no elicitation handler), so it was cancelled; the tool said: {message} -> cancelled"
        )
    };
    assert_eq!(a, (told("first?"), true));
    assert_eq!(b, (told("second?"), true));
    server.close().await;
    stop.cancel();
}

/// Concurrent calls answered by a handler: each answer reaches its own call.
#[tokio::test]
async fn concurrent_calls_get_their_own_answers() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    let (server, kit) = consumed(McpServer::http("peer", url).on_elicitation(|r: Request| {
        let answer = r.accept(json!({"answer": format!("for {}", r.prompt)}));
        async move { answer }
    }))
    .await;
    let kit = Arc::new(kit);
    let call = |message: &'static str| {
        let kit = Arc::clone(&kit);
        tokio::spawn(async move {
            run(
                &kit,
                "ask_after",
                json!({"message": message, "delay_ms": 200}),
            )
            .await
        })
    };
    let (a, b) = (call("first?"), call("second?"));
    assert_eq!(
        a.await.expect("joins"),
        ("first? -> for first?".into(), false)
    );
    assert_eq!(
        b.await.expect("joins"),
        ("second? -> for second?".into(), false)
    );
    server.close().await;
    stop.cancel();
}

/// Served: a client whose request timeout (300 ms, reset on progress) is shorter than the
/// person (1 s) still gets the result, because the server sends progress while it waits;
/// without progress the same client times out.
#[tokio::test]
async fn a_person_slower_than_the_clients_timeout_still_gets_the_call_done() {
    for (interval, finishes) in [
        (Duration::from_millis(100), true),
        (Duration::from_secs(3600), false),
    ] {
        let http = McpService::new(toolkit())
            .with_progress_interval(interval)
            .serve_http("127.0.0.1:0")
            .await
            .expect("serves HTTP");
        let script = Script::new();
        script.think(Duration::from_secs(1));
        script.reply(accept(json!({"city": "Oslo"})));
        let transport = StreamableHttpClientTransport::with_client(
            http_client(),
            StreamableHttpClientTransportConfig::with_uri(http.url()),
        );
        let client = script
            .clone()
            .serve(transport)
            .await
            .expect("client starts");
        let mut options = PeerRequestOptions::with_timeout(Duration::from_millis(300));
        options.reset_timeout_on_progress = true;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("book_trip"),
        ));
        let handle = client
            .peer()
            .send_request_with_option(request, options)
            .await
            .expect("sends");
        let outcome = handle.await_response().await;
        if finishes {
            let Ok(ServerResult::CallToolResult(r)) = outcome else {
                panic!("the call completes: {outcome:?}");
            };
            let text = r.content[0].as_text().expect("text").text.clone();
            assert_eq!(text, "booked to Oslo");
        } else {
            assert!(
                matches!(outcome, Err(ServiceError::Timeout { .. })),
                "without progress the client's timeout ends the call: {outcome:?}"
            );
        }
        let _ = client.cancel().await;
        http.shutdown();
    }
}

/// Consumed: the call's timeout (300 ms) stands still while the host's person (1 s) answers.
#[tokio::test]
async fn a_consumed_calls_timeout_waits_for_the_person() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    let (server, kit) = consumed(
        McpServer::http("peer", url)
            .timeout(Duration::from_millis(300))
            .on_elicitation(|r: Request| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                r.accept(json!({"city": "Oslo"}))
            }),
    )
    .await;
    assert_eq!(
        run(&kit, "ask_city", json!({})).await,
        ("city: Oslo".into(), false)
    );
    // silence without a person still times out
    assert_eq!(
        run(&kit, "ask_after", json!({"message": "m", "delay_ms": 1000})).await,
        (
            "MCP server \"peer\" did not answer `ask_after` within 300ms".into(),
            true
        )
    );
    server.close().await;
    stop.cancel();
}
