//! [`Toolkit`]: a set of tools that routes calls by name and emits provider schemas (the
//! functions behind them are in [`adapters`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use serde_json::{Map, Value};
use tokio_util::sync::WaitForCancellationFuture;

use crate::adapters::{self, ProviderTools};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::ToolSpec;
use crate::result::ToolResult;
use crate::tool::{IntoTool, SharedTool, validate_tool_name};
use crate::util::{json_kind, panic_message};

/// Up to this many tools, `get` compares names instead of hashing.
const SCAN_UP_TO: usize = 8;

/// A set of tools with unique names, in registration order.
///
/// `execute` routes a call by name and never panics, never fails: an unknown tool, bad
/// arguments, a panicking tool, a timeout or a cancellation all become an `is_error` result
/// the model can read.
///
/// ```
/// use toolnexus::{Context, FnTool, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let ping = FnTool::builder("ping").description("Pings.").handler(|_, _| async { "pong" }).build().unwrap();
/// let toolkit = Toolkit::builder().tool(ping).build().unwrap();
///
/// let r = toolkit.execute("ping", serde_json::Value::Null, &Context::new()).await;
/// assert_eq!(r.output, "pong");
/// let r = toolkit.execute("nope", serde_json::json!({}), &Context::new()).await;
/// assert_eq!((r.output.as_str(), r.is_error), ("Unknown tool: nope", true));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Toolkit {
    tools: Vec<SharedTool>,
    index: HashMap<String, usize>,
}

impl fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_names(&self.tools, f)
    }
}

/// A toolkit (or its builder) in `{:?}`: the list of its tools' names.
fn debug_names(tools: &[SharedTool], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_list()
        .entries(tools.iter().map(|t| t.name()))
        .finish()
}

impl Toolkit {
    /// An empty toolkit.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a toolkit; errors (invalid or duplicate names) are reported by `build`.
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::default()
    }

    /// A toolkit of `tools`, in order.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateTool`] naming the repeated tool, or [`Error::InvalidToolName`] /
    /// [`Error::InvalidSchema`] for a tool implemented by hand with a bad name or schema.
    pub fn from_tools<I>(tools: I) -> Result<Self>
    where
        I: IntoIterator,
        I::Item: IntoTool,
    {
        let mut kit = Self::new();
        for tool in tools {
            kit.add(tool)?;
        }
        Ok(kit)
    }

    /// Adds a tool at the end.
    ///
    /// # Errors
    ///
    /// As [`Toolkit::from_tools`]; on error the toolkit is unchanged.
    pub fn add(&mut self, tool: impl IntoTool) -> Result<()> {
        let tool = tool.into_tool();
        let name = tool.name().to_owned();
        validate_tool_name(&name)?;
        crate::schema::check_input_schema(&name, tool.input_schema())?;
        if self.index.contains_key(&name) {
            return Err(Error::DuplicateTool { name });
        }
        self.index.insert(name, self.tools.len());
        self.tools.push(tool);
        Ok(())
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> &[SharedTool] {
        &self.tools
    }

    /// The tool called `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&SharedTool> {
        // a few string comparisons beat hashing the name for the toolkits most runs have
        if self.tools.len() <= SCAN_UP_TO {
            return self.tools.iter().find(|t| t.name() == name);
        }
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Runs the tool called `name` with `args`.
    ///
    /// - unknown name: `Unknown tool: <name>` (`is_error`; a name longer than 64 characters is
    ///   quoted as its first 64 and its length in bytes);
    /// - `null` arguments read as `{}`; arguments that are not a JSON object, or that nest
    ///   deeper than [`MAX_DEPTH`](crate::limits::MAX_DEPTH), fail, saying so;
    /// - a tool that panics fails with `tool <name> panicked: <message>`, and the toolkit
    ///   keeps working;
    /// - `ctx`'s timeout and cancellation end the call with `tool <name> timed out after
    ///   <duration>` or `tool <name> was cancelled`;
    /// - a suspension whose request violates the trust boundary
    ///   ([`Request::check_trust_boundary`](crate::Request::check_trust_boundary)) becomes a
    ///   failure carrying that error, however the result was built;
    /// - a result with more than [`MAX_RESULT_PARTS`](crate::limits::MAX_RESULT_PARTS) content
    ///   parts, or parts of more than
    ///   [`MAX_RESULT_PART_BYTES`](crate::limits::MAX_RESULT_PART_BYTES) in all, becomes a
    ///   failure that says so, as does one whose metadata nests deeper than
    ///   [`MAX_DEPTH`](crate::limits::MAX_DEPTH).
    ///
    /// Never panics; a tool's own failure or suspension is returned as its result.
    ///
    /// The name is looked up and the tool's future is made when `execute` is called; the
    /// returned [`Execution`] runs it when awaited.
    #[inline] // the common path is short: inlined, the result is built where it is used
    pub fn execute<'a>(&'a self, name: &'a str, args: Value, ctx: &'a Context) -> Execution<'a> {
        let Some(tool) = self.get(name) else {
            return Execution::done(unknown_tool(name));
        };
        let args = match args {
            Value::Object(map) if !crate::limits::too_deep_map(&map) => map,
            Value::Null => Map::new(),
            other => return Execution::done(invalid_arguments(name, &other)),
        };
        Execution::guarded(tool.as_ref(), args, ctx)
    }
}

