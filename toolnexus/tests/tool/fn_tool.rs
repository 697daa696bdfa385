//! Hand-built tools (`FnTool`): the return mapping of contract section 1, typed arguments,
//! builder errors, and the decorators `wrap` and `retried`.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolnexus::{
    Context, FnTool, IntoToolResult, Json, Request, Suspension, Tool, ToolResult, pending_of,
    tool::retried, tool::wrap,
};

/// Runs a tool once outside any toolkit.
async fn run(tool: &dyn Tool, args: Value) -> ToolResult {
    let Value::Object(args) = args else {
        panic!("test arguments must be an object")
    };
    tool.execute(args, &Context::new()).await
}

/// A tool returning `value` (cloned on each call).
fn returning<R>(value: R) -> FnTool
where
    R: IntoToolResult + Clone + Send + Sync + 'static,
{
    FnTool::builder("t")
        .description("Returns a fixed value.")
        .handler(move |_, _| {
            let v = value.clone();
            async move { v }
        })
        .build()
        .unwrap()
}

#[derive(Clone, serde::Serialize)]
struct Weather {
    city: &'static str,
    celsius: i8,
    tags: Vec<&'static str>,
}

#[derive(Debug)]
struct Busy;

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the service is busy, retry in a minute")
    }
}

impl StdError for Busy {}

/// An error type of the tool's own that wraps a suspension as its source.
#[derive(Debug)]
struct NeedsLogin(Suspension);

impl fmt::Display for NeedsLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("login needed")
    }
}

impl StdError for NeedsLogin {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.0)
    }
}

fn login_request() -> Request {
    Request::authorization("https://x/login").with_id("r-login")
}

