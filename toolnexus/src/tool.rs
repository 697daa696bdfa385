//! The [`Tool`] trait, tools built by hand ([`FnTool`]), return mapping ([`IntoToolResult`])
//! and decorators ([`wrap`], [`retried`]).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::result::ToolResult;

/// A boxed, `Send` future, the return type of [`Tool::execute`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A shared, type-erased tool, as a [`Toolkit`](crate::Toolkit) holds it.
pub type SharedTool = Arc<dyn Tool>;

/// `source` of tools made from Rust functions.
pub const SOURCE_NATIVE: &str = "native";

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// A tool a model can call.
///
/// Object-safe, `Send + Sync`, executed asynchronously. Most tools come from `#[tool]`
/// functions or [`FnTool`]; implement this trait by hand for anything else.
///
/// `execute` receives the arguments as a JSON object and returns a [`ToolResult`]: a failure
/// or a suspension is a result, never a panic. (A panic is still caught by
/// [`Toolkit::execute`](crate::Toolkit::execute), which reports it as a failure naming the
/// tool.)
///
/// ```
/// use serde_json::{Map, Value, json};
/// use toolnexus::{BoxFuture, Context, Tool, ToolResult};
///
/// struct Clock { schema: Value }
///
/// impl Tool for Clock {
///     fn name(&self) -> &str { "clock" }
///     fn description(&self) -> &str { "Tells the time." }
///     fn input_schema(&self) -> &Value { &self.schema }
///     fn execute<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a Context) -> BoxFuture<'a, ToolResult> {
///         Box::pin(async { ToolResult::success("noon") })
///     }
/// }
///
/// let clock = Clock { schema: json!({"type": "object", "properties": {}}) };
/// assert_eq!(clock.source(), "native");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolnexus tool",
    label = "not a tool",
    note = "mark a function with `#[toolnexus::tool]`, build one with `toolnexus::FnTool::builder`, or implement `toolnexus::Tool`"
)]
pub trait Tool: Send + Sync {
    /// The name a model calls it by (`[A-Za-z0-9_-]`, 1 to 64 characters).
    fn name(&self) -> &str;

    /// What it does, for the model to choose it.
    fn description(&self) -> &str;

    /// The JSON Schema of its arguments: an object with root `"type":"object"`. Computed once,
    /// returned without rebuilding.
    fn input_schema(&self) -> &Value;

    /// Where it comes from: `native` for Rust functions, or `custom`, `builtin`, `mcp`, ...
    fn source(&self) -> &str {
        SOURCE_NATIVE
    }

    /// Runs one call.
    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult>;
}

impl fmt::Debug for dyn Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("source", &self.source())
            .finish_non_exhaustive()
    }
}

/// Anything a [`Toolkit`](crate::Toolkit) accepts as a tool: any [`Tool`], or an already
/// shared one.
pub trait IntoTool {
    /// Shares the tool.
    fn into_tool(self) -> SharedTool;
}

impl<T: Tool + 'static> IntoTool for T {
    fn into_tool(self) -> SharedTool {
        Arc::new(self)
    }
}

impl IntoTool for SharedTool {
    fn into_tool(self) -> SharedTool {
        self
    }
}

/// Checks a tool name: 1 to 64 characters of `[A-Za-z0-9_-]`.
///
/// # Errors
///
/// [`Error::InvalidToolName`] saying what is wrong; use [`sanitize`] to make a valid name from
/// arbitrary text.
///
/// ```
/// assert!(toolnexus::validate_tool_name("get_weather").is_ok());
/// assert_eq!(
///     toolnexus::validate_tool_name("get weather").unwrap_err().to_string(),
///     "invalid tool name `get weather`: character ' ' at index 3 is not one of [A-Za-z0-9_-]"
/// );
/// ```
pub fn validate_tool_name(name: &str) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::InvalidToolName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return fail("a name needs at least one character".to_owned());
    }
    let len = name.chars().count();
    if len > MAX_TOOL_NAME_LEN {
        return fail(format!(
            "{len} characters, at most {MAX_TOOL_NAME_LEN} are allowed"
        ));
    }
    if let Some((i, c)) = name.char_indices().find(|&(_, c)| !is_name_char(c)) {
        return fail(format!(
            "character {c:?} at index {i} is not one of [A-Za-z0-9_-]"
        ));
    }
    Ok(())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_` (CONTRACT section 1).
///
/// ```
/// assert_eq!(toolnexus::sanitize("get weather!"), "get_weather_");
/// ```
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}