#[cold]
fn unknown_tool(name: &str) -> ToolResult {
    ToolResult::error(format!("Unknown tool: {}", crate::limits::excerpt(name)))
}

/// Arguments that are not a JSON object, or nest too deep.
#[cold]
fn invalid_arguments(name: &str, args: &Value) -> ToolResult {
    let why = match args {
        Value::Object(_) => crate::limits::too_deep_message("the arguments nest"),
        other => format!("expected a JSON object, got {}", json_kind(other)),
    };
    ToolResult::error(format!("invalid arguments for {name}: {why}"))
}

/// The future of one [`Toolkit::execute`] call: the tool's own future, guarded against
/// panics, the context's timeout and its cancellation.
#[must_use = "futures do nothing unless awaited"]
pub struct Execution<'a> {
    state: State<'a>,
}

enum State<'a> {
    /// The result is known without running anything (or was already taken).
    Done(Option<ToolResult>),
    /// The tool runs.
    Running(Box<Guarded<'a>>),
}

struct Guarded<'a> {
    name: &'a str,
    ctx: &'a Context,
    call: crate::tool::BoxFuture<'a, ToolResult>,
    limit: Option<std::time::Duration>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    // made only once the call is pending, so a tool that finishes at once costs nothing here
    cancelled: Option<Pin<Box<WaitForCancellationFuture<'a>>>>,
}

impl fmt::Debug for Execution<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Done(_) => f.write_str("Execution(done)"),
            State::Running(g) => f.debug_tuple("Execution").field(&g.name).finish(),
        }
    }
}

impl Guarded<'_> {
    /// The deadline, then cancellation, while the call is pending.
    #[cold]
    fn interrupted(&mut self, cx: &mut std::task::Context<'_>) -> Option<ToolResult> {
        if let (Some(sleep), Some(limit)) = (self.deadline.as_mut(), self.limit)
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Some(ToolResult::error(format!(
                "tool {} timed out after {limit:?}",
                self.name
            )));
        }
        let ctx = self.ctx;
        let cancelled = self
            .cancelled
            .get_or_insert_with(|| Box::pin(ctx.cancellation().cancelled()));
        cancelled
            .as_mut()
            .poll(cx)
            .is_ready()
            .then(|| ToolResult::error(format!("tool {} was cancelled", self.name)))
    }
}

impl<'a> Execution<'a> {
    fn done(result: ToolResult) -> Self {
        Self {
            state: State::Done(Some(result)),
        }
    }

    /// Starts one tool call; a context cancelled before the call never runs the tool, and a
    /// tool that panics while building its future (before its first `.await`) is caught too.
    #[inline]
    pub(crate) fn guarded(
        tool: &'a dyn crate::tool::Tool,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> Self {
        if ctx.is_cancelled() {
            return Self::done(cancelled(tool.name()));
        }
        // a tool that never waits runs here, without a boxed future
        match std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute_now(args, ctx))) {
            Ok(Ok(result)) => Self::done(enforce_trust_boundary(result)),
            Ok(Err(args)) => Self::running(tool, args, ctx),
            Err(panic) => Self::done(panicked(tool.name(), panic.as_ref())),
        }
    }

    /// A tool that needs its future.
    #[inline(never)]
    fn running(
        tool: &'a dyn crate::tool::Tool,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> Self {
        let name = tool.name();
        let call = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute(args, ctx))) {
            Ok(call) => call,
            Err(panic) => return Self::done(panicked(name, panic.as_ref())),
        };
        let limit = ctx.timeout();
        Self {
            state: State::Running(Box::new(Guarded {
                name,
                ctx,
                call,
                limit,
                deadline: limit.map(|l| Box::pin(tokio::time::sleep(l))),
                cancelled: None,
            })),
        }
    }
}