#[tokio::test]
async fn a_string_is_the_output_as_is() {
    let text = "  line 1\n\"quoted\" {not json}  ";
    assert_eq!(
        run(&returning(text.to_owned()), json!({})).await,
        ToolResult::success(text)
    );
    assert_eq!(
        run(&returning("static"), json!({})).await,
        ToolResult::success("static")
    );
    assert_eq!(
        run(&returning(Cow::<'static, str>::Borrowed("cow")), json!({})).await,
        ToolResult::success("cow")
    );
}

#[tokio::test]
async fn a_tool_result_passes_through_unchanged() {
    let custom = ToolResult::error("handled").with_metadata("code", json!(7));
    assert_eq!(run(&returning(custom.clone()), json!({})).await, custom);
    let suspended = ToolResult::suspended(Request::input("Which city?").with_id("r1"));
    assert_eq!(
        run(&returning(suspended.clone()), json!({})).await,
        suspended
    );
}

#[tokio::test]
async fn unit_is_an_empty_output() {
    assert_eq!(
        run(&returning(()), json!({})).await,
        ToolResult::success("")
    );
}

#[tokio::test]
async fn serializable_values_are_compact_json() {
    let weather = Weather {
        city: "Oslo",
        celsius: -3,
        tags: vec!["snow", "wind"],
    };
    assert_eq!(
        run(&returning(Json(weather)), json!({})).await,
        ToolResult::success(r#"{"city":"Oslo","celsius":-3,"tags":["snow","wind"]}"#)
    );
    assert_eq!(
        run(&returning(json!({"a": null, "b": [1, 2]})), json!({})).await,
        ToolResult::success(r#"{"a":null,"b":[1,2]}"#)
    );
    assert_eq!(
        run(&returning(42_u64), json!({})).await,
        ToolResult::success("42")
    );
    assert_eq!(
        run(&returning(-1.5_f64), json!({})).await,
        ToolResult::success("-1.5")
    );
    assert_eq!(
        run(&returning(true), json!({})).await,
        ToolResult::success("true")
    );
    assert_eq!(
        run(&returning(vec!["a", "b"]), json!({})).await,
        ToolResult::success(r#"["a","b"]"#)
    );
    assert_eq!(
        run(&returning(Json(Option::<u8>::None)), json!({})).await,
        ToolResult::success("null")
    );
}

#[tokio::test]
async fn an_error_is_a_failure_with_its_display_text() {
    let tool = FnTool::builder("t")
        .description("Fails.")
        .handler(|_, _| async { Err::<String, Busy>(Busy) })
        .build()
        .unwrap();
    assert_eq!(
        run(&tool, json!({})).await,
        ToolResult::error("the service is busy, retry in a minute")
    );

    let boxed = FnTool::builder("t")
        .description("Fails, boxed.")
        .handler(|_, _| async { Err::<(), Box<dyn StdError + Send + Sync>>("no such city".into()) })
        .build()
        .unwrap();
    assert_eq!(
        run(&boxed, json!({})).await,
        ToolResult::error("no such city")
    );

    let ok = FnTool::builder("t")
        .description("Succeeds.")
        .handler(|_, _| async { Ok::<_, Busy>(Json(json!({"n": 1}))) })
        .build()
        .unwrap();
    assert_eq!(run(&ok, json!({})).await, ToolResult::success(r#"{"n":1}"#));
}

#[tokio::test]
async fn an_err_suspension_is_the_suspension() {
    let tool = FnTool::builder("t")
        .description("Suspends through Err.")
        .handler(|_, _| async { Err::<String, Suspension>(Suspension::new(login_request())) })
        .build()
        .unwrap();
    let r = run(&tool, json!({})).await;
    assert_eq!(r, ToolResult::suspended(login_request()));
    assert_eq!(r.output, "Login required: https://x/login");
    assert_eq!(pending_of(&r).unwrap().id, "r-login");
}

#[tokio::test]
async fn a_boxed_error_holding_a_suspension_is_the_suspension() {
    let direct = FnTool::builder("t")
        .description("Suspends through a boxed error.")
        .handler(|_, _| async {
            let e: Box<dyn StdError + Send + Sync> = Box::new(Suspension::new(login_request()));
            Err::<String, _>(e)
        })
        .build()
        .unwrap();
    assert_eq!(
        run(&direct, json!({})).await,
        ToolResult::suspended(login_request())
    );

    // a suspension anywhere in the boxed error's source chain
    let chained = FnTool::builder("t")
        .description("Suspends through a chained error.")
        .handler(|_, _| async {
            let e: Box<dyn StdError + Send + Sync> =
                Box::new(NeedsLogin(Suspension::new(login_request())));
            Err::<String, _>(e)
        })
        .build()
        .unwrap();
    assert_eq!(
        run(&chained, json!({})).await,
        ToolResult::suspended(login_request())
    );
}

#[test]
fn return_mapping_without_a_tool() {
    // `?` on a Suspension inside a tool's own boxed error type
    fn needs_login() -> Result<String, Box<dyn StdError + Send + Sync>> {
        Err(Suspension::new(login_request()))?
    }
    fn needs_login_local() -> Result<String, Box<dyn StdError>> {
        Err(Box::new(NeedsLogin(Suspension::new(login_request()))))
    }
    assert_eq!(
        needs_login().into_tool_result(),
        ToolResult::suspended(login_request())
    );
    // a `Box<dyn Error>` that is not `Send` works the same way
    assert_eq!(
        needs_login_local().into_tool_result(),
        ToolResult::suspended(login_request())
    );
    let plain: Result<String, Box<dyn StdError>> = Err("plain failure".into());
    assert_eq!(plain.into_tool_result(), ToolResult::error("plain failure"));
    assert_eq!(
        Ok::<_, Busy>("fine").into_tool_result(),
        ToolResult::success("fine")
    );
    assert_eq!(
        login_request().into_tool_result(),
        ToolResult::suspended(login_request())
    );
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// How many days ahead.
    days: Option<u8>,
}

fn forecast_tool() -> FnTool {
    FnTool::builder("forecast")
        .description("Forecasts the weather.")
        .schema_for::<Forecast>()
        .typed_handler(|args: Forecast, _| async move {
            format!("{} in {} days", args.city, args.days.unwrap_or(1))
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn typed_arguments_and_their_failures_name_the_field() {
    let tool = forecast_tool();
    assert_eq!(
        tool.input_schema(),
        &json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {
                    "type": ["integer", "null"],
                    "format": "uint8",
                    "minimum": 0,
                    "maximum": 255,
                    "description": "How many days ahead."
                }
            },
            "required": ["city"]
        })
    );
    assert_eq!(
        run(&tool, json!({"city": "Oslo", "days": 3})).await,
        ToolResult::success("Oslo in 3 days")
    );
    assert_eq!(
        run(&tool, json!({"city": "Oslo", "days": null})).await,
        ToolResult::success("Oslo in 1 days")
    );
    assert_eq!(
        run(&tool, json!({"city": "Oslo", "days": "three"})).await,
        ToolResult::error(
            r#"invalid arguments for forecast: days: invalid type: string "three", expected u8"#
        )
    );
    assert_eq!(
        run(&tool, json!({"days": 2})).await,
        ToolResult::error("invalid arguments for forecast: missing field `city`")
    );
}

#[test]
fn builder_errors_say_what_to_add() {
    let no_description = FnTool::builder("t").handler(|_, _| async { "" }).build();
    assert_eq!(
        no_description.unwrap_err().to_string(),
        "tool `t` has no description: call `.description(..)`; models choose tools by their descriptions"
    );
    let no_handler = FnTool::builder("t").description("d").build();
    assert_eq!(
        no_handler.unwrap_err().to_string(),
        "tool `t` has no handler: call `.handler(..)` or `.typed_handler(..)`"
    );
    let default_schema = FnTool::builder("t")
        .description("d")
        .source("custom")
        .handler(|_, _| async { "" })
        .build()
        .unwrap();
    assert_eq!(
        default_schema.input_schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(default_schema.source(), "custom");
    assert_eq!(forecast_tool().source(), "native");
}

/// A tool that fails `fails` times, then succeeds; counts its executions.
fn flaky(fails: u32, calls: Arc<AtomicU32>) -> FnTool {
    FnTool::builder("flaky")
        .description("Fails a few times.")
        .handler(move |_, _| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < fails {
                    ToolResult::error(format!("failure {}", n + 1))
                } else {
                    ToolResult::success(format!("ok after {n}"))
                }
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn retried_retries_failures_up_to_n_times() {
    let calls = Arc::new(AtomicU32::new(0));
    let tool = retried(flaky(2, Arc::clone(&calls)), 3);
    assert_eq!(
        run(&tool, json!({})).await,
        ToolResult::success("ok after 2")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    let calls = Arc::new(AtomicU32::new(0));
    let tool = retried(flaky(10, Arc::clone(&calls)), 2);
    assert_eq!(run(&tool, json!({})).await, ToolResult::error("failure 3"));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one call plus two retries");

    let calls = Arc::new(AtomicU32::new(0));
    let tool = retried(flaky(10, Arc::clone(&calls)), 0);
    assert_eq!(run(&tool, json!({})).await, ToolResult::error("failure 1"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let calls = Arc::new(AtomicU32::new(0));
    let tool = retried(flaky(0, Arc::clone(&calls)), 5);
    assert_eq!(
        run(&tool, json!({})).await,
        ToolResult::success("ok after 0")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "a success is not retried");
}

#[tokio::test]
async fn retried_never_retries_a_suspension() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let asking = FnTool::builder("ask")
        .description("Asks every time.")
        .handler(move |_, _| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move { Request::input("Which city?").with_id(format!("r{n}")) }
        })
        .build()
        .unwrap();
    let tool = retried(asking, 3);
    let r = run(&tool, json!({})).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        pending_of(&r).unwrap().id,
        "r0",
        "the first request is kept"
    );
    assert!(r.is_error);
}

#[tokio::test]
async fn retried_keeps_the_tool_identity_and_passes_the_arguments() {
    let tool = retried(forecast_tool(), 1);
    assert_eq!(tool.name(), "forecast");
    assert_eq!(tool.description(), "Forecasts the weather.");
    assert_eq!(tool.input_schema(), forecast_tool().input_schema());
    assert_eq!(tool.source(), "native");
    assert_eq!(
        run(&tool, json!({"city": "Rome", "days": 2})).await,
        ToolResult::success("Rome in 2 days")
    );
}

#[tokio::test]
async fn wrap_sees_every_call_and_result() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&log);
    let tool = wrap(forecast_tool(), move |inner, args, ctx| {
        let log = Arc::clone(&seen);
        async move {
            let args_text = Value::Object(args.clone()).to_string();
            let r = inner.execute(args, &ctx).await;
            log.lock()
                .unwrap()
                .push(format!("{args_text} -> {} ({})", r.output, r.is_error));
            ToolResult {
                output: format!("[{}]", r.output),
                ..r
            }
        }
    });
    assert_eq!(tool.name(), "forecast");
    assert_eq!(
        run(&tool, json!({"city": "Oslo"})).await,
        ToolResult::success("[Oslo in 1 days]")
    );
    assert_eq!(
        run(&tool, json!({})).await,
        ToolResult::error("[invalid arguments for forecast: missing field `city`]")
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            r#"{"city":"Oslo"} -> Oslo in 1 days (false)"#,
            "{} -> invalid arguments for forecast: missing field `city` (true)",
        ]
    );
}

#[tokio::test]
async fn wrap_can_veto_without_calling_the_tool() {
    let calls = Arc::new(AtomicU32::new(0));
    let tool = wrap(
        flaky(0, Arc::clone(&calls)),
        |_inner, args, _ctx| async move {
            if args.contains_key("confirm") {
                ToolResult::success("allowed")
            } else {
                ToolResult::error("vetoed")
            }
        },
    );
    assert_eq!(run(&tool, json!({})).await, ToolResult::error("vetoed"));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let mut args = Map::new();
    args.insert("confirm".to_owned(), json!(true));
    assert_eq!(
        tool.execute(args, &Context::new()).await,
        ToolResult::success("allowed")
    );
}