/// The return mapping of CONTRACT section 1: how a tool function's return value becomes a
/// [`ToolResult`].
///
/// - `String`, `&'static str`, `Cow<str>`: the output as-is;
/// - `ToolResult`: unchanged (this is how a suspension is returned);
/// - `()`: empty output;
/// - [`serde_json::Value`], numbers, `bool`, `Vec<T>` and [`Json<T>`]: compact JSON;
/// - `Result<T, E>` with `E: Display`: `Ok` maps `T`, `Err` becomes `is_error: true` with the
///   error's Display text; an `Err` that is a suspension (or a boxed error whose chain holds
///   one) becomes that suspension.
///
/// `#[tool]` functions additionally map any `Serialize` value to compact JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this type is not a tool return type",
    note = "return a `String`, `()`, a `ToolResult`, a JSON value, `toolnexus::Json(value)` for any `Serialize` value, or a `Result` of those whose error implements `Display`"
)]
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self)
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self.into_owned())
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(String::new())
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self.to_string())
    }
}

impl IntoToolResult for crate::request::Request {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::suspended(self)
    }
}

macro_rules! json_results {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> ToolResult {
                Json(self).into_tool_result()
            }
        }
    )*};
}
json_results!(
    bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

impl<T: Serialize> IntoToolResult for Vec<T> {
    fn into_tool_result(self) -> ToolResult {
        Json(self).into_tool_result()
    }
}

/// Wraps any `Serialize` value so a hand-built tool returns it as compact JSON.
///
/// ```
/// use toolnexus::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize)]
/// struct Weather { city: &'static str, celsius: i8 }
///
/// let r = Json(Weather { city: "Oslo", celsius: -3 }).into_tool_result();
/// assert_eq!(r.output, r#"{"city":"Oslo","celsius":-3}"#);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        match serde_json::to_string(&self.0) {
            Ok(s) => ToolResult::success(s),
            Err(e) => ToolResult::error(format!("the tool's result could not be serialized: {e}")),
        }
    }
}

impl<T: IntoToolResult, E: fmt::Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => error_into_tool_result(e),
        }
    }
}

/// Maps an `Err` value: a suspension stays a suspension (also inside a boxed error's chain),
/// anything else becomes a failure with the error's Display text.
pub(crate) fn error_into_tool_result<E: fmt::Display + 'static>(e: E) -> ToolResult {
    let any: &dyn std::any::Any = &e;
    if let Some(r) = any.downcast_ref::<ToolResult>() {
        return r.clone();
    }
    if let Some(s) = any.downcast_ref::<crate::suspend::Suspension>() {
        return s.clone().into_tool_result();
    }
    if let Some(req) = any.downcast_ref::<crate::request::Request>() {
        return ToolResult::suspended(req.clone());
    }
    let chained = if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
        suspension_in_chain(b.as_ref())
    } else if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error>>() {
        suspension_in_chain(b.as_ref())
    } else {
        None
    };
    if let Some(r) = chained {
        return r;
    }
    ToolResult::error(e.to_string())
}

/// Walks an error chain for a suspension (a [`Suspension`](crate::Suspension) error).
pub(crate) fn suspension_in_chain(err: &(dyn std::error::Error + 'static)) -> Option<ToolResult> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(s) = e.downcast_ref::<crate::suspend::Suspension>() {
            return Some(s.clone().into_tool_result());
        }
        cur = e.source();
    }
    None
}

type Handler = dyn Fn(Map<String, Value>, Context) -> BoxFuture<'static, ToolResult> + Send + Sync;

