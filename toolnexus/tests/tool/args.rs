//! `#[tool]` argument decoding at run time: exact outputs, exact error messages.

// Tools take their arguments by value and may be `async` without awaiting: these tests write
// tools the way users do, and the expectations are long golden strings.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unused_async,
    clippy::result_large_err,
    clippy::too_many_lines,
    clippy::unnecessary_wraps
)]

use serde_json::{Value, json};
use toolnexus::{Context, ToolResult, Toolkit, tool};

/// Book a flight for the traveller.
#[tool]
async fn book_flight(
    /// The flight number.
    flight: String,
    /// How many seats; one when omitted.
    seats: Option<u8>,
    ctx: &toolnexus::Context,
) -> String {
    let _ = ctx;
    format!("{flight} x{}", seats.unwrap_or(1))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Item {
    sku: String,
    qty: u32,
}

/// Place an order.
#[tool]
fn order(
    items: Vec<Item>,
    /// Gift wrap.
    #[arg(default = true)]
    wrap: bool,
    #[arg(rename = "deliveryNote")] note: Option<String>,
    by: &str,
    tags: &[String],
) -> String {
    let lines: Vec<String> = items
        .iter()
        .map(|i| format!("{}x{}", i.qty, i.sku))
        .collect();
    format!(
        "{} wrap={wrap} note={note:?} by={by} tags={}",
        lines.join(","),
        tags.join("+")
    )
}

/// Takes nothing.
#[tool]
fn nothing() -> &'static str {
    "ok"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LooseArgs {
    a: u8,
}

/// Takes a struct without `deny_unknown_fields`.
#[tool]
fn loose(#[args] LooseArgs { a }: LooseArgs) -> u8 {
    a
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct StrictArgs {
    a: u8,
    b: Option<u8>,
}

/// Takes a struct with `deny_unknown_fields`.
#[tool]
fn strict(#[args] s: StrictArgs) -> String {
    format!("{}{:?}", s.a, s.b)
}

fn kit() -> Toolkit {
    Toolkit::builder()
        .tool(BookFlight)
        .tool(Order)
        .tool(Nothing)
        .tool(Loose)
        .tool(Strict)
        .build()
        .unwrap()
}

async fn run(name: &str, args: Value) -> ToolResult {
    kit().execute(name, args, &Context::new()).await
}

fn failure(text: &str) -> ToolResult {
    ToolResult::error(text)
}

#[tokio::test]
async fn decodes_and_calls() {
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503", "seats": 2})).await,
        ToolResult::success("AI-503 x2")
    );
    // Option: absent and null both read as None
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503"})).await,
        ToolResult::success("AI-503 x1")
    );
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503", "seats": null})).await,
        ToolResult::success("AI-503 x1")
    );
}

#[tokio::test]
async fn wrong_types_name_the_field_and_what_was_expected() {
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503", "seats": "two"})).await,
        failure(
            r#"invalid arguments for book_flight: seats: invalid type: string "two", expected u8"#
        )
    );
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503", "seats": 300})).await,
        failure(
            "invalid arguments for book_flight: seats: invalid value: integer `300`, expected u8"
        )
    );
    assert_eq!(
        run("book_flight", json!({"seats": 1})).await,
        failure("invalid arguments for book_flight: missing field `flight`")
    );
    assert_eq!(
        run("book_flight", json!({"flight": "AI-503", "sets": 1})).await,
        failure(
            "invalid arguments for book_flight: unknown field `sets`, expected `flight` or `seats`"
        )
    );
    assert_eq!(
        run("book_flight", json!(["AI-503"])).await,
        failure("invalid arguments for book_flight: expected a JSON object, got an array")
    );
}

#[tokio::test]
async fn nested_paths_defaults_renames_and_borrowed_parameters() {
    assert_eq!(
        run(
            "order",
            json!({"items": [{"sku": "A", "qty": 2}], "by": "ann", "tags": ["x", "y"]})
        )
        .await,
        ToolResult::success("2xA wrap=true note=None by=ann tags=x+y")
    );
    assert_eq!(
        run(
            "order",
            json!({"items": [], "wrap": false, "deliveryNote": "door", "by": "bo", "tags": []})
        )
        .await,
        ToolResult::success(" wrap=false note=Some(\"door\") by=bo tags=")
    );
    assert_eq!(
        run(
            "order",
            json!({"items": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": -1}], "by": "a", "tags": []})
        )
        .await,
        failure("invalid arguments for order: items[1].qty: invalid value: integer `-1`, expected u32")
    );
    assert_eq!(
        run(
            "order",
            json!({"items": [{"sku": "A", "qty": 1, "price": 3}], "by": "a", "tags": []})
        )
        .await,
        failure(
            "invalid arguments for order: items[0]: unknown field `price`, expected `sku` or `qty`"
        )
    );
    assert_eq!(
        run(
            "order",
            json!({"items": [], "by": "a", "tags": [], "note": "x"})
        )
        .await,
        failure(
            "invalid arguments for order: unknown field `note`, expected one of `items`, `wrap`, `deliveryNote`, `by`, `tags`"
        )
    );
    assert_eq!(
        run(
            "order",
            json!({"items": [], "by": "a", "tags": [], "wrap": null})
        )
        .await,
        // `null` reads as absent (OpenAI strict schemas send it for optional arguments)
        ToolResult::success(" wrap=true note=None by=a tags=")
    );
}

#[tokio::test]
async fn no_parameters_means_no_keys() {
    assert_eq!(run("nothing", json!({})).await, ToolResult::success("ok"));
    assert_eq!(run("nothing", Value::Null).await, ToolResult::success("ok"));
    assert_eq!(
        run("nothing", json!({"x": 1})).await,
        failure("invalid arguments for nothing: unknown field `x`, there are no fields")
    );
}

#[tokio::test]
async fn an_arguments_struct_rejects_unknown_keys_either_way() {
    assert_eq!(
        run("loose", json!({"a": 7})).await,
        ToolResult::success("7")
    );
    assert_eq!(
        run("loose", json!({"a": 7, "z": 1})).await,
        failure("invalid arguments for loose: unknown field `z`, expected `a`")
    );
    assert_eq!(
        run("strict", json!({"a": 7, "b": 1})).await,
        ToolResult::success("7Some(1)")
    );
    assert_eq!(
        run("strict", json!({"a": 7, "z": 1})).await,
        failure("invalid arguments for strict: unknown field `z`, expected `a` or `b`")
    );
    assert_eq!(
        run("strict", json!({"a": "x"})).await,
        failure(r#"invalid arguments for strict: a: invalid type: string "x", expected u8"#)
    );
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(
        book_flight("X".to_owned(), Some(3), &Context::new()).await,
        "X x3"
    );
}
