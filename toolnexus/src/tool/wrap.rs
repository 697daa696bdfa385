//! Decorators: [`wrap`] runs a closure around every call of a tool, [`retried`] retries its
//! failures (never its suspensions).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{BoxFuture, IntoTool, SharedTool, Tool};
use crate::context::Context;
use crate::result::ToolResult;

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

    fn annotations(&self) -> super::ToolAnnotations {
        self.inner.annotations()
    }

    fn approval_edits(&self) -> bool {
        self.inner.approval_edits()
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
/// use toolnexus::{Context, FnTool, Tool, ToolResult, tool::wrap};
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
/// use toolnexus::{Context, FnTool, Tool, ToolResult, tool::retried};
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
