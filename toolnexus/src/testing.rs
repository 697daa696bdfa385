//! Test helpers for tools: assert that a call suspended (and on what), succeeded or failed,
//! and run a tool again with an answer, each in one line.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::{Suspension, assert_pending, assert_success, testing, tool};
//!
//! /// Picks a city.
//! #[tool]
//! async fn pick_city(ctx: &toolnexus::Context) -> Result<String, Suspension> {
//!     let city: String = toolnexus::ask!(ctx, input "Which city?");
//!     Ok(format!("going to {city}"))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let tool = PickCity;
//! let first = testing::call(&tool, json!({})).await;
//! let request = assert_pending!(first, input "Which city?");
//!
//! let second = testing::retry_with(&tool, json!({}), request.accept("Oslo")).await;
//! assert_success!(second, "going to Oslo");
//! # });
//! ```
//!
//! # Failure messages
//!
//! Every assertion panics with `<macro> failed: <what went wrong>`, then `expected: <what was
//! expected>`, then `result: ` and the whole [`ToolResult`] as pretty JSON. For example, `assert_pending!(result, input "Which city?")`
//! on a plain failure panics with
//!
//! ```text
//! assert_pending! failed: not a suspension (a plain failure: "no such flight")
//! expected: a suspension of kind `input` with prompt "Which city?"
//! result: {
//!   "output": "no such flight",
//!   "isError": true
//! }
//! ```
//!
//! The first line is one of (values shown there are the result's; the expected ones are on the
//! `expected:` line):
//!
//! | macro | first line after `failed: ` |
//! |---|---|
//! | `assert_pending!` | `not a suspension (a plain failure: "<output>")`, `not a suspension (a success: "<output>")`, ``a suspension of another kind (`<kind>`)``, `the prompt differs: "<prompt>"`, `the url differs: <url or none>`, `the id differs: "<id>"`, `the data differs: <data or none>`, `the answer schema differs: <data.schema or none>` |
//! | `assert_not_pending!` | ``a suspension of kind `<kind>` with prompt "<prompt>"`` |
//! | `assert_success!` | ``a suspension of kind `<kind>` with prompt "<prompt>", not a success``, `a plain failure: "<output>"`, `the output differs: "<output>"` |
//! | `assert_failure!` | ``a suspension of kind `<kind>` with prompt "<prompt>", not a plain failure``, `a success: "<output>"`, `the output differs: "<output>"` |
//!
//! `assert_pending!(r, schema = T)` where `T`'s schema cannot be built panics with the single
//! line `assert_pending! failed: the expected answer schema cannot be built: <why>`.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::context::Context;
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::suspend::SuspendError;
use crate::tool::Tool;

/// Runs `tool` once with `args` (a JSON object; `null` reads as `{}`) and an empty context.
///
/// # Panics
///
/// When `args` is neither an object nor `null` (a mistake in the test itself).
pub async fn call<T: Tool + ?Sized>(tool: &T, args: Value) -> ToolResult {
    tool.execute(args_object(args), &Context::new()).await
}

/// Runs `tool` with `args` and `answer` in its context: the retry after a suspension, as the
/// agent loop does it. Build the answer with [`Request::accept`] or [`Request::decline`], which
/// echo the request's id.
///
/// ```
/// # use serde_json::json;
/// # use toolnexus::{FnTool, ToolResult, Request, testing, assert_success};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// # let tool = FnTool::builder("t").description("d").handler(|_, ctx: toolnexus::Context| async move {
/// #     match ctx.answer_data::<String>() { Ok(Some(s)) => ToolResult::success(s), _ => ToolResult::suspended(Request::input("?")) }
/// # }).build().unwrap();
/// let first = testing::call(&tool, json!({})).await;
/// let request = first.pending().unwrap();
/// let second = testing::retry_with(&tool, json!({}), request.accept("Oslo")).await;
/// assert_success!(second, "Oslo");
/// # });
/// ```
///
/// # Panics
///
/// When `args` is neither an object nor `null` (a mistake in the test itself).
pub async fn retry_with<T: Tool + ?Sized>(tool: &T, args: Value, answer: Answer) -> ToolResult {
    tool.execute(args_object(args), &Context::new().with_answer(answer))
        .await
}

fn args_object(args: Value) -> Map<String, Value> {
    match args {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => panic!("tool arguments must be a JSON object, found {other}"),
    }
}

/// What `assert_pending!` checks; built by the macro (or by hand with the methods below and
/// checked with [`assert_pending`]).
#[derive(Clone, Debug, Default)]
pub struct PendingExpectation {
    kind: Option<String>,
    prompt: Option<String>,
    url: Option<String>,
    id: Option<String>,
    data: Option<Value>,
    schema: Option<Result<Value, SuspendError>>,
}

impl PendingExpectation {
    /// Expects any suspension.
    pub fn new() -> Self {
        Self::default()
    }

    /// Expects this kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Expects this prompt.
    #[must_use]
    pub fn prompt(mut self, prompt: impl AsRef<str>) -> Self {
        self.prompt = Some(prompt.as_ref().to_owned());
        self
    }

