//! Against MCP peers written with the official MCP Python SDK (`mcp` 2.3.0 from PyPI, in the
//! venv `scripts/python-env.sh` makes under `target/`): a Python client drives the
//! `mcp_server` example over stdio and a served toolkit over streamable HTTP, answering its
//! elicitations (accept, decline, cancel), in both the `initialize` lifecycle and the
//! `2026-07-28` discover lifecycle (multi-round-trip); a Python server whose tools elicit is
//! consumed by a toolkit, over stdio and streamable HTTP.
//!
//! Without the venv (or the example binary) these tests print a notice and pass; under
//! `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::Form;
use toolnexus::mcp::{McpServer, McpServerBuilder, McpService};
use toolnexus::request::DeclineReason;
use toolnexus::{Answer, Context, Request, Toolkit};
use toolnexus_tests::mcp_fixtures::{Destination, Seen, scripted_answers, toolkit};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv's python, or `None` (with a notice) when it is missing outside CI.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("TOOLNEXUS_MCP_PYTHON").map_or_else(
        || repo().join("target/mcp-python/bin/python"),
        PathBuf::from,
    );
    if path.exists() {
        return Some(path);
    }
    missing(
        "the MCP Python SDK venv",
        &format!("none at {}; run scripts/python-env.sh", path.display()),
    )
}

/// The `mcp_server` example binary, next to this package's binaries.
pub(crate) fn example_server() -> Option<PathBuf> {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mcp_peer"))
        .parent()
        .expect("a target directory")
        .to_path_buf();
    let path = bin_dir.join("examples/mcp_server");
    if path.exists() {
        return Some(path);
    }
    missing(
        "the mcp_server example binary",
        &format!(
            "none at {}; run cargo build -p toolnexus-examples --features mcp --example mcp_server",
            path.display()
        ),
    )
}

fn missing<T>(needs: &str, how: &str) -> Option<T> {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "missing {needs} ({how})"
    );
    toolnexus_tests::skip::skipped("python", needs, how);
    None
}

fn script(name: &str) -> String {
    repo()
        .join("scripts/mcp-python")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs the Python client with `spec`; its observations as JSON.
async fn python_client(python: &Path, spec: Value) -> Value {
    let out = tokio::process::Command::new(python)
        .arg(script("client.py"))
        .arg(spec.to_string())
        .stderr(Stdio::inherit())
        .output()
        .await
        .expect("python runs");
    assert!(
        out.status.success(),
        "the Python client failed: {}",
        out.status
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the Python client printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn text_result(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error, "resultType": "complete"})
}

fn approval(message: &str) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema": {"type": "object", "properties": {}}})
}

/// Elicitations as seen by Python, without the transport's `_meta` (a progress token).
fn elicitations(call: &Value) -> Vec<Value> {
    call["elicitations"]
        .as_array()
        .expect("elicitations")
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().expect("an object").remove("_meta");
            e
        })
        .collect()
}

