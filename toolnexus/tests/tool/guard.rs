//! `Toolkit::execute` around `#[tool]` functions: timeouts, cancellation and panics stay
//! results, whether the tool finishes at once or waits.

use std::time::Duration;

use serde_json::json;
use toolnexus::{CancellationToken, Context, ToolResult, Toolkit, tool};

/// Waits `ms` milliseconds, then answers.
#[tool]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms}")
}

/// Answers at once.
#[tool]
fn quick() -> &'static str {
    "quick"
}

/// Panics after waiting.
#[tool]
async fn late_panic() -> String {
    tokio::time::sleep(Duration::from_millis(5)).await;
    panic!("late boom")
}

fn kit() -> Toolkit {
    Toolkit::builder()
        .tool(Slow)
        .tool(Quick)
        .tool(LatePanic)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_timeout_ends_a_waiting_tool() {
    let ctx = Context::new().with_timeout(Duration::from_millis(20));
    assert_eq!(
        kit().execute("slow", json!({"ms": 5_000}), &ctx).await,
        ToolResult::error("tool slow timed out after 20ms")
    );
    assert_eq!(
        kit().execute("slow", json!({"ms": 1}), &ctx).await,
        ToolResult::success("slept 1")
    );
}

#[tokio::test]
async fn cancellation_ends_a_waiting_tool_and_stops_a_new_one() {
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    assert_eq!(
        kit().execute("slow", json!({"ms": 5_000}), &ctx).await,
        ToolResult::error("tool slow was cancelled")
    );
    canceller.await.unwrap();
    assert_eq!(
        kit().execute("quick", json!({}), &ctx).await,
        ToolResult::error("tool quick was cancelled")
    );
}

#[tokio::test]
async fn a_panic_after_waiting_is_a_failure() {
    assert_eq!(
        kit()
            .execute("late_panic", json!({}), &Context::new())
            .await,
        ToolResult::error("tool late_panic panicked: late boom")
    );
    assert_eq!(
        kit().execute("quick", json!({}), &Context::new()).await,
        ToolResult::success("quick")
    );
}