/// A tool built by hand from a name, a description, an explicit schema and an async closure
/// (what other toolnexus ports call `defineTool`/`NativeTool`), for tools `#[tool]` doesn't fit.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Context, FnTool, Tool};
///
/// # tokio_test_block_on(async {
/// let echo = FnTool::builder("echo")
///     .description("Echoes its text.")
///     .schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .handler(|args, _ctx| async move {
///         args.get("text").and_then(|v| v.as_str()).unwrap_or_default().to_owned()
///     })
///     .build()
///     .unwrap();
/// let out = echo.execute(json!({"text": "hi"}).as_object().unwrap().clone(), &Context::new()).await;
/// assert_eq!(out.output, "hi");
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
/// # }
/// ```
pub struct FnTool {
    name: String,
    description: String,
    schema: Value,
    source: String,
    handler: Box<Handler>,
}

impl fmt::Debug for FnTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("schema", &self.schema)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// Starts a tool named `name`.
    pub fn builder(name: impl Into<String>) -> FnToolBuilder {
        FnToolBuilder {
            name: name.into(),
            description: None,
            schema: None,
            source: SOURCE_NATIVE.to_owned(),
            handler: None,
        }
    }
}

impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn source(&self) -> &str {
        &self.source
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        (self.handler)(args, ctx.clone())
    }
}

/// Builds a [`FnTool`]; see [`FnTool::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct FnToolBuilder {
    name: String,
    description: Option<String>,
    schema: Option<Value>,
    source: String,
    handler: Option<Box<Handler>>,
}

impl fmt::Debug for FnToolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnToolBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FnToolBuilder {
    /// What the tool does, for the model to choose it.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments (root `"type":"object"`).
    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The schema of `T`'s fields, generated by `schemars` (subschemas inlined).
    pub fn schema_for<T: schemars::JsonSchema>(mut self) -> Self {
        self.schema = Some(crate::schema::input_schema_for::<T>());
        self
    }

    /// Where the tool comes from (default `native`).
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    /// The body: receives the arguments object and the call's [`Context`]; returns anything
    /// that implements [`IntoToolResult`].
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        self.handler = Some(Box::new(move |args, ctx| {
            let fut = f(args, ctx);
            Box::pin(async move { fut.await.into_tool_result() })
        }));
        self
    }

    /// The body, with the arguments deserialized as `T` first. Arguments that do not match
    /// become a failure naming the tool, the field and what was expected:
    /// `invalid arguments for <tool>: <field>: <what>`.
    pub fn typed_handler<T, F, Fut, R>(self, f: F) -> Self
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let name = self.name.clone();
        let f = Arc::new(f);
        self.handler(move |args, ctx| {
            let parsed = deserialize_args::<T>(&name, args);
            let f = Arc::clone(&f);
            async move {
                match parsed {
                    Ok(args) => f(args, ctx).await.into_tool_result(),
                    Err(failure) => failure,
                }
            }
        })
    }

    /// Finishes the tool.
    ///
    /// # Errors
    ///
    /// An invalid name ([`Error::InvalidToolName`]), no description or handler
    /// ([`Error::Config`]), or a schema that is not an object with root `"type":"object"`
    /// ([`Error::InvalidSchema`]).
    pub fn build(self) -> Result<FnTool> {
        validate_tool_name(&self.name)?;
        let description = self.description.ok_or_else(|| {
            Error::Config(format!(
                "tool `{}` has no description: call `.description(..)`; models choose tools by their descriptions",
                self.name
            ))
        })?;
        let handler = self.handler.ok_or_else(|| {
            Error::Config(format!(
                "tool `{}` has no handler: call `.handler(..)` or `.typed_handler(..)`",
                self.name
            ))
        })?;
        let schema = self
            .schema
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        crate::schema::check_input_schema(&self.name, &schema)?;
        Ok(FnTool {
            name: self.name,
            description,
            schema,
            source: self.source,
            handler,
        })
    }
}

/// Deserializes a tool's arguments, or explains to the model what is wrong:
/// `invalid arguments for <tool>: <field path>: <serde's message>`.
///
/// # Errors
///
/// The failure [`ToolResult`] to hand back to the model.
pub fn deserialize_args<T: DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> std::result::Result<T, ToolResult> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|err| {
        let path = error_path(&err);
        let inner = err.into_inner();
        if path.is_empty() {
            ToolResult::error(format!("invalid arguments for {tool}: {inner}"))
        } else {
            ToolResult::error(format!("invalid arguments for {tool}: {path}: {inner}"))
        }
    })
}