impl Future for Execution<'_> {
    type Output = ToolResult;

    /// One hand-written poll: the call first (a panic inside it caught), then the deadline,
    /// then cancellation.
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<ToolResult> {
        let this = self.get_mut();
        match &mut this.state {
            State::Done(result) => Poll::Ready(result.take().unwrap_or_else(polled_again)),
            State::Running(_) => this.poll_running(cx),
        }
    }
}

#[cold]
fn polled_again() -> ToolResult {
    ToolResult::error("the tool call was polled after it finished")
}

#[cold]
fn cancelled(name: &str) -> ToolResult {
    ToolResult::error(format!("tool {name} was cancelled"))
}

impl Execution<'_> {
    #[inline(never)]
    fn poll_running(&mut self, cx: &mut std::task::Context<'_>) -> Poll<ToolResult> {
        let this = self;
        let State::Running(g) = &mut this.state else {
            return Poll::Ready(polled_again());
        };
        let ready = match std::panic::catch_unwind(AssertUnwindSafe(|| g.call.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Some(enforce_trust_boundary(result)),
            Ok(Poll::Pending) => g.interrupted(cx),
            Err(panic) => Some(panicked(g.name, panic.as_ref())),
        };
        match ready {
            Some(result) => {
                this.state = State::Done(None);
                Poll::Ready(result)
            }
            None => Poll::Pending,
        }
    }
}

fn panicked(name: &str, payload: &(dyn std::any::Any + Send)) -> ToolResult {
    ToolResult::error(format!("tool {name} panicked: {}", panic_message(payload)))
}

/// A suspension built field by field (not through [`ToolResult::suspended`]), or returned by a
/// `before_tool` hook, still passes the trust boundary: one that violates it becomes a failure.
#[inline]
pub(crate) fn enforce_trust_boundary(result: ToolResult) -> ToolResult {
    if !result.parts.is_empty() {
        return check_parts(result);
    }
    if result.metadata.is_none() {
        return result;
    }
    check_pending(result)
}

/// The caps on a result's content parts ([`MAX_RESULT_PARTS`](crate::limits::MAX_RESULT_PARTS),
/// [`MAX_RESULT_PART_BYTES`](crate::limits::MAX_RESULT_PART_BYTES)), then the other checks.
#[cold]
fn check_parts(result: ToolResult) -> ToolResult {
    use crate::limits::{MAX_RESULT_PART_BYTES, MAX_RESULT_PARTS};
    let count = result.parts.len();
    let bytes: usize = result
        .parts
        .iter()
        .map(|p| {
            p.data.as_ref().map_or(0, String::len)
                + p.url.as_ref().map_or(0, String::len)
                + p.mime_type.as_ref().map_or(0, String::len)
                + p.extra
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
        })
        .sum();
    if count > MAX_RESULT_PARTS || bytes > MAX_RESULT_PART_BYTES {
        return ToolResult::error(format!(
            "the tool's result carries {count} content parts of {bytes} bytes; a result may carry at most {MAX_RESULT_PARTS} parts of {MAX_RESULT_PART_BYTES} bytes in all: return fewer or smaller parts (a link with `url` instead of inline data)"
        ));
    }
    if result.metadata.is_none() {
        return result;
    }
    check_pending(result)
}

#[cold]
fn check_pending(result: ToolResult) -> ToolResult {
    if let Some(meta) = &result.metadata {
        let deep = meta.extra.values().any(crate::limits::too_deep)
            || meta
                .pending
                .as_ref()
                .and_then(|r| r.data.as_ref())
                .is_some_and(|d| d.values().any(crate::limits::too_deep));
        if deep {
            let message = crate::limits::too_deep_message("the tool's result metadata nests");
            if let Some(meta) = result.metadata {
                let meta = *meta;
                for v in meta.extra.into_iter().map(|(_, v)| v) {
                    crate::limits::dismantle(v);
                }
                if let Some(data) = meta.pending.and_then(|r| r.data) {
                    for (_, v) in *data {
                        crate::limits::dismantle(v);
                    }
                }
            }
            return ToolResult::error(message);
        }
    }
    match crate::result::pending_of(&result) {
        None => result,
        Some(request) => match request.check_trust_boundary() {
            Ok(()) => result,
            Err(e) => ToolResult::error(e.to_string()),
        },
    }
}

