//! Our MCP server (`mcp_peer toolnexus`, the fixture toolkit served by
//! `toolnexus::mcp::McpService` over stdio) driven by the family's upstream Rust crate,
//! `toolnexus` 0.23 from crates.io, as a real MCP client: `load_mcp_with` starts the server as
//! a child process, lists its tools, calls them, and answers elicitations through its `wait_for`
//! bridge (`src/mcp/elicit.rs`). The path of the server binary comes from
//! `$TOOLNEXUS_MCP_PEER` (set by `ci/check-upstream-interop.sh`, which builds it first).
//!
//! What upstream does differently, pinned here so a change on either side shows:
//! - its bridge reads only `mode`, `message`, `requestedSchema` and `url`: every form
//!   elicitation reaches `wait_for` as `kind = "input"` with an `elc-…` id of its own, so an
//!   approval is an `input` with our approval form (no fields) and our request id and kind
//!   (sent in `_meta["toolnexus/pending"]`) are not used;
//! - its per-call timeout is an idle timeout reset by progress notifications, so a person slower
//!   than the timeout still gets the call done as long as our progress interval (5 s by default)
//!   is shorter than the client's timeout; when it is not, upstream ends the call with
//!   "mcp idle timeout after …ms without progress" and the person's later answer is dropped.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use toolnexus::client::WaitForFn;
use toolnexus::mcp::{load_mcp_with, McpLoadOptions, McpSource, McpStatus, ServerConfig};
use toolnexus::tool::{Answer, Request, Tool, ToolContext, ToolHints, ToolResult};

/// What the person does with each request, and what they were asked.
#[derive(Clone, Default)]
struct Person {
    /// Every request that reached `wait_for`, in order.
    seen: Arc<Mutex<Vec<Request>>>,
    /// When each answer was handed back (after thinking).
    answered_at: Arc<Mutex<Vec<Instant>>>,
}

impl Person {
    /// A person who thinks `thinks`, then answers every request with `answer(request)`.
    fn wait_for(&self, thinks: Duration, answer: fn(&Request) -> Answer) -> WaitForFn {
        let person = self.clone();
        Arc::new(move |request: Request| {
            let person = person.clone();
            Box::pin(async move {
                person.seen.lock().unwrap().push(request.clone());
                tokio::time::sleep(thinks).await;
                person.answered_at.lock().unwrap().push(Instant::now());
                Ok(answer(&request))
            })
        })
    }

    fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn approve(request: &Request) -> Answer {
    Answer {
        id: request.id.clone(),
        ok: true,
        ..Answer::default()
    }
}

fn decline(request: &Request) -> Answer {
    Answer {
        id: request.id.clone(),
        ok: false,
        reason: "declined".into(),
        ..Answer::default()
    }
}

fn oslo(request: &Request) -> Answer {
    Answer {
        id: request.id.clone(),
        ok: true,
        data: Some(object(json!({"city": "Oslo"}))),
        ..Answer::default()
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Our server binary, built by `ci/check-upstream-interop.sh`.
fn peer_binary() -> String {
    let path = std::env::var("TOOLNEXUS_MCP_PEER")
        .expect("TOOLNEXUS_MCP_PEER names our mcp_peer binary (run ci/check-upstream-interop.sh)");
    assert!(
        std::path::Path::new(&path).is_file(),
        "TOOLNEXUS_MCP_PEER={path} is not a file"
    );
    path
}

/// Upstream connects to our server (`ours`) with this per-call timeout and `wait_for`.
async fn connect(timeout: Duration, wait_for: Option<WaitForFn>) -> McpSource {
    let config = BTreeMap::from([(
        "ours".to_owned(),
        ServerConfig {
            command: vec![peer_binary(), "toolnexus".into()],
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap(),
            ..ServerConfig::default()
        },
    )]);
    let source = load_mcp_with(
        &config,
        McpLoadOptions {
            wait_for,
            ..McpLoadOptions::default()
        },
    )
    .await;
    assert_eq!(
        source.status.get("ours"),
        Some(&McpStatus::Connected),
        "upstream connects to our server: {:?}",
        source.errors
    );
    source
}

fn tool<'a>(source: &'a McpSource, name: &str) -> &'a Tool {
    source
        .tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("upstream lists {name}"))
}

async fn call(source: &McpSource, name: &str, args: Value) -> ToolResult {
    tool(source, name).call(args, ToolContext::default()).await
}

fn result(output: &str, is_error: bool) -> (String, bool) {
    (output.to_owned(), is_error)
}

fn seen(r: &ToolResult) -> (String, bool) {
    (r.output.clone(), r.is_error)
}

/// The `server` key upstream puts in every MCP tool result's metadata.
fn from_ours(r: &ToolResult) {
    assert_eq!(
        r.metadata.as_ref().and_then(|m| m.get("server")),
        Some(&json!("ours"))
    );
}

