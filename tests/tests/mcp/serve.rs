//! Serving a toolkit over MCP (CONTRACT section 8), driven by rmcp's own client: every mapping
//! with exact values, over an in-process pipe (legacy `elicitation/create` and the
//! `2026-07-28` multi-round-trip `input_required` rounds), over stdio (a child process), and
//! over streamable HTTP on 127.0.0.1.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use toolnexus::mcp::{HttpServer, McpService};
use toolnexus::{Context, FnTool, Form, ToolResult, Toolkit, adapters};
use toolnexus_tests::mcp_fixtures::http_client;
use toolnexus_tests::mcp_fixtures::{
    Destination, Payment, Script, accept, accept_empty, cancel, decline, toolkit,
};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    /// An in-process pipe, `initialize` lifecycle: `elicitation/create` requests.
    Pipe,
    /// An in-process pipe, `server/discover` on 2026-07-28: `input_required` rounds.
    PipeRounds,
    /// A child process over stdio.
    Stdio,
    /// Streamable HTTP on 127.0.0.1.
    Http,
}

struct Session {
    client: RunningService<RoleClient, Script>,
    _http: Option<HttpServer>,
}

async fn connect_with(via: Via, script: Script, service: McpService) -> Session {
    match via {
        Via::Pipe | Via::PipeRounds => {
            let (a, b) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                if let Ok(running) = service.serve(b).await {
                    let _ = running.waiting().await;
                }
            });
            let client = if via == Via::Pipe {
                script.serve(a).await.expect("client starts")
            } else {
                script
                    .serve_with_lifecycle(
                        a,
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                    )
                    .await
                    .expect("client starts (discover)")
            };
            Session {
                client,
                _http: None,
            }
        }
        Via::Stdio => {
            let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_peer"));
            cmd.arg("toolnexus");
            let child = TokioChildProcess::new(cmd).expect("mcp_peer starts");
            Session {
                client: script.serve(child).await.expect("client starts"),
                _http: None,
            }
        }
        Via::Http => {
            let server = service
                .serve_http("127.0.0.1:0")
                .await
                .expect("serves HTTP");
            let transport = StreamableHttpClientTransport::with_client(
                http_client(),
                StreamableHttpClientTransportConfig::with_uri(server.url()),
            );
            Session {
                client: script.serve(transport).await.expect("client starts"),
                _http: Some(server),
            }
        }
    }
}

async fn connect(via: Via, script: Script) -> Session {
    connect_with(via, script, McpService::new(toolkit())).await
}

async fn call(s: &Session, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    s.client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"))
}

/// `(text, isError)` of a result with exactly one text block.
fn text(r: &CallToolResult) -> (String, bool) {
    assert_eq!(r.content.len(), 1, "one content block: {r:?}");
    let t = r.content[0].as_text().expect("a text block").text.clone();
    (t, r.is_error.unwrap_or(false))
}

fn form(message: &str, schema: Value) -> Value {
    let mut elicitation = json!({"mode": "form", "message": message});
    elicitation["requestedSchema"] = schema;
    elicitation
}

async fn native(name: &str, args: Value) -> ToolResult {
    toolkit().execute(name, args, &Context::new()).await
}

/// Every mapping, through one session: tools/list and plain calls, then the suspensions.
async fn mappings(via: Via) {
    let script = Script::new();
    let s = connect(via, script.clone()).await;

    // tools/list: the toolkit's tools in order, with the adapters' schemas
    let listed = s.client.list_all_tools().await.expect("tools/list");
    let specs: Vec<_> = toolkit()
        .tools()
        .iter()
        .map(|t| adapters::spec_of(&**t))
        .collect();
    let names: Vec<&str> = listed.iter().map(|t| &*t.name).collect();
    let expected: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, expected);
    for (tool, spec) in listed.iter().zip(&specs) {
        assert_eq!(Value::Object((*tool.input_schema).clone()), spec.parameters);
        assert_eq!(tool.description.as_deref(), Some(spec.description.as_str()));
    }
    // tool annotations: the stated hints only, none for a tool that states nothing
    let annotations = |name: &str| {
        let tool = listed.iter().find(|t| t.name == name).expect("listed");
        tool.annotations
            .as_ref()
            .map(|a| serde_json::to_value(a).expect("serializes"))
    };
    assert_eq!(
        annotations("echo"),
        Some(json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}))
    );
    assert_eq!(
        annotations("delete_file"),
        Some(json!({"destructiveHint": true}))
    );
    assert_eq!(annotations("book_trip"), None);

    // plain calls, failures as tool errors with the toolkit's own text
    assert_eq!(
        text(&call(&s, "echo", json!({"text": "hi"})).await),
        ("hi".into(), false)
    );
    let bad = native("echo", json!({"text": 5})).await.output;
    assert_eq!(
        bad,
        "invalid arguments for echo: text: invalid type: integer `5`, expected a string"
    );
    assert_eq!(
        text(&call(&s, "echo", json!({"text": 5})).await),
        (bad, true)
    );
    assert_eq!(
        text(&call(&s, "nope", json!({})).await),
        ("Unknown tool: nope".into(), true)
    );
    let panicked = native("boom", json!({})).await.output;
    assert!(panicked.contains("boom"), "{panicked}");
    assert_eq!(text(&call(&s, "boom", json!({})).await), (panicked, true));
    assert!(script.seen().is_empty());

    suspensions(&s, &script).await;
}

