//! Rust twins of every example on the seed page (`pending-of`, from the Clojure port).
//!
//! Tools are written with `#[tool]`, as the seed page writes them with `deftool`.

use std::sync::atomic::{AtomicU32, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use toolnexus::{
    Context, Form, Request, Suspension, ToolResult, Toolkit, ask, assert_not_pending,
    assert_pending, pending_of, testing, tool, tool::retried,
};

#[derive(Form, serde::Deserialize)]
struct Destination {
    /// The city to fly to.
    city: String,
}

/// Book a flight.
#[tool]
fn book_flight(flight: &str, ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let dest = ask!(ctx, input "Which city?", schema = Destination);
    Ok(format!("booked {flight} to {}", dest.city))
}

// "Testing a suspending tool without a client"
#[tokio::test]
async fn testing_a_suspending_tool_without_a_client() {
    let result = testing::call(&BookFlight, json!({"flight": "AI-503"})).await;

    let req = pending_of(&result).expect("a suspension");
    assert!(req.id.starts_with("sus-"), "{}", req.id);
    assert_eq!(req.kind, "input");
    assert_eq!(req.prompt, "Which city?");
    assert_eq!(
        serde_json::to_value(&req.data).unwrap(),
        json!({"schema": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city to fly to."}},
            "required": ["city"]
        }})
    );

    assert!(result.is_error); // a suspension always reads as "no value produced"
    assert_eq!(result.output, "Input required: Which city?");

    // an ordinary result has no pending
    assert_eq!(pending_of(&ToolResult::success("plain")), None);

    // the same in one line each
    assert_pending!(result, input "Which city?", schema = Destination);
    assert_not_pending!(ToolResult::success("plain"));
}

// "A wrapper that must not mistake a suspension for a failure"
/// How many times `always_asks` ran (only `retried_never_retries_a_suspension` calls it).
static ASKS: AtomicU32 = AtomicU32::new(0);
/// How many times `flaky` ran (only `retried_never_retries_a_suspension` calls it).
static FLAKY_CALLS: AtomicU32 = AtomicU32::new(0);

/// Always asks.
#[tool(name = "book_flight")]
fn always_asks() -> Suspension {
    ASKS.fetch_add(1, Ordering::SeqCst);
    toolnexus::suspend!(input "Which city?")
}

/// Fails once.
#[tool]
fn flaky() -> ToolResult {
    if FLAKY_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        ToolResult::error("busy")
    } else {
        ToolResult::success("ok")
    }
}

#[tokio::test]
async fn retried_never_retries_a_suspension() {
    let tool = retried(AlwaysAsks, 3);
    let r = testing::call(&tool, json!({})).await;
    assert_pending!(r, input "Which city?");
    assert_eq!(
        ASKS.load(Ordering::SeqCst),
        1,
        "a suspension is handed straight back"
    );

    // a real error gets one more go, and a success is handed back
    let r = testing::call(&retried(Flaky, 1), json!({})).await;
    toolnexus::assert_success!(r, "ok");
    assert_eq!(FLAKY_CALLS.load(Ordering::SeqCst), 2);
}

// "Driving tools yourself, with no client loop"
#[derive(Debug, PartialEq, Serialize)]
struct Call {
    #[serde(rename = "for-model")]
    for_model: String,
    #[serde(rename = "for-human", skip_serializing_if = "Option::is_none")]
    for_human: Option<Request>,
}

async fn call_tool(toolkit: &Toolkit, name: &str, args: Value) -> Call {
    let r = toolkit.execute(name, args, &Context::new()).await;
    // park it: the model gets the placeholder, the human gets the prompt
    let for_human = pending_of(&r).cloned();
    Call {
        for_model: r.output,
        for_human,
    }
}

/// Lists your GitHub repositories.
#[tool]
fn list_repos(ctx: &toolnexus::Context) -> Result<&'static str, Suspension> {
    let () = ask!(
        ctx,
        authorization "Connect your GitHub account to continue",
        url = "https://example.com/oauth/authorize",
    );
    Ok("toolnexus, toolnexus-rs")
}

/// Pings.
#[tool]
fn ping() -> &'static str {
    "pong"
}

#[tokio::test]
async fn driving_tools_yourself_with_no_client_loop() {
    let toolkit = Toolkit::builder().tool(ListRepos).build().unwrap();

    let call = call_tool(&toolkit, "list_repos", json!({})).await;
    assert_eq!(
        call.for_model,
        "Login required: https://example.com/oauth/authorize"
    );
    let req = call.for_human.clone().expect("parked");
    let mut human = serde_json::to_value(&call).unwrap();
    human["for-human"]["id"] = json!("sus-…");
    assert_eq!(
        human,
        json!({
            "for-model": "Login required: https://example.com/oauth/authorize",
            "for-human": {
                "id": "sus-…",
                "kind": "authorization",
                "prompt": "Connect your GitHub account to continue",
                "url": "https://example.com/oauth/authorize"
            }
        })
    );

    // once the human answers, re-execute the same tool with the same args and the answer in
    // the context: precisely what the client loop does internally
    let ctx = Context::new().with_answer(req.accept(()));
    let r = toolkit.execute("list_repos", json!({}), &ctx).await;
    toolnexus::assert_success!(r, "toolnexus, toolnexus-rs");

    // an ordinary tool is not parked
    let toolkit = Toolkit::builder().tool(Ping).build().unwrap();
    assert_eq!(
        call_tool(&toolkit, "ping", json!({})).await,
        Call {
            for_model: "pong".to_owned(),
            for_human: None
        }
    );
}

// "RunResult vs ToolResult": the ToolResult half (the RunResult half belongs to the loop)
#[test]
fn tool_result_suspension_check() {
    let r = ToolResult::suspended(Request::input("Which city?").with_id("r1"));
    assert!(pending_of(&r).is_some());
    assert_eq!(pending_of(&r).unwrap().id, "r1");
    assert_eq!(r.pending(), pending_of(&r));
}