/// Where a decoding error happened (`a.b[2]`; empty at the root). An unknown key is reported
/// at its parent, so its name is not said twice (`a: unknown field `zip``, not `a.zip: ..`).
pub(crate) fn error_path(err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    use serde_path_to_error::Segment;
    let mut segments: Vec<&Segment> = err.path().iter().collect();
    if let Some(Segment::Map { key }) = segments.last()
        && err
            .inner()
            .to_string()
            .starts_with(&format!("unknown field `{key}`"))
    {
        segments.pop();
    }
    let mut out = String::new();
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 && !matches!(seg, Segment::Seq { .. }) {
            out.push('.');
        }
        out.push_str(&seg.to_string());
    }
    out
}

type WrapFn =
    dyn Fn(SharedTool, Map<String, Value>, Context) -> BoxFuture<'static, ToolResult> + Send + Sync;

/// A tool decorated by a closure that sees every call and its result; see [`wrap`].
pub struct Wrapped {
    inner: SharedTool,
    around: Box<WrapFn>,
}

impl fmt::Debug for Wrapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wrapped")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl Tool for Wrapped {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn input_schema(&self) -> &Value {
        self.inner.input_schema()
    }

    fn source(&self) -> &str {
        self.inner.source()
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        (self.around)(Arc::clone(&self.inner), args, ctx.clone())
    }
}

/// Decorates a tool: `around(inner, args, ctx)` runs instead of the tool and decides whether
/// (and how often) to call `inner`. The name, description, schema and source stay the tool's.
///
/// ```
/// use toolnexus::{Context, FnTool, Tool, ToolResult, wrap};
///
/// let tool = FnTool::builder("ping").description("Pings.")
///     .handler(|_, _| async { "pong" }).build().unwrap();
/// let shouted = wrap(tool, |inner, args, ctx| async move {
///     let r = inner.execute(args, &ctx).await;
///     ToolResult { output: r.output.to_uppercase(), ..r }
/// });
/// # let r = tokio::runtime::Builder::new_current_thread().build().unwrap()
/// #     .block_on(shouted.execute(Default::default(), &Context::new()));
/// assert_eq!(r.output, "PONG");
/// ```
pub fn wrap<F, Fut>(tool: impl IntoTool, around: F) -> Wrapped
where
    F: Fn(SharedTool, Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    Wrapped {
        inner: tool.into_tool(),
        around: Box::new(move |inner, args, ctx| Box::pin(around(inner, args, ctx))),
    }
}

/// Retries a tool on failure, up to `retries` more times, but **never on a suspension**: a
/// suspension is not a failure, and retrying it would ask the human twice and lose the first
/// request's id. (The seed page's `retried`, as a ready combinator.)
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use toolnexus::{Context, FnTool, Tool, ToolResult, retried};
///
/// let calls = Arc::new(AtomicU32::new(0));
/// let seen = Arc::clone(&calls);
/// let flaky = FnTool::builder("flaky").description("Fails once.")
///     .handler(move |_, _| {
///         let n = seen.fetch_add(1, Ordering::SeqCst);
///         async move { if n == 0 { ToolResult::error("busy") } else { ToolResult::success("ok") } }
///     })
///     .build().unwrap();
/// let tool = retried(flaky, 1);
/// # let r = tokio::runtime::Builder::new_current_thread().build().unwrap()
/// #     .block_on(tool.execute(Default::default(), &Context::new()));
/// assert_eq!(r.output, "ok");
/// assert_eq!(calls.load(Ordering::SeqCst), 2);
/// ```
pub fn retried(tool: impl IntoTool, retries: u32) -> Wrapped {
    wrap(tool, move |inner, args, ctx| async move {
        let mut attempt = 0;
        loop {
            let result = inner.execute(args.clone(), &ctx).await;
            if !result.is_failure() || attempt >= retries || ctx.is_cancelled() {
                return result;
            }
            attempt += 1;
        }
    })
}
