//! Serving a toolkit over MCP (CONTRACT section 8), driven by rmcp's own client: every mapping
//! with exact values, over an in-process pipe (legacy `elicitation/create` and the
//! `2026-07-28` multi-round-trip `input_required` rounds), over stdio (a child process), and
//! over streamable HTTP on 127.0.0.1.

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use toolnexus::mcp::{HttpServer, McpService};
use toolnexus::{Context, Form, ToolResult, adapters};
use toolnexus_tests::mcp_fixtures::http_client;
use toolnexus_tests::mcp_fixtures::{
    Destination, Payment, Script, accept, accept_empty, cancel, decline, toolkit,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Via {
    /// An in-process pipe, `initialize` lifecycle: `elicitation/create` requests.
    Pipe,
    /// An in-process pipe, `server/discover` on 2026-07-28: `input_required` rounds.
    PipeRounds,
    /// A child process over stdio.
    Stdio,
    /// Streamable HTTP on 127.0.0.1.
    Http,
}

pub(super) struct Session {
    client: RunningService<RoleClient, Script>,
    _http: Option<HttpServer>,
}

pub(super) async fn connect_with(via: Via, script: Script, service: McpService) -> Session {
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

pub(super) async fn connect(via: Via, script: Script) -> Session {
    connect_with(via, script, McpService::new(toolkit())).await
}

pub(super) async fn call(s: &Session, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    s.client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"))
}

/// `(text, isError)` of a result with exactly one text block.
pub(super) fn text(r: &CallToolResult) -> (String, bool) {
    assert_eq!(r.content.len(), 1, "one content block: {r:?}");
    let t = r.content[0].as_text().expect("a text block").text.clone();
    (t, r.is_error.unwrap_or(false))
}

pub(super) fn form(message: &str, schema: Value) -> Value {
    let mut elicitation = json!({"mode": "form", "message": message});
    elicitation["requestedSchema"] = schema;
    elicitation
}

pub(super) async fn native(name: &str, args: Value) -> ToolResult {
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
