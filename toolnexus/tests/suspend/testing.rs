//! The test helpers, both ways: they pass on the right input and panic with the documented
//! message on the wrong one.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;
use toolnexus::{
    Answer, Form, Request, ToolResult, assert_failure, assert_not_pending, assert_pending,
    assert_success, request::DeclineReason, testing,
};

#[derive(Form, serde::Deserialize)]
#[allow(dead_code)] // only its schema is used
struct City {
    /// The city.
    city: String,
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap()
}

fn input(id: &str) -> ToolResult {
    ToolResult::suspended(Request::input("Which city?").with_id(id))
}

const INPUT_JSON: &str = r#"{
  "output": "Input required: Which city?",
  "isError": true,
  "metadata": {
    "pending": {
      "id": "r1",
      "kind": "input",
      "prompt": "Which city?"
    }
  }
}"#;

#[test]
fn assert_pending_passes_and_returns_the_request() {
    let r = input("r1");
    let req = assert_pending!(r);
    assert_eq!(req.id, "r1");
    let req = assert_pending!(r, input "Which city?");
    assert_eq!(req.prompt, "Which city?");
    assert_pending!(r, input);
    assert_pending!(r, input "Which city?", id = "r1", data = json!(null));
    let expected_prompt = String::from("Which city?");
    assert_pending!(r, input expected_prompt);
    assert_pending!(r, id = "r1");

    let auth = ToolResult::suspended(Request::authorization("https://x/login"));
    assert_pending!(auth, authorization, url = "https://x/login");
    assert_pending!(auth, authorization "Login required: https://x/login");

    let with_schema =
        toolnexus::suspend!(input "Which city?", schema = City, data = json!({"k": 1})).into();
    let with_schema: ToolResult = with_schema;
    assert_pending!(with_schema, input "Which city?", schema = City);
    assert_pending!(
        with_schema,
        input,
        data = json!({"k": 1, "schema": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}}, "required": ["city"]}})
    );
    let custom = ToolResult::suspended(Request::custom("review", "Check it"));
    assert_pending!(custom, "review" "Check it");
}

#[test]
fn assert_pending_on_a_plain_failure() {
    let r = ToolResult::error("no such flight");
    assert_eq!(
        panic_message(|| {
            assert_pending!(r, input "Which city?");
        }),
        "assert_pending! failed: not a suspension (a plain failure: \"no such flight\")\n\
         expected: a suspension of kind `input` with prompt \"Which city?\"\n\
         result: {\n  \"output\": \"no such flight\",\n  \"isError\": true\n}"
    );
}

#[test]
fn assert_pending_on_a_success() {
    let r = ToolResult::success("42");
    assert_eq!(
        panic_message(|| {
            assert_pending!(r);
        }),
        "assert_pending! failed: not a suspension (a success: \"42\")\n\
         expected: a suspension\n\
         result: {\n  \"output\": \"42\",\n  \"isError\": false\n}"
    );
}

#[test]
fn assert_pending_on_another_kind() {
    let r = input("r1");
    assert_eq!(
        panic_message(|| {
            assert_pending!(r, approval "Which city?");
        }),
        format!(
            "assert_pending! failed: a suspension of another kind (`input`)\n\
             expected: a suspension of kind `approval` with prompt \"Which city?\"\n\
             result: {INPUT_JSON}"
        )
    );
}

/// An assertion that must fail, its problem line and its expectation line.
type Case<'a> = (Box<dyn Fn() + 'a>, &'a str, &'a str);

#[test]
fn assert_pending_on_another_prompt_url_id_data_schema() {
    let r = input("r1");
    let cases: Vec<Case<'_>> = vec![
        (
            Box::new(|| {
                assert_pending!(r, input "Which town?");
            }),
            "the prompt differs: \"Which city?\"",
            "a suspension of kind `input` with prompt \"Which town?\"",
        ),
        (
            Box::new(|| {
                assert_pending!(r, input, url = "https://x");
            }),
            "the url differs: none",
            "a suspension of kind `input`, url \"https://x\"",
        ),
        (
            Box::new(|| {
                assert_pending!(r, id = "r2");
            }),
            "the id differs: \"r1\"",
            "a suspension, id \"r2\"",
        ),
        (
            Box::new(|| {
                assert_pending!(r, data = json!({"k": 1}));
            }),
            "the data differs: none",
            "a suspension, data {\"k\":1}",
        ),
        (
            Box::new(|| {
                assert_pending!(r, schema = City);
            }),
            "the answer schema differs: none",
            "a suspension, answer schema {\"properties\":{\"city\":{\"description\":\"The city.\",\"type\":\"string\"}},\"required\":[\"city\"],\"type\":\"object\"}",
        ),
    ];
    for (f, problem, expected) in cases {
        assert_eq!(
            panic_message(f),
            format!(
                "assert_pending! failed: {problem}\nexpected: {expected}\nresult: {INPUT_JSON}"
            )
        );
    }
}

