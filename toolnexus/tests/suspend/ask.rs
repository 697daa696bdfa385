//! `ask!`: the typed answer when the context carries an accepted one, else an early return of
//! the suspension, from every supported return type.

use serde_json::json;
use toolnexus::{
    Answer, Context, FnTool, Form, IntoToolResult, Request, Suspension, Tool, ToolResult, ask,
    assert_failure, assert_pending, assert_success, request::DeclineReason, testing,
};

#[derive(Debug, PartialEq, Form, serde::Deserialize)]
struct Trip {
    /// Where to.
    city: String,
    nights: u8,
}

fn plan(ctx: &Context) -> ToolResult {
    let trip = ask!(ctx, input "Where to?", schema = Trip, id = "r1");
    ToolResult::success(format!("{} nights in {}", trip.nights, trip.city))
}

#[test]
fn without_an_answer_it_returns_the_suspension() {
    let r = plan(&Context::new());
    let req = assert_pending!(r, input "Where to?", id = "r1", schema = Trip);
    assert_eq!(req.kind, "input");
    assert_eq!(r.output, "Input required: Where to?");
}

#[test]
fn with_an_accepted_answer_it_evaluates_to_the_typed_data() {
    let ctx =
        Context::new().with_answer(Answer::accept("r1", json!({"city": "Oslo", "nights": 2})));
    assert_success!(plan(&ctx), "2 nights in Oslo");
}

#[test]
fn a_declined_answer_is_a_failure_naming_the_prompt() {
    let ctx = Context::new().with_answer(Answer::decline("r1", DeclineReason::Declined));
    assert_failure!(plan(&ctx), "declined: Where to?");
    let ctx = Context::new().with_answer(Answer::decline("r1", DeclineReason::Expired));
    assert_failure!(plan(&ctx), "expired: Where to?");
}

#[test]
fn answer_data_of_the_wrong_shape_is_a_failure_naming_the_field() {
    let ctx = Context::new().with_answer(Answer::accept(
        "r1",
        json!({"city": "Oslo", "nights": "two"}),
    ));
    assert_failure!(
        plan(&ctx),
        r#"invalid answer data at `nights`: invalid type: string "two", expected u8"#
    );
    let ctx = Context::new().with_answer(Answer::ok("r1"));
    assert_failure!(
        plan(&ctx),
        "invalid answer data at `.`: invalid type: null, expected struct Trip"
    );
}

#[allow(clippy::needless_pass_by_value)] // checks that `ask!` takes a `Context` by value too
fn as_result(ctx: Context) -> Result<String, Suspension> {
    let city: String = ask!(ctx, input "Which city?");
    Ok(format!("to {city}"))
}

fn as_boxed(ctx: &Context) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let city: String = ask!(ctx, input format!("Which city, {}?", "Ada"));
    Ok(format!("to {city}"))
}

fn as_suspension(ctx: &Context) -> Suspension {
    let () = ask!(ctx, approval "Go?");
    toolnexus::suspend!("done" "went")
}

#[test]
fn every_supported_return_type() {
    let none = Context::new();
    let oslo = Context::new().with_answer(Answer::accept("r1", "Oslo"));

    assert_pending!(as_result(none.clone()).into_tool_result(), input "Which city?");
    assert_success!(as_result(oslo.clone()).into_tool_result(), "to Oslo");

    assert_pending!(as_boxed(&none).into_tool_result(), input "Which city, Ada?");
    assert_success!(as_boxed(&oslo).into_tool_result(), "to Oslo");

    assert_pending!(as_suspension(&none).into_tool_result(), approval "Go?");
    let approved = Context::new().with_answer(Answer::ok("r1"));
    assert_pending!(as_suspension(&approved).into_tool_result(), "done" "went");
}

#[test]
fn a_failed_suspension_is_returned_as_is() {
    fn bad(ctx: &Context) -> ToolResult {
        let () = ask!(ctx, input "x", data = 5);
        ToolResult::success("unreachable")
    }
    assert_failure!(
        bad(&Context::new()),
        "invalid suspension: `data` must serialize to a JSON object, found a number"
    );
}

#[test]
fn authorization_yields_the_answer_data() {
    fn repos(ctx: &Context) -> ToolResult {
        let () = ask!(ctx, authorization, url = "https://x/login");
        ToolResult::success("3 repos")
    }
    let r = repos(&Context::new());
    let req = assert_pending!(r, authorization, url = "https://x/login");
    assert_eq!(req.prompt, "Login required: https://x/login");
    assert_success!(
        repos(&Context::new().with_answer(req.accept(()))),
        "3 repos"
    );
}

#[tokio::test]
async fn inside_an_fn_tool_handler() {
    let tool = FnTool::builder("book")
        .description("Books a trip.")
        .handler(|_args, ctx: Context| async move {
            let trip = ask!(ctx, input "Where to?", schema = Trip);
            Ok::<_, Suspension>(format!("booked {}", trip.city))
        })
        .build()
        .unwrap();
    let first = tool.execute(serde_json::Map::new(), &Context::new()).await;
    let req = assert_pending!(first, input "Where to?", schema = Trip);
    let second = testing::retry_with(
        &tool,
        json!({}),
        req.accept(json!({"city": "Rome", "nights": 1})),
    )
    .await;
    assert_success!(second, "booked Rome");
}

/// Books a trip.
#[toolnexus::tool]
fn book(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let trip = ask!(ctx, input "Where to?", schema = Trip);
    Ok(format!("booked {}", trip.city))
}

#[tokio::test]
async fn inside_a_tool_fn() {
    let first = Book.execute(serde_json::Map::new(), &Context::new()).await;
    let req = assert_pending!(first, input "Where to?", schema = Trip);
    let second = testing::retry_with(
        &Book,
        json!({}),
        req.accept(json!({"city": "Rome", "nights": 1})),
    )
    .await;
    assert_success!(second, "booked Rome");
}

#[test]
fn ask_for_a_string_accepts_the_familys_free_text_shape() {
    fn city(ctx: &Context) -> Result<String, Suspension> {
        let city: String = ask!(ctx, input "Which city?");
        Ok(format!("to {city}"))
    }
    let request = Request::input("Which city?").with_id("r1");
    let wrapped: Answer =
        serde_json::from_value(json!({"id": "r1", "ok": true, "data": {"output": "Oslo"}}))
            .unwrap();
    assert_eq!(
        city(&Context::new().with_answer(wrapped)).unwrap(),
        "to Oslo"
    );
    let bare = request.accept("Rome");
    assert_eq!(city(&Context::new().with_answer(bare)).unwrap(), "to Rome");
}

#[test]
fn ask_with_an_unknown_decline_reason_fails_with_that_reason() {
    fn city(ctx: &Context) -> ToolResult {
        let city: String = ask!(ctx, input "Which city?");
        ToolResult::success(city)
    }
    let answer: Answer =
        serde_json::from_value(json!({"id": "r1", "ok": false, "reason": "timeout"})).unwrap();
    let r = city(&Context::new().with_answer(answer));
    assert!(r.is_failure());
    assert_eq!(r.output, "timeout: Which city?");
}
