//! `Toolkit`: construction, lookup, and every edge of `execute`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::{
    CancellationToken, Context, Error, FnTool, Request, SharedTool, ToolResult, Toolkit, pending_of,
};

use crate::support::RawTool;

/// A tool that echoes its arguments as compact JSON.
fn echo(name: &str) -> FnTool {
    FnTool::builder(name)
        .description("Echoes its arguments.")
        .handler(|args, _| async move { Value::Object(args) })
        .build()
        .unwrap()
}

fn panicking_async() -> FnTool {
    FnTool::builder("explode")
        .description("Panics while running.")
        .handler(|args, _| async move {
            assert!(args.contains_key("never"), "kaboom");
            ""
        })
        .build()
        .unwrap()
}

fn panicking_before_its_future() -> FnTool {
    FnTool::builder("explode_early")
        .description("Panics before returning its future.")
        .handler(|args, _| {
            assert!(args.contains_key("never"), "no `never` argument");
            async { "" }
        })
        .build()
        .unwrap()
}

fn sleeper(started: Arc<AtomicU32>) -> FnTool {
    FnTool::builder("sleep")
        .description("Sleeps for a minute.")
        .handler(move |_, _| {
            started.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "woke up"
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result() {
    let kit = Toolkit::builder().tool(echo("echo")).build().unwrap();
    let r = kit.execute("nope", json!({}), &Context::new()).await;
    assert_eq!(r, ToolResult::error("Unknown tool: nope"));
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"output":"Unknown tool: nope","isError":true}"#
    );
    let empty = Toolkit::new();
    let r = empty.execute("echo", json!({}), &Context::new()).await;
    assert_eq!(r, ToolResult::error("Unknown tool: echo"));
}

#[tokio::test]
async fn null_arguments_read_as_an_empty_object() {
    let kit = Toolkit::builder().tool(echo("echo")).build().unwrap();
    let r = kit.execute("echo", Value::Null, &Context::new()).await;
    assert_eq!(r, ToolResult::success("{}"));
    let r = kit
        .execute("echo", json!({"a": [true], "b": 1}), &Context::new())
        .await;
    assert_eq!(r, ToolResult::success(r#"{"a":[true],"b":1}"#));
}

#[tokio::test]
async fn arguments_that_are_not_an_object_fail_saying_so() {
    let kit = Toolkit::builder().tool(echo("echo")).build().unwrap();
    let cases = [
        (json!([1, 2]), "an array"),
        (json!("text"), "a string"),
        (json!(3), "a number"),
        (json!(false), "a boolean"),
    ];
    for (args, kind) in cases {
        let r = kit.execute("echo", args, &Context::new()).await;
        assert_eq!(
            r,
            ToolResult::error(format!(
                "invalid arguments for echo: expected a JSON object, got {kind}"
            ))
        );
    }
}

#[tokio::test]
async fn a_panicking_tool_fails_naming_the_tool_and_the_toolkit_keeps_working() {
    let kit = Toolkit::builder()
        .tool(panicking_async())
        .tool(panicking_before_its_future())
        .tool(echo("echo"))
        .build()
        .unwrap();
    let r = kit.execute("explode", json!({}), &Context::new()).await;
    assert_eq!(r, ToolResult::error("tool explode panicked: kaboom"));
    let r = kit
        .execute("explode_early", json!({}), &Context::new())
        .await;
    assert_eq!(
        r,
        ToolResult::error("tool explode_early panicked: no `never` argument")
    );
    // the same toolkit, the same tools, again
    let r = kit.execute("explode", json!({}), &Context::new()).await;
    assert_eq!(r, ToolResult::error("tool explode panicked: kaboom"));
    let r = kit
        .execute("echo", json!({"still": "here"}), &Context::new())
        .await;
    assert_eq!(r, ToolResult::success(r#"{"still":"here"}"#));
}

#[tokio::test]
async fn a_panic_with_a_non_string_payload_is_reported() {
    let tool = FnTool::builder("odd")
        .description("Panics with a number.")
        .handler(|_, _| async {
            std::panic::panic_any(42_u8);
            #[allow(unreachable_code)] // the handler needs a return type
            ""
        })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(tool).build().unwrap();
    let r = kit.execute("odd", json!({}), &Context::new()).await;
    assert_eq!(
        r,
        ToolResult::error("tool odd panicked: a panic with a non-string payload")
    );
}

#[tokio::test]
async fn the_context_timeout_ends_the_call() {
    let started = Arc::new(AtomicU32::new(0));
    let kit = Toolkit::builder()
        .tool(sleeper(Arc::clone(&started)))
        .build()
        .unwrap();
    let ctx = Context::new().with_timeout(Duration::from_millis(50));
    let begin = std::time::Instant::now();
    let r = kit.execute("sleep", json!({}), &ctx).await;
    assert_eq!(r, ToolResult::error("tool sleep timed out after 50ms"));
    assert!(begin.elapsed() < Duration::from_secs(10));
    assert_eq!(started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn cancellation_ends_the_call() {
    let started = Arc::new(AtomicU32::new(0));
    let kit = Toolkit::builder()
        .tool(sleeper(Arc::clone(&started)))
        .build()
        .unwrap();

    // cancelled while running
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        token.cancel();
    });
    let r = kit.execute("sleep", json!({}), &ctx).await;
    canceller.await.unwrap();
    assert_eq!(r, ToolResult::error("tool sleep was cancelled"));
    assert!(ctx.is_cancelled());

    // already cancelled: the result says so
    let token = CancellationToken::new();
    token.cancel();
    let ctx = Context::new().with_cancellation(token);
    let r = kit.execute("sleep", json!({}), &ctx).await;
    assert_eq!(r, ToolResult::error("tool sleep was cancelled"));
}

#[tokio::test]
async fn a_tool_sees_the_context() {
    let tool = FnTool::builder("who")
        .description("Reports its context.")
        .handler(|_, ctx| async move {
            format!(
                "call={} answer={} timeout={:?}",
                ctx.call_id().unwrap_or("-"),
                ctx.answer().map_or("-", |a| a.id.as_str()),
                ctx.timeout()
            )
        })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(tool).build().unwrap();
    let ctx = Context::new()
        .with_call_id("call_1")
        .with_answer(Request::input("p").with_id("r5").accept("x"))
        .with_timeout(Duration::from_secs(5));
    let r = kit.execute("who", json!({}), &ctx).await;
    assert_eq!(
        r,
        ToolResult::success("call=call_1 answer=r5 timeout=Some(5s)")
    );
}

#[tokio::test]
async fn a_suspension_is_returned_as_the_result() {
    let tool = FnTool::builder("ask")
        .description("Asks.")
        .handler(|_, _| async { Request::input("Which city?").with_id("r1") })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(tool).build().unwrap();
    let r = kit.execute("ask", json!({}), &Context::new()).await;
    assert_eq!(r.output, "Input required: Which city?");
    assert!(r.is_error);
    assert_eq!(pending_of(&r).unwrap().id, "r1");
}

#[test]
fn duplicate_names_are_an_error_naming_the_tool() {
    let expected = "duplicate tool name `echo`: every tool of a toolkit needs its own name";
    let err = Toolkit::builder()
        .tool(echo("echo"))
        .tool(echo("other"))
        .tool(echo("echo"))
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), expected);
    assert!(matches!(err, Error::DuplicateTool { name } if name == "echo"));

    let mut kit = Toolkit::from_tools([echo("echo")]).unwrap();
    assert_eq!(kit.add(echo("echo")).unwrap_err().to_string(), expected);
    assert_eq!(kit.len(), 1, "a failed add leaves the toolkit unchanged");
}

#[test]
fn tools_keep_registration_order_and_get_finds_by_name() {
    let shared: SharedTool = Arc::new(echo("c_shared"));
    let kit = Toolkit::builder()
        .tool(echo("b"))
        .tools([echo("z"), echo("a")])
        .tool(Arc::clone(&shared))
        .build()
        .unwrap();
    let names: Vec<&str> = kit.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["b", "z", "a", "c_shared"]);
    assert_eq!(kit.len(), 4);
    assert!(!kit.is_empty());
    assert_eq!(kit.get("a").unwrap().name(), "a");
    assert!(Arc::ptr_eq(kit.get("c_shared").unwrap(), &shared));
    assert!(kit.get("missing").is_none());
    assert_eq!(format!("{kit:?}"), r#"["b", "z", "a", "c_shared"]"#);
    assert!(Toolkit::new().is_empty());
}

/// A [`RawTool`] with a schema no builder checked.
fn bad_schema(schema: Value) -> RawTool {
    RawTool {
        name: "bad".to_owned(),
        description: "Bad schema.",
        schema,
    }
}

#[test]
fn a_schema_without_a_root_object_type_is_rejected() {
    let cases = [
        (
            json!({"type": "string"}),
            r#"invalid input schema for tool `bad`: the root `type` must be "object" (tool arguments are a JSON object), found "string""#,
        ),
        (
            json!({"properties": {}}),
            r#"invalid input schema for tool `bad`: the root needs `"type": "object"` (tool arguments are a JSON object)"#,
        ),
        (
            json!(true),
            "invalid input schema for tool `bad`: a schema must be a JSON object",
        ),
    ];
    for (schema, expected) in cases {
        let err = Toolkit::from_tools([bad_schema(schema.clone())]).unwrap_err();
        assert_eq!(err.to_string(), expected);
        let built = FnTool::builder("bad")
            .description("Bad schema.")
            .schema(schema)
            .handler(|_, _| async { "" })
            .build();
        assert_eq!(built.unwrap_err().to_string(), expected);
    }
}

#[test]
fn a_toolkit_is_cheap_to_clone_and_shares_its_tools() {
    let kit = Toolkit::builder().tool(echo("echo")).build().unwrap();
    let copy = kit.clone();
    assert!(Arc::ptr_eq(&kit.tools()[0], &copy.tools()[0]));
}