    /// Expects this url.
    #[must_use]
    pub fn url(mut self, url: impl AsRef<str>) -> Self {
        self.url = Some(url.as_ref().to_owned());
        self
    }

    /// Expects this id.
    #[must_use]
    pub fn id(mut self, id: impl AsRef<str>) -> Self {
        self.id = Some(id.as_ref().to_owned());
        self
    }

    /// Expects this whole `data` object (compared as JSON; `null` expects no `data`).
    #[must_use]
    pub fn data<T: serde::Serialize + ?Sized>(mut self, data: &T) -> Self {
        self.data = Some(serde_json::to_value(data).unwrap_or(Value::Null));
        self
    }

    /// Expects `data.schema` to be this schema (what `schema = T` resolves to).
    #[must_use]
    pub fn schema(mut self, schema: Result<Value, SuspendError>) -> Self {
        self.schema = Some(schema);
        self
    }

    fn describe(&self) -> String {
        let mut s = "a suspension".to_owned();
        if let Some(k) = &self.kind {
            let _ = write!(s, " of kind `{k}`");
        }
        if let Some(p) = &self.prompt {
            let _ = write!(s, " with prompt {p:?}");
        }
        let mut extra = Vec::new();
        if let Some(u) = &self.url {
            extra.push(format!("url {u:?}"));
        }
        if let Some(i) = &self.id {
            extra.push(format!("id {i:?}"));
        }
        if let Some(d) = &self.data {
            extra.push(format!("data {d}"));
        }
        if let Some(Ok(schema)) = &self.schema {
            extra.push(format!("answer schema {schema}"));
        }
        if !extra.is_empty() {
            let _ = write!(s, ", {}", extra.join(", "));
        }
        s
    }

    /// The first difference between the expectation and the result, if any.
    fn problem(&self, result: &ToolResult) -> Option<String> {
        let Some(req) = result.pending() else {
            return Some(not_a_suspension(result));
        };
        if self.kind.as_ref().is_some_and(|k| *k != req.kind) {
            return Some(format!("a suspension of another kind (`{}`)", req.kind));
        }
        if self.prompt.as_ref().is_some_and(|p| *p != req.prompt) {
            return Some(format!("the prompt differs: {:?}", req.prompt));
        }
        if self.url.is_some() && self.url != req.url {
            return Some(format!("the url differs: {}", opt_str(req.url.as_deref())));
        }
        if self.id.as_ref().is_some_and(|i| *i != req.id) {
            return Some(format!("the id differs: {:?}", req.id));
        }
        let data = req.data.clone().map(|data| Value::Object(*data));
        if let Some(expected) = &self.data
            && *expected != data.clone().unwrap_or(Value::Null)
        {
            return Some(format!("the data differs: {}", opt_json(data.as_ref())));
        }
        if let Some(Ok(schema)) = &self.schema {
            let found = req.data.as_ref().and_then(|d| d.get("schema"));
            if found != Some(schema) {
                return Some(format!("the answer schema differs: {}", opt_json(found)));
            }
        }
        None
    }
}

fn opt_str(s: Option<&str>) -> String {
    s.map_or_else(|| "none".to_owned(), |s| format!("{s:?}"))
}

fn opt_json(v: Option<&Value>) -> String {
    v.map_or_else(|| "none".to_owned(), Value::to_string)
}

fn not_a_suspension(result: &ToolResult) -> String {
    if result.is_error {
        format!("not a suspension (a plain failure: {:?})", result.output)
    } else {
        format!("not a suspension (a success: {:?})", result.output)
    }
}

pub(crate) fn suspension_summary(req: &Request) -> String {
    format!(
        "a suspension of kind `{}` with prompt {:?}",
        req.kind, req.prompt
    )
}

fn pretty(result: &ToolResult) -> String {
    serde_json::to_string_pretty(result).unwrap_or_else(|e| format!("<unserializable: {e}>"))
}

#[track_caller]
pub(crate) fn fail(assertion: &str, problem: &str, expected: &str, result: &ToolResult) -> ! {
    panic!(
        "{assertion} failed: {problem}\nexpected: {expected}\nresult: {}",
        pretty(result)
    )
}

/// Checks `result` against `expected` and returns its request; what `assert_pending!` calls.
///
/// # Panics
///
/// With the message described in the [module docs](self) when the result is not a matching
/// suspension, or when the expected `schema` could not be built.
#[track_caller]
pub fn assert_pending<'r>(result: &'r ToolResult, expected: &PendingExpectation) -> &'r Request {
    if let Some(Err(e)) = &expected.schema {
        panic!("assert_pending! failed: the expected answer schema cannot be built: {e}");
    }
    if let Some(problem) = expected.problem(result) {
        fail("assert_pending!", &problem, &expected.describe(), result);
    }
    result
        .pending()
        .unwrap_or_else(|| unreachable!("checked by `problem`"))
}