/// The form mappings (input with and without a schema, approval), then the others.
async fn suspensions(s: &Session, script: &Script) {
    // input with a schema: requestedSchema = data.schema; accept, decline, cancel
    for (reply, expected) in [
        (accept(json!({"city": "Oslo"})), ("booked to Oslo", false)),
        (decline(), ("declined/expired: Which city?", true)),
        (cancel(), ("declined/expired: Which city?", true)),
    ] {
        script.clear();
        script.reply(reply);
        let r = call(s, "book_trip", json!({})).await;
        assert_eq!(text(&r), (expected.0.to_owned(), expected.1));
        assert_eq!(
            script.seen(),
            [form("Which city?", Destination::answer_schema())]
        );
    }

    // input without a schema: one string field `output`, read back as the text
    script.clear();
    script.reply(accept(json!({"output": "window seat"})));
    assert_eq!(
        text(&call(s, "take_note", json!({})).await),
        ("note: window seat".into(), false)
    );
    assert_eq!(
        script.seen(),
        [form(
            "Any note?",
            json!({"type": "object", "properties": {"output": {"type": "string"}}, "required": ["output"]})
        )]
    );

    // approval: a form with no fields
    for (reply, expected) in [
        (accept(json!({})), ("deleted /tmp/x", false)),
        (accept_empty(), ("deleted /tmp/x", false)),
        (decline(), ("declined/expired: Delete /tmp/x?", true)),
    ] {
        script.clear();
        script.reply(reply);
        let r = call(s, "delete_file", json!({"path": "/tmp/x"})).await;
        assert_eq!(text(&r), (expected.0.to_owned(), expected.1));
        // the request travels in the elicitation's _meta, as in the fallback
        assert_eq!(
            serde_json::to_string(&script.pending()).unwrap(),
            r#"[{"id":"r-delete","kind":"approval","prompt":"Delete /tmp/x?"}]"#
        );
        assert_eq!(
            script.seen(),
            [form(
                "Delete /tmp/x?",
                json!({"type": "object", "properties": {}})
            )]
        );
    }

    other_suspensions(s, script).await;
}

/// The URL, question, custom-kind and second-suspension mappings.
async fn other_suspensions(s: &Session, script: &Script) {
    // authorization: URL mode, the elicitation id is the request id
    script.clear();
    script.reply(accept_empty());
    assert_eq!(
        text(&call(s, "read_inbox", json!({})).await),
        ("inbox: 3 messages".into(), false)
    );
    assert_eq!(
        script.seen(),
        [
            json!({"mode": "url", "message": "Login required: https://example.com/login", "url": "https://example.com/login", "elicitationId": "r-login"})
        ]
    );
    assert_eq!(
        serde_json::to_string(&script.pending()).unwrap(),
        r#"[{"id":"r-login","kind":"authorization","prompt":"Login required: https://example.com/login","url":"https://example.com/login"}]"#
    );

    // question: one field per question, a string enum for options
    script.clear();
    script.reply(accept(json!({"Which seat?": "aisle", "Meal?": "veg"})));
    let r = call(
        s,
        "question",
        json!({"questions": [
            {"question": "Which seat?", "header": "Seat", "options": ["aisle", "window"]},
            {"question": "Meal?"}
        ]}),
    )
    .await;
    // the answer's data is the client's content as rmcp read it into a serde_json map: its
    // keys in that map's order (sorted: toolnexus turns on none of serde_json's features)
    assert_eq!(
        text(&r),
        (r#"{"Meal?":"veg","Which seat?":"aisle"}"#.into(), false)
    );
    assert_eq!(
        script.seen(),
        [form(
            "Which seat? (options: aisle, window)\nMeal?",
            json!({"type": "object", "properties": {
                "Which seat?": {"type": "string", "title": "Seat", "enum": ["aisle", "window"]},
                "Meal?": {"type": "string"}
            }, "required": ["Which seat?", "Meal?"]})
        )]
    );

    // another kind with data.schema: a form from it
    script.clear();
    script.reply(accept(json!({"confirm": true})));
    assert_eq!(
        text(&call(s, "pay", json!({})).await),
        ("paid: true".into(), false)
    );
    assert_eq!(
        script.seen(),
        [form("Pay 5 EUR?", Payment::answer_schema())]
    );

    // another kind without a schema: an accept/decline form, the request under _meta
    for (reply, expected) in [
        (accept(json!({})), ("wired", false)),
        (decline(), ("declined/expired: Wire 5 EUR?", true)),
    ] {
        script.clear();
        script.reply(reply);
        let r = call(s, "wire_money", json!({})).await;
        assert_eq!(text(&r), (expected.0.to_owned(), expected.1));
        assert_eq!(
            script.seen(),
            [form(
                "Wire 5 EUR?",
                json!({"type": "object", "properties": {}})
            )]
        );
        assert_eq!(
            serde_json::to_string(&script.pending()[0]).unwrap(),
            r#"{"id":"r-wire","kind":"wire","prompt":"Wire 5 EUR?"}"#
        );
    }

    // a second suspension after the answer: unresolved, never a loop
    script.clear();
    script.reply(accept(json!({"output": "yes"})));
    assert_eq!(
        text(&call(s, "insist", json!({})).await),
        ("unresolved: Really?".into(), true)
    );
    assert_eq!(script.seen().len(), 1);
}

#[tokio::test]
async fn every_mapping_over_a_pipe_with_elicitation_requests() {
    mappings(Via::Pipe).await;
}

#[tokio::test]
async fn every_mapping_over_a_pipe_with_input_required_rounds() {
    mappings(Via::PipeRounds).await;
}

#[tokio::test]
async fn every_mapping_over_stdio() {
    mappings(Via::Stdio).await;
}

#[tokio::test]
async fn every_mapping_over_streamable_http() {
    mappings(Via::Http).await;
}

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
