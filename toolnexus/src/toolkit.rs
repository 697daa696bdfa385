//! [`Toolkit`]: a set of tools that routes calls by name and emits provider schemas.

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use serde_json::{Map, Value};
use tokio_util::sync::WaitForCancellationFuture;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::result::ToolResult;
use crate::tool::{IntoTool, SharedTool, validate_tool_name};

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
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
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
    /// - unknown name: `Unknown tool: <name>` (`is_error`);
    /// - `null` arguments read as `{}`; arguments that are not a JSON object fail, saying so;
    /// - a tool that panics fails with `tool <name> panicked: <message>`, and the toolkit
    ///   keeps working;
    /// - `ctx`'s timeout and cancellation end the call with `tool <name> timed out after
    ///   <duration>` or `tool <name> was cancelled`;
    /// - a suspension whose request violates the trust boundary
    ///   ([`Request::check_trust_boundary`](crate::Request::check_trust_boundary)) becomes a
    ///   failure carrying that error, however the result was built.
    ///
    /// Never panics; a tool's own failure or suspension is returned as its result.
    pub async fn execute(&self, name: &str, args: Value, ctx: &Context) -> ToolResult {
        let Some(tool) = self.get(name) else {
            return ToolResult::error(format!("Unknown tool: {name}"));
        };
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return ToolResult::error(format!(
                    "invalid arguments for {name}: expected a JSON object, got {}",
                    json_kind(&other)
                ));
            }
        };
        run_guarded(tool.as_ref(), args, ctx).await
    }
}

/// Runs one tool call with panic isolation, the context's timeout and its cancellation.
pub(crate) async fn run_guarded(
    tool: &dyn crate::tool::Tool,
    args: Map<String, Value>,
    ctx: &Context,
) -> ToolResult {
    let name = tool.name();
    if ctx.is_cancelled() {
        return ToolResult::error(format!("tool {name} was cancelled"));
    }
    // a tool that panics while building its future (before its first `.await`) is caught too
    let mut call = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute(args, ctx))) {
        Ok(call) => call,
        Err(panic) => return panicked(name, panic.as_ref()),
    };
    let limit = ctx.timeout();
    let mut deadline = limit.map(|l| Box::pin(tokio::time::sleep(l)));
    // boxed, so the state of every call stays small (it is only made for a call that waits)
    let mut cancelled: Option<Pin<Box<WaitForCancellationFuture<'_>>>> = None;
    // One hand-written poll: the call first (a panic inside it caught), then the deadline,
    // then cancellation. The cancellation future is only made once the call is pending, so a
    // tool that finishes at once costs no bookkeeping (a context cancelled before the call
    // was caught above).
    poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => return Poll::Ready(enforce_trust_boundary(result)),
            Ok(Poll::Pending) => {}
            Err(panic) => return Poll::Ready(panicked(name, panic.as_ref())),
        }
        if let (Some(sleep), Some(limit)) = (deadline.as_mut(), limit)
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(ToolResult::error(format!(
                "tool {name} timed out after {limit:?}"
            )));
        }
        let cancelled = cancelled.get_or_insert_with(|| Box::pin(ctx.cancellation().cancelled()));
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(ToolResult::error(format!("tool {name} was cancelled")));
        }
        Poll::Pending
    })
    .await
}

fn panicked(name: &str, payload: &(dyn std::any::Any + Send)) -> ToolResult {
    ToolResult::error(format!("tool {name} panicked: {}", panic_message(payload)))
}

/// A suspension built field by field (not through [`ToolResult::suspended`]) still passes the
/// trust boundary: one that violates it becomes a failure.
fn enforce_trust_boundary(result: ToolResult) -> ToolResult {
    match result
        .pending()
        .map(crate::request::Request::check_trust_boundary)
    {
        Some(Err(e)) => ToolResult::error(e.to_string()),
        _ => result,
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
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