async fn example_over_stdio(mode: &str) {
    let (Some(python), Some(server)) = (python(), example_server()) else {
        return;
    };
    let delete = json!({"title": "a"});
    let save = json!({"title": "a", "text": "x"});
    let out = python_client(
        &python,
        json!({
            "server": {"command": server, "args": []},
            "mode": mode,
            "calls": [
                {"tool": "save_note", "args": save},
                {"tool": "delete_note", "args": delete, "reply": {"action": "accept", "content": {}}},
                {"tool": "save_note", "args": save},
                {"tool": "delete_note", "args": delete, "reply": {"action": "decline"}},
                {"tool": "delete_note", "args": delete, "reply": {"action": "cancel"}},
                {"tool": "list_notes", "args": {}}
            ]
        }),
    )
    .await;
    assert_eq!(
        out["tools"],
        json!(["save_note", "list_notes", "delete_note", "word_count"])
    );
    let calls = out["calls"].as_array().expect("calls");
    let results: Vec<&Value> = calls.iter().map(|c| &c["result"]).collect();
    assert_eq!(
        results,
        [
            &text_result(r#"saved "a" (1 notes)"#, false),
            &text_result(r#"deleted "a""#, false),
            &text_result(r#"saved "a" (1 notes)"#, false),
            &text_result(r#"declined/expired: Delete the note "a"?"#, true),
            &text_result(r#"declined/expired: Delete the note "a"?"#, true),
            &text_result(r#"["a"]"#, false),
        ]
    );
    for (i, call) in calls.iter().enumerate() {
        let expected = if [1, 3, 4].contains(&i) {
            vec![approval(r#"Delete the note "a"?"#)]
        } else {
            vec![]
        };
        assert_eq!(elicitations(call), expected, "call {i}");
    }

    // a Python client without an elicitation callback: the text, the request in _meta
    let out = python_client(
        &python,
        json!({
            "server": {"command": server, "args": []},
            "mode": mode,
            "elicit": false,
            "calls": [{"tool": "delete_note", "args": delete}]
        }),
    )
    .await;
    let result = &out["calls"][0]["result"];
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": r#"Approval required: Delete the note "a"?"#}])
    );
    assert_eq!(result["isError"], true);
    let pending = &result["_meta"]["toolnexus/pending"];
    assert_eq!(pending["kind"], "approval");
    assert_eq!(pending["prompt"], r#"Delete the note "a"?"#);
    assert!(
        pending["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("sus-")),
        "{pending}"
    );
}

#[tokio::test]
async fn python_client_drives_the_example_over_stdio() {
    example_over_stdio("legacy").await;
}

#[tokio::test]
async fn python_client_drives_the_example_over_stdio_in_rounds() {
    example_over_stdio("auto").await;
}

async fn toolkit_over_http(mode: &str) {
    let Some(python) = python() else { return };
    let server = McpService::new(toolkit())
        .serve_http("127.0.0.1:0")
        .await
        .expect("serves");
    let out = python_client(
        &python,
        json!({
            "server": {"url": server.url()},
            "mode": mode,
            "calls": [
                {"tool": "delete_file", "args": {"path": "/tmp/x"}, "reply": {"action": "accept"}},
                {"tool": "delete_file", "args": {"path": "/tmp/x"}, "reply": {"action": "decline"}},
                {"tool": "delete_file", "args": {"path": "/tmp/x"}, "reply": {"action": "cancel"}},
                {"tool": "book_trip", "args": {}, "reply": {"action": "accept", "content": {"city": "Oslo"}}},
                {"tool": "read_inbox", "args": {}, "reply": {"action": "accept"}},
                {"tool": "echo", "args": {"text": 5}}
            ]
        }),
    )
    .await;
    server.shutdown();
    let calls = out["calls"].as_array().expect("calls");
    let results: Vec<&Value> = calls.iter().map(|c| &c["result"]).collect();
    assert_eq!(
        results,
        [
            &text_result("deleted /tmp/x", false),
            &text_result("declined/expired: Delete /tmp/x?", true),
            &text_result("declined/expired: Delete /tmp/x?", true),
            &text_result("booked to Oslo", false),
            &text_result("inbox: 3 messages", false),
            &text_result(
                "invalid arguments for echo: text: invalid type: integer `5`, expected a string",
                true
            ),
        ]
    );
    for call in &calls[..3] {
        assert_eq!(elicitations(call), [approval("Delete /tmp/x?")]);
        // the request, kind and id, reaches Python in the elicitation's _meta
        assert_eq!(
            call["elicitations"][0]["_meta"]["toolnexus/pending"],
            json!({"id": "r-delete", "kind": "approval", "prompt": "Delete /tmp/x?"})
        );
    }
    assert_eq!(
        elicitations(&calls[3]),
        [
            json!({"mode": "form", "message": "Which city?", "requestedSchema": Destination::answer_schema()})
        ]
    );
    assert_eq!(
        elicitations(&calls[4]),
        [
            json!({"mode": "url", "message": "Login required: https://example.com/login", "url": "https://example.com/login", "elicitationId": "r-login"})
        ]
    );
}

#[tokio::test]
async fn python_client_over_streamable_http() {
    toolkit_over_http("legacy").await;
}

#[tokio::test]
async fn python_client_over_streamable_http_in_rounds() {
    toolkit_over_http("auto").await;
}

/// The Python SDK's client against a server that parks each suspended call in a run store:
/// asked live on the older protocol, by `input_required` naming the parked run on 2026-07-28.
/// (Each fixture tool once: their request ids are fixed, and a store keeps one run per id.)
async fn stored_toolkit_over_http(mode: &str) {
    let Some(python) = python() else { return };
    let server = McpService::new(toolkit())
        .with_store(std::sync::Arc::new(toolnexus::store::MemoryStore::new()))
        .serve_http("127.0.0.1:0")
        .await
        .expect("serves");
    let out = python_client(
        &python,
        json!({
            "server": {"url": server.url()},
            "mode": mode,
            "calls": [
                {"tool": "delete_file", "args": {"path": "/tmp/x"}, "reply": {"action": "decline"}},
                {"tool": "book_trip", "args": {}, "reply": {"action": "accept", "content": {"city": "Oslo"}}},
                {"tool": "read_inbox", "args": {}, "reply": {"action": "accept"}},
                {"tool": "echo", "args": {"text": "hi"}}
            ]
        }),
    )
    .await;
    server.shutdown();
    let calls = out["calls"].as_array().expect("calls");
    let results: Vec<&Value> = calls.iter().map(|c| &c["result"]).collect();
    assert_eq!(
        results,
        [
            &text_result("declined/expired: Delete /tmp/x?", true),
            &text_result("booked to Oslo", false),
            &text_result("inbox: 3 messages", false),
            &text_result("hi", false),
        ]
    );
    assert_eq!(elicitations(&calls[0]), [approval("Delete /tmp/x?")]);
    let ids: Vec<&Value> = calls[..3]
        .iter()
        .map(|c| &c["elicitations"][0]["_meta"]["toolnexus/pending"]["id"])
        .collect();
    assert_eq!(
        ids,
        [&json!("r-delete"), &json!("r-city"), &json!("r-login")]
    );
}

#[tokio::test]
async fn python_client_over_streamable_http_with_a_store() {
    stored_toolkit_over_http("legacy").await;
}

#[tokio::test]
async fn python_client_over_streamable_http_in_rounds_with_a_store() {
    stored_toolkit_over_http("auto").await;
}

fn answering(
    builder: McpServerBuilder,
    answers: Vec<fn(&Request) -> Answer>,
) -> (McpServerBuilder, Seen) {
    let (seen, handler) = scripted_answers(answers);
    (builder.on_elicitation(handler), seen)
}

async fn consume_python_server(builder: McpServerBuilder) {
    let (builder, seen) = answering(
        builder,
        vec![
            |r| r.accept(json!({"city": "Oslo"})),
            |r| r.decline(DeclineReason::Declined),
            |r| r.decline(DeclineReason::Cancelled),
            |r| Answer::ok(r.id.clone()),
            |r| r.decline(DeclineReason::Declined),
        ],
    );
    let server = builder.connect().await.expect("the Python server connects");
    let toolkit = Toolkit::builder()
        .tools(server.tools())
        .build()
        .expect("valid toolkit");
    let mut names: Vec<&str> = toolkit.tools().iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(names, ["py_ask_city", "py_echo", "py_login"]);
    let run = |name: &'static str, args: Value| {
        let toolkit = &toolkit;
        async move {
            let r = toolkit.execute(name, args, &Context::new()).await;
            (r.output, r.is_error)
        }
    };
    assert_eq!(
        run("py_echo", json!({"text": "hi"})).await,
        ("hi".into(), false)
    );
    for expected in ["city: Oslo", "declined", "cancelled"] {
        assert_eq!(
            run("py_ask_city", json!({})).await,
            (expected.into(), false)
        );
    }
    for expected in ["logged in", "declined"] {
        assert_eq!(run("py_login", json!({})).await, (expected.into(), false));
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 5);
    for r in &seen[..3] {
        assert_eq!(
            (r.kind.as_str(), r.prompt.as_str(), r.url.as_deref()),
            ("input", "Which city?", None)
        );
        let data = serde_json::to_value(&r.data).unwrap();
        assert_eq!(data["mcpServer"], "py");
        assert_eq!(data["schema"]["type"], "object");
        assert_eq!(data["schema"]["properties"]["city"]["type"], "string");
        assert_eq!(
            data["schema"]["properties"]["city"]["description"],
            "The city."
        );
        assert_eq!(data["schema"]["required"], json!(["city"]));
    }
    for r in &seen[3..] {
        assert_eq!(
            (r.kind.as_str(), r.prompt.as_str(), r.url.as_deref()),
            (
                "authorization",
                "Log in to Example",
                Some("https://example.com/login")
            )
        );
        assert_eq!(
            serde_json::to_string(&r.data).unwrap(),
            r#"{"elicitationId":"e-1","mcpServer":"py"}"#
        );
    }
    server.close().await;
}

#[tokio::test]
async fn a_python_server_that_elicits_is_consumed_over_stdio() {
    let Some(python) = python() else { return };
    let builder = McpServer::stdio("py", python.to_string_lossy())
        .args([script("server.py"), "stdio".to_owned()])
        .prefix("py_");
    consume_python_server(builder).await;
}

#[tokio::test]
async fn a_python_server_that_elicits_is_consumed_over_streamable_http() {
    let Some(python) = python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = tokio::process::Command::new(&python)
        .arg(script("server.py"))
        .args(["http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the Python server starts");
    let url = format!("http://127.0.0.1:{port}/mcp");
    // wait until it listens
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    consume_python_server(McpServer::http("py", url).prefix("py_")).await;
    let _ = child.kill().await;
}