/// The toolkit in each provider's wire format ([`adapters`]).
impl Toolkit {
    /// The specs of the tools, in order, as the adapters and the agent loop use them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools()
            .iter()
            .map(|t| adapters::spec_of(t.as_ref()))
            .collect()
    }

    /// OpenAI chat-completions tools (see [`adapters::openai`]).
    ///
    /// # Errors
    ///
    /// What OpenAI would refuse the request for ([`adapters`] lists it). A toolkit's own tools
    /// pass (their names and schemas were checked when they were added); the checks are for
    /// specs a hook rewrote, and the four adapters share one signature.
    ///
    /// ```
    /// assert_eq!(toolnexus::Toolkit::new().to_openai().unwrap(), serde_json::json!([]));
    /// ```
    pub fn to_openai(&self) -> Result<ProviderTools> {
        adapters::openai(&self.specs())
    }

    /// Anthropic messages tools (see [`adapters::anthropic`]).
    ///
    /// # Errors
    ///
    /// What Anthropic would refuse the request for, as [`to_openai`](Self::to_openai).
    ///
    /// ```
    /// assert_eq!(toolnexus::Toolkit::new().to_anthropic().unwrap(), serde_json::json!([]));
    /// ```
    pub fn to_anthropic(&self) -> Result<ProviderTools> {
        adapters::anthropic(&self.specs())
    }

    /// Gemini tools, their schemas lowered to what Gemini accepts (see [`adapters::gemini`]).
    ///
    /// # Errors
    ///
    /// [`Error::SchemaLowering`] naming the first tool whose
    /// schema Gemini cannot take (a recursive type, say), the construct and where it is; a tool
    /// whose name does not start with a letter or `_` ([`Error::InvalidToolName`]: Gemini's
    /// rule).
    ///
    /// ```
    /// assert_eq!(
    ///     toolnexus::Toolkit::new().to_gemini().unwrap(),
    ///     serde_json::json!([{"functionDeclarations": []}])
    /// );
    /// ```
    pub fn to_gemini(&self) -> Result<ProviderTools> {
        adapters::gemini(&self.specs())
    }

    /// Gemini tools with the schemas passed as they are, not lowered (see [`adapters::gemini_raw`]):
    /// Gemini may reject them; [`to_gemini`](Self::to_gemini) is what to send.
    ///
    /// # Errors
    ///
    /// A tool whose name does not start with a letter or `_` ([`Error::InvalidToolName`]:
    /// Gemini's rule).
    pub fn to_gemini_raw(&self) -> Result<ProviderTools> {
        adapters::gemini_raw(&self.specs())
    }

    /// OpenAI chat-completions tools in strict mode (see [`adapters::openai_strict`]).
    ///
    /// # Errors
    ///
    /// [`Error::SchemaLowering`] naming the first tool whose
    /// schema strict mode cannot express, the construct and where it is.
    pub fn to_openai_strict(&self) -> Result<ProviderTools> {
        adapters::openai_strict(&self.specs())
    }
}

/// Builds a [`Toolkit`], reporting the first bad tool at `build`.
#[derive(Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolkitBuilder {
    tools: Vec<SharedTool>,
}

impl fmt::Debug for ToolkitBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_names(&self.tools, f)
    }
}

impl ToolkitBuilder {
    /// Adds a tool.
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.tools.push(tool.into_tool());
        self
    }

    /// Adds several tools.
    pub fn tools<I>(mut self, tools: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoTool,
    {
        self.tools
            .extend(tools.into_iter().map(IntoTool::into_tool));
        self
    }

    /// Finishes the toolkit.
    ///
    /// # Errors
    ///
    /// As [`Toolkit::from_tools`].
    pub fn build(self) -> Result<Toolkit> {
        Toolkit::from_tools(self.tools)
    }
}