/// Panics unless `result` is not a suspension; what `assert_not_pending!` calls.
///
/// # Panics
///
/// When the result is a suspension (the message as in the [module docs](self)).
#[track_caller]
pub fn assert_not_pending(result: &ToolResult) {
    if let Some(req) = result.pending() {
        fail(
            "assert_not_pending!",
            &suspension_summary(req),
            "no suspension",
            result,
        );
    }
}

/// Panics unless `result` is a success (with `output`, when given); what `assert_success!`
/// calls.
///
/// # Panics
///
/// When the result is a suspension, a failure, or another output.
#[track_caller]
pub fn assert_success(result: &ToolResult, output: Option<&str>) {
    assert_outcome(result, output, false);
}

/// Panics unless `result` is a plain failure (with `output`, when given); what
/// `assert_failure!` calls.
///
/// # Panics
///
/// When the result is a suspension, a success, or another output.
#[track_caller]
pub fn assert_failure(result: &ToolResult, output: Option<&str>) {
    assert_outcome(result, output, true);
}

/// What [`assert_success`] (`failure` false) and [`assert_failure`] (`failure` true) check:
/// not a suspension, a failure or not as asked, and `output` when given.
#[track_caller]
fn assert_outcome(result: &ToolResult, output: Option<&str>, failure: bool) {
    let (assertion, wanted, other) = if failure {
        ("assert_failure!", "a plain failure", "a success")
    } else {
        ("assert_success!", "a success", "a plain failure")
    };
    let expected = output.map_or_else(
        || wanted.to_owned(),
        |o| format!("{wanted} with output {o:?}"),
    );
    if let Some(req) = result.pending() {
        let problem = format!("{}, not {wanted}", suspension_summary(req));
        fail(assertion, &problem, &expected, result);
    }
    if result.is_error != failure {
        let problem = format!("{other}: {:?}", result.output);
        fail(assertion, &problem, &expected, result);
    }
    if output.is_some_and(|o| o != result.output) {
        let problem = format!("the output differs: {:?}", result.output);
        fail(assertion, &problem, &expected, result);
    }
}

/// Asserts that a [`ToolResult`] is **not** a suspension (a success or a plain failure).
///
/// ```
/// toolnexus::assert_not_pending!(toolnexus::ToolResult::success("plain"));
/// ```
///
/// ```should_panic
/// use toolnexus::{Request, ToolResult};
/// // panics: assert_not_pending! failed: a suspension of kind `input` with prompt "Which city?"
/// toolnexus::assert_not_pending!(ToolResult::suspended(Request::input("Which city?")));
/// ```
///
/// # Panics
///
/// When the result is a suspension; see the [`testing`](crate::testing) module for the message.
#[macro_export]
macro_rules! assert_not_pending {
    ($result:expr $(,)?) => {
        $crate::__private::assert_not_pending(&$result)
    };
}

/// Asserts that a [`ToolResult`] is a success, optionally with exactly this output.
///
/// ```
/// let r = toolnexus::ToolResult::success("42");
/// toolnexus::assert_success!(r);
/// toolnexus::assert_success!(r, "42");
/// ```
///
/// A suspension is not a success, and the message says it was one:
///
/// ```should_panic
/// use toolnexus::{Request, ToolResult};
/// // panics: assert_success! failed: a suspension of kind `input` with prompt "Which city?", not a success
/// toolnexus::assert_success!(ToolResult::suspended(Request::input("Which city?")));
/// ```
///
/// # Panics
///
/// When the result is a suspension, a failure, or has another output; see the
/// [`testing`](crate::testing) module for the messages.
#[macro_export]
macro_rules! assert_success {
    ($result:expr $(,)?) => {
        $crate::__private::assert_success(&$result, ::core::option::Option::None)
    };
    ($result:expr, $output:expr $(,)?) => {
        $crate::__private::assert_success(
            &$result,
            ::core::option::Option::Some(::core::convert::AsRef::<str>::as_ref(&$output)),
        )
    };
}

/// Asserts that a [`ToolResult`] is a plain failure (`isError` and **no** suspension),
/// optionally with exactly this output.
///
/// ```
/// let r = toolnexus::ToolResult::error("no such flight");
/// toolnexus::assert_failure!(r);
/// toolnexus::assert_failure!(r, "no such flight");
/// ```
///
/// A suspension also has `isError: true`, but it is not a failure:
///
/// ```should_panic
/// use toolnexus::{Request, ToolResult};
/// // panics: assert_failure! failed: a suspension of kind `input` with prompt "Which city?", not a plain failure
/// toolnexus::assert_failure!(ToolResult::suspended(Request::input("Which city?")));
/// ```
///
/// # Panics
///
/// When the result is a suspension, a success, or has another output; see the
/// [`testing`](crate::testing) module for the messages.
#[macro_export]
macro_rules! assert_failure {
    ($result:expr $(,)?) => {
        $crate::__private::assert_failure(&$result, ::core::option::Option::None)
    };
    ($result:expr, $output:expr $(,)?) => {
        $crate::__private::assert_failure(
            &$result,
            ::core::option::Option::Some(::core::convert::AsRef::<str>::as_ref(&$output)),
        )
    };
}
