//! `#[tool]` parameters of derived types: the schema spliced in, the decoder used, errors
//! naming the tool and the path.

// tools take their arguments by value, as a model's call hands them over
#![allow(clippy::needless_pass_by_value)]

use futures_util::FutureExt;
use serde_json::json;
use toolnexus::{Context, Tool, Toolkit, tool};

use super::types::{Category, Expense, Lookup, Payment};

/// File an expense.
#[tool]
fn file_expense(
    /// The expense.
    expense: Expense,
    /// How it was paid, if known.
    payment: Option<Payment>,
    /// Other expenses of the same trip.
    #[arg(default = Vec::new())]
    others: Vec<Expense>,
) -> String {
    format!(
        "{} {:?} {:?} {}",
        expense.amount,
        expense.category,
        payment,
        others.len()
    )
}

/// Search, arguments in one struct.
#[tool]
fn search(
    #[args] Lookup {
        query,
        limit,
        exact,
    }: Lookup,
) -> String {
    format!("{query} {limit} {exact:?}")
}

/// Both kinds side by side: a derived type and a `Deserialize + JsonSchema` one.
#[tool]
fn mixed(category: Category, point: Point) -> String {
    format!("{category:?} {}", point.x)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
}

fn run(kit: &Toolkit, name: &str, args: serde_json::Value) -> toolnexus::ToolResult {
    kit.execute(name, args, &Context::new())
        .now_or_never()
        .unwrap()
}

#[test]
fn a_derived_parameter_is_described_and_decoded_by_the_derive() {
    let schema = FileExpense.input_schema();
    assert_eq!(
        schema["properties"]["expense"]["description"],
        "The expense."
    );
    assert_eq!(
        schema["properties"]["expense"]["required"],
        json!(["amount", "cat", "tags"])
    );
    assert_eq!(
        schema["properties"]["payment"]["anyOf"][1],
        json!({"type": "null"})
    );
    assert_eq!(
        schema["properties"]["payment"]["description"],
        "How it was paid, if known."
    );
    assert_eq!(schema["properties"]["others"]["type"], "array");
    // a default of a derived type is shown as the derive writes it (no `Serialize` needed)
    assert_eq!(schema["properties"]["others"]["default"], json!([]));
    assert_eq!(schema["required"], json!(["expense"]));
    let kit = Toolkit::builder()
        .tool(FileExpense)
        .tool(Search)
        .tool(Mixed)
        .build()
        .unwrap();
    let r = run(
        &kit,
        "file_expense",
        json!({"expense": {"amount": 5, "cat": "travel", "tags": []}, "payment": {"kind": "cash"}}),
    );
    assert_eq!(r.output, "5 Travel Some(Cash) 0");
    let r = run(
        &kit,
        "file_expense",
        json!({"expense": {"amount": "5", "cat": "travel", "tags": []}}),
    );
    assert!(r.is_error);
    assert_eq!(
        r.output,
        r#"invalid arguments for file_expense: expense.amount: invalid type: string "5", expected u32"#
    );
    let r = run(
        &kit,
        "file_expense",
        json!({"others": [{"amount": 1, "cat": "x", "tags": []}]}),
    );
    assert_eq!(
        r.output,
        "invalid arguments for file_expense: missing field `expense`"
    );
    let r = run(
        &kit,
        "file_expense",
        json!({"expense": {"amount": 1, "cat": "travel", "tags": []}, "others": [{"amount": 1, "cat": "x", "tags": []}]}),
    );
    assert_eq!(
        r.output,
        "invalid arguments for file_expense: others[0].cat: unknown variant `x`, expected one of `travel`, `office_supplies`, `other`"
    );
}

#[test]
fn a_tool_schema_is_assembled_once_per_process() {
    // the same value on every call (a static), not a schema rebuilt per call
    assert!(std::ptr::eq(
        FileExpense.input_schema(),
        FileExpense.input_schema()
    ));
    assert!(std::ptr::eq(Search.input_schema(), Search.input_schema()));
}

#[test]
fn an_args_struct_that_derives_args() {
    let schema = Search.input_schema();
    assert_eq!(schema["required"], json!(["query", "limit"]));
    assert_eq!(schema["additionalProperties"], false);
    let kit = Toolkit::builder().tool(Search).build().unwrap();
    assert_eq!(
        run(&kit, "search", json!({"query": "q", "limit": 2})).output,
        "q 2 None"
    );
    assert_eq!(
        run(
            &kit,
            "search",
            json!({"query": "q", "limit": 2, "exact": "yes"})
        )
        .output,
        r#"invalid arguments for search: exact: invalid type: string "yes", expected a boolean"#
    );
    assert_eq!(
        run(&kit, "search", json!({"query": "q", "limit": 2, "page": 1})).output,
        "invalid arguments for search: unknown field `page`, expected one of `query`, `limit`, `exact`"
    );
}

#[test]
fn a_json_schema_type_still_works_beside_a_derived_one() {
    let schema = Mixed.input_schema();
    assert_eq!(
        schema["properties"]["category"]["enum"],
        json!(["travel", "office_supplies", "other"])
    );
    assert_eq!(
        schema["properties"]["point"]["properties"]["x"]["type"],
        "integer"
    );
    let kit = Toolkit::builder().tool(Mixed).build().unwrap();
    assert_eq!(
        run(
            &kit,
            "mixed",
            json!({"category": "travel", "point": {"x": 3}})
        )
        .output,
        "Travel 3"
    );
    assert_eq!(
        run(
            &kit,
            "mixed",
            json!({"category": "travel", "point": {"x": "3"}})
        )
        .output,
        r#"invalid arguments for mixed: point.x: invalid type: string "3", expected i32"#
    );
}
