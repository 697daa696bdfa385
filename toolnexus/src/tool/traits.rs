//! The [`Tool`] trait, and how a [`Toolkit`](crate::Toolkit) holds tools: [`SharedTool`],
//! [`IntoTool`], [`BoxFuture`].

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::ToolAnnotations;
use crate::context::Context;
use crate::result::ToolResult;

pub use crate::util::BoxFuture;

/// A shared, type-erased tool, as a [`Toolkit`](crate::Toolkit) holds it.
pub type SharedTool = Arc<dyn Tool>;

/// `source` of tools made from Rust functions.
pub const SOURCE_NATIVE: &str = "native";

/// A tool a model can call.
///
/// Object-safe, `Send + Sync`, executed asynchronously. Most tools come from `#[tool]`
/// functions or [`FnTool`](super::FnTool); implement this trait by hand for anything else.
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

    /// What the tool says about its effects (read-only, destructive, idempotent, open world);
    /// none of them by default. `#[tool(read_only)]` and the like set them. A tool that is not
    /// [idempotent](ToolAnnotations::is_idempotent) (the default) is not run again on its own
    /// after a crash cut its call ([`reconcile`](crate::reconcile)).
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// Whether a person approving a call of this tool may change its arguments: its
    /// `approval` requests then carry the proposed arguments and their schema
    /// (`data.args`, `data.argsSchema`), and an accepting answer may carry other arguments
    /// (`data.args`), which the loop checks against [`input_schema`](Tool::input_schema),
    /// passes through `before_tool` again, and runs instead. `false` by default: an edit to a
    /// tool that did not opt in is refused and nothing runs. `#[tool(approval = "..",
    /// editable)]` and [`FnToolBuilder::editable`](super::FnToolBuilder::editable) opt in.
    fn approval_edits(&self) -> bool {
        false
    }

    /// Runs one call.
    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult>;

    /// Runs one call to the end at once, for a tool that never waits: `Ok` with the same
    /// result [`Tool::execute`] would give, or `Err(args)`, handing the arguments back, when
    /// the tool needs its future. [`Toolkit::execute`](crate::Toolkit::execute) asks this first
    /// and so spares a boxed future per call; `#[tool]` on a plain (not `async`) `fn` answers
    /// `Ok`. The default answers `Err`.
    ///
    /// ```
    /// use toolnexus::{Context, Tool};
    ///
    /// /// Adds one.
    /// #[toolnexus::tool]
    /// fn inc(n: i64) -> i64 {
    ///     n + 1
    /// }
    ///
    /// let args = serde_json::json!({"n": 1}).as_object().unwrap().clone();
    /// assert_eq!(Inc.execute_now(args, &Context::new()).unwrap().output, "2");
    /// ```
    fn execute_now(
        &self,
        args: Map<String, Value>,
        ctx: &Context,
    ) -> Result<ToolResult, Map<String, Value>> {
        let _ = ctx;
        Err(args)
    }
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