#[test]
fn assert_pending_with_a_schema_that_cannot_be_built() {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct Deep {
        list: Vec<u8>,
    }
    let r = input("r1");
    assert_eq!(
        panic_message(|| {
            assert_pending!(r, schema = Deep);
        }),
        "assert_pending! failed: the expected answer schema cannot be built: invalid suspension: the answer schema of `Deep` is not a flat form: field `list` is an array; answer forms hold flat primitives only (string, number, integer, boolean, string enum)"
    );
}

#[test]
fn assert_not_pending_both_ways() {
    assert_not_pending!(ToolResult::success("ok"));
    assert_not_pending!(ToolResult::error("boom"));
    assert_eq!(
        panic_message(|| assert_not_pending!(input("r1"))),
        format!(
            "assert_not_pending! failed: a suspension of kind `input` with prompt \"Which city?\"\n\
             expected: no suspension\n\
             result: {INPUT_JSON}"
        )
    );
}

#[test]
fn assert_success_both_ways() {
    assert_success!(ToolResult::success("42"));
    assert_success!(ToolResult::success("42"), "42");
    assert_success!(ToolResult::success("42"), String::from("42"));
    assert_eq!(
        panic_message(|| assert_success!(input("r1"))),
        format!(
            "assert_success! failed: a suspension of kind `input` with prompt \"Which city?\", not a success\n\
             expected: a success\n\
             result: {INPUT_JSON}"
        )
    );
    assert_eq!(
        panic_message(|| assert_success!(ToolResult::error("boom"), "42")),
        "assert_success! failed: a plain failure: \"boom\"\n\
         expected: a success with output \"42\"\n\
         result: {\n  \"output\": \"boom\",\n  \"isError\": true\n}"
    );
    assert_eq!(
        panic_message(|| assert_success!(ToolResult::success("41"), "42")),
        "assert_success! failed: the output differs: \"41\"\n\
         expected: a success with output \"42\"\n\
         result: {\n  \"output\": \"41\",\n  \"isError\": false\n}"
    );
}

#[test]
fn assert_failure_both_ways() {
    assert_failure!(ToolResult::error("boom"));
    assert_failure!(ToolResult::error("boom"), "boom");
    assert_eq!(
        panic_message(|| assert_failure!(input("r1"))),
        format!(
            "assert_failure! failed: a suspension of kind `input` with prompt \"Which city?\", not a plain failure\n\
             expected: a plain failure\n\
             result: {INPUT_JSON}"
        )
    );
    assert_eq!(
        panic_message(|| assert_failure!(ToolResult::success("42"))),
        "assert_failure! failed: a success: \"42\"\n\
         expected: a plain failure\n\
         result: {\n  \"output\": \"42\",\n  \"isError\": false\n}"
    );
    assert_eq!(
        panic_message(|| assert_failure!(ToolResult::error("bang"), "boom")),
        "assert_failure! failed: the output differs: \"bang\"\n\
         expected: a plain failure with output \"boom\"\n\
         result: {\n  \"output\": \"bang\",\n  \"isError\": true\n}"
    );
}

#[test]
#[should_panic(expected = "assert_pending! failed: not a suspension (a plain failure: \"boom\")")]
fn should_panic_works_with_the_message() {
    assert_pending!(ToolResult::error("boom"));
}

/// Asks for a city.
#[toolnexus::tool(name = "city")]
fn city_tool(
    #[arg(default = "hi".to_owned())] greeting: &str,
    ctx: &toolnexus::Context,
) -> ToolResult {
    match ctx.answer() {
        None => ToolResult::suspended(Request::input("Which city?")),
        Some(a) if a.ok => ToolResult::success(format!(
            "{greeting} {}",
            a.data.as_ref().and_then(|d| d.as_str()).unwrap_or("?")
        )),
        Some(a) => ToolResult::error(format!("no: {}", a.reason.as_ref().unwrap())),
    }
}

#[tokio::test]
async fn call_and_retry_with_in_one_line() {
    let tool = CityTool;
    let args = json!({"greeting": "hello"});
    let first = testing::call(&tool, args.clone()).await;
    let req = assert_pending!(first, input "Which city?");

    assert_success!(
        testing::retry_with(&tool, args.clone(), req.accept("Oslo")).await,
        "hello Oslo"
    );
    assert_failure!(
        testing::retry_with(&tool, args, req.decline(DeclineReason::Cancelled)).await,
        "no: cancelled"
    );
    // the answer echoes the request id
    assert_eq!(req.accept("x"), Answer::accept(req.id.clone(), "x"));
    // `null` args read as `{}`
    assert_success!(
        testing::retry_with(&tool, serde_json::Value::Null, req.accept("Rome")).await,
        "hi Rome"
    );
}

#[tokio::test]
async fn call_with_non_object_args_panics_with_the_message() {
    let tool = CityTool;
    let err = tokio::spawn(async move { testing::call(&tool, json!([1])).await })
        .await
        .unwrap_err();
    let payload = err.into_panic();
    assert_eq!(
        payload.downcast_ref::<String>().unwrap(),
        "tool arguments must be a JSON object, found [1]"
    );
}
