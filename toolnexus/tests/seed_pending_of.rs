//! Rust twins of every example on the seed page (`pending-of`, from the Clojure port).
//!
//! Tools are written with `FnTool` here; once `#[tool]` lands they read the same with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use toolnexus::{
    Context, FnTool, Form, Request, Suspension, ToolResult, Toolkit, ask, assert_not_pending,
    assert_pending, pending_of, retried, testing,
};

#[derive(Form, serde::Deserialize)]
struct Destination {
    /// The city to fly to.
    city: String,
}

fn book_flight() -> FnTool {
    FnTool::builder("book_flight")
        .description("Book a flight.")
        .schema(json!({
            "type": "object",
            "properties": {"flight": {"type": "string"}},
            "required": ["flight"]
        }))
        .handler(|args, ctx: Context| async move {
            let flight = args["flight"].as_str().unwrap_or_default().to_owned();
            let dest = ask!(ctx, input "Which city?", schema = Destination);
            Ok::<_, Suspension>(format!("booked {flight} to {}", dest.city))
        })
        .build()
        .unwrap()
}

// "Testing a suspending tool without a client"
#[tokio::test]
async fn testing_a_suspending_tool_without_a_client() {
    let result = testing::call(&book_flight(), json!({"flight": "AI-503"})).await;

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
#[tokio::test]
async fn retried_never_retries_a_suspension() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let parked = FnTool::builder("book_flight")
        .description("Always asks.")
        .handler(move |_, _| {
            seen.fetch_add(1, Ordering::SeqCst);
            async { toolnexus::suspend!(input "Which city?") }
        })
        .build()
        .unwrap();
    let tool = retried(parked, 3);
    let r = testing::call(&tool, json!({})).await;
    assert_pending!(r, input "Which city?");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "a suspension is handed straight back"
    );

    // a real error gets one more go, and a success is handed back
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let flaky = FnTool::builder("flaky")
        .description("Fails once.")
        .handler(move |_, _| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    ToolResult::error("busy")
                } else {
                    ToolResult::success("ok")
                }
            }
        })
        .build()
        .unwrap();
    let r = testing::call(&retried(flaky, 1), json!({})).await;
    toolnexus::assert_success!(r, "ok");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
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

fn list_repos() -> FnTool {
    FnTool::builder("list_repos")
        .description("Lists your GitHub repositories.")
        .handler(|_, ctx: Context| async move {
            let () = ask!(
                ctx,
                authorization "Connect your GitHub account to continue",
                url = "https://example.com/oauth/authorize",
            );
            Ok::<_, Suspension>("toolnexus, toolnexus-rs")
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn driving_tools_yourself_with_no_client_loop() {
    let toolkit = Toolkit::builder().tool(list_repos()).build().unwrap();

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
    let plain = FnTool::builder("ping")
        .description("Pings.")
        .handler(|_, _| async { "pong" })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(plain).build().unwrap();
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
