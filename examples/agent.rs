//! The main example: a tool that suspends to ask a human, answered and retried.
//!
//! Run with `cargo run -p toolnexus-examples --example agent`.

use serde_json::json;
use toolnexus::{Context, FnTool, Request, ToolResult, Toolkit, pending_of};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let book = FnTool::builder("book_flight")
        .description("Book a flight to a city; asks which city when it is not given.")
        .handler(|args, ctx| async move {
            let flight = args
                .get("flight")
                .and_then(|v| v.as_str())
                .unwrap_or("AI-503")
                .to_owned();
            match ctx.answer_data::<String>() {
                Ok(Some(city)) => ToolResult::success(format!("booked {flight} to {city}")),
                Ok(None) => ToolResult::suspended(Request::input("Which city?")),
                Err(e) => ToolResult::error(e.to_string()),
            }
        })
        .build()?;
    let toolkit = Toolkit::builder().tool(book).build()?;

    let args = json!({"flight": "AI-503"});
    let first = toolkit
        .execute("book_flight", args.clone(), &Context::new())
        .await;
    let request = pending_of(&first).ok_or("the tool did not suspend")?;
    println!("tool suspended: {}", first.output);
    println!("request: {}", serde_json::to_string(request)?);

    let answer = request.accept("Oslo");
    println!("answer: {}", serde_json::to_string(&answer)?);
    let second = toolkit
        .execute("book_flight", args, &Context::new().with_answer(answer))
        .await;
    println!("after the answer: {}", second.output);
    Ok(())
}