#[tokio::test]
async fn upstream_lists_our_tools_with_their_hints() {
    let source = connect(Duration::from_secs(30), None).await;
    let mut names: Vec<&str> = source.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "ours_book_trip",
            "ours_boom",
            "ours_delete_file",
            "ours_echo",
            "ours_insist",
            "ours_pay",
            "ours_question",
            "ours_read_inbox",
            "ours_take_note",
            "ours_wire_money",
        ]
    );
    // annotations travel: echo is read-only and closed-world, delete_file destructive
    assert_eq!(
        tool(&source, "ours_echo").hints,
        Some(ToolHints {
            read_only: true,
            destructive: false,
            open_world: false,
        })
    );
    let delete = tool(&source, "ours_delete_file");
    assert!(delete.hints.is_some_and(|h| h.destructive && !h.read_only));
    // upstream normalizes the input schema: our `path` argument is required
    assert_eq!(delete.input_schema["required"], json!(["path"]));
    assert_eq!(
        delete.input_schema["properties"]["path"]["type"],
        json!("string")
    );
    source.close().await;
}

#[tokio::test]
async fn a_plain_call_and_a_failing_one() {
    let source = connect(Duration::from_secs(30), None).await;
    let r = call(&source, "ours_echo", json!({"text": "hello upstream"})).await;
    assert_eq!(seen(&r), result("hello upstream", false));
    from_ours(&r);
    // a tool that panics is an error result, and the server keeps serving
    let r = call(&source, "ours_boom", json!({})).await;
    assert!(r.is_error, "{r:?}");
    let r = call(&source, "ours_echo", json!({"text": "still here"})).await;
    assert_eq!(seen(&r), result("still here", false));
    source.close().await;
}

#[tokio::test]
async fn an_approval_approved_and_declined_through_upstreams_bridge() {
    for (answer, expected) in [
        (
            approve as fn(&Request) -> Answer,
            result("deleted /tmp/a.txt", false),
        ),
        (
            decline,
            result("declined/expired: Delete /tmp/a.txt?", true),
        ),
    ] {
        let person = Person::default();
        let source = connect(
            Duration::from_secs(30),
            Some(person.wait_for(Duration::ZERO, answer)),
        )
        .await;
        let r = call(&source, "ours_delete_file", json!({"path": "/tmp/a.txt"})).await;
        assert_eq!(seen(&r), expected);
        let asked = person.seen();
        assert_eq!(asked.len(), 1, "asked once: {asked:?}");
        // upstream's bridge: a form elicitation is `input` with the requested schema, an id of
        // its own; our approval is a form with no fields
        assert_eq!(asked[0].kind, "input");
        assert_eq!(asked[0].prompt, "Delete /tmp/a.txt?");
        assert!(asked[0].id.starts_with("elc-"), "{}", asked[0].id);
        let schema = &asked[0].data.as_ref().expect("data")["schema"];
        assert_eq!(schema["type"], json!("object"));
        assert_eq!(schema["properties"], json!({}));
        source.close().await;
    }
}

#[tokio::test]
async fn an_input_form_is_answered() {
    let person = Person::default();
    let source = connect(
        Duration::from_secs(30),
        Some(person.wait_for(Duration::ZERO, oslo)),
    )
    .await;
    let r = call(&source, "ours_book_trip", json!({})).await;
    assert_eq!(seen(&r), result("booked to Oslo", false));
    let asked = person.seen();
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    assert_eq!(asked[0].kind, "input");
    assert_eq!(asked[0].prompt, "Which city?");
    let schema = &asked[0].data.as_ref().expect("data")["schema"];
    assert_eq!(schema["properties"]["city"]["type"], json!("string"));
    assert_eq!(schema["required"], json!(["city"]));
    source.close().await;
}

/// Upstream's per-call timeout (6 s) is shorter than the person (8 s), longer than our
/// progress interval (5 s): progress resets it, and the call completes with the answer. A
/// timeout (2 s) shorter than our progress interval ends the call after 2 s of silence, the
/// person's later answer is dropped, and the connection keeps working.
#[tokio::test]
async fn a_person_slower_than_upstreams_timeout() {
    let slow = async {
        let person = Person::default();
        let source = connect(
            Duration::from_secs(6),
            Some(person.wait_for(Duration::from_secs(8), oslo)),
        )
        .await;
        let started = Instant::now();
        let r = call(&source, "ours_book_trip", json!({})).await;
        let took = started.elapsed();
        assert_eq!(seen(&r), result("booked to Oslo", false));
        assert!(
            took >= Duration::from_secs(8),
            "the person took 8 s: {took:?}"
        );
        source.close().await;
    };
    let no_progress_in_time = async {
        let person = Person::default();
        let source = connect(
            Duration::from_secs(2),
            Some(person.wait_for(Duration::from_secs(3), oslo)),
        )
        .await;
        let started = Instant::now();
        let r = call(&source, "ours_book_trip", json!({})).await;
        let took = started.elapsed();
        assert_eq!(
            seen(&r),
            result("mcp idle timeout after 2000ms without progress", true)
        );
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(3),
            "upstream gave up at its timeout, before the person answered: {took:?}"
        );
        // the person answers later; the connection still serves calls
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(person.answered_at.lock().unwrap().len(), 1);
        let r = call(&source, "ours_echo", json!({"text": "after"})).await;
        assert_eq!(seen(&r), result("after", false));
        source.close().await;
    };
    tokio::join!(slow, no_progress_in_time);
}
