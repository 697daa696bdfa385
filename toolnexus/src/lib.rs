//! # toolnexus
//!
//! Turn plain Rust functions into LLM tools, let any tool **suspend** to ask a human (input,
//! approval, login, a question), and run those tools in an agent loop that waits for the
//! answer in-process or halts durably and resumes later.
//!
//! ```
//! use toolnexus::{Context, FnTool, Request, Toolkit, ToolResult, pending_of};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let book = FnTool::builder("book_flight")
//!     .description("Book a flight.")
//!     .handler(|_args, ctx| async move {
//!         match ctx.answer_data::<String>() {
//!             Ok(Some(city)) => ToolResult::success(format!("booked to {city}")),
//!             _ => ToolResult::suspended(Request::input("Which city?")),
//!         }
//!     })
//!     .build()
//!     .unwrap();
//! let toolkit = Toolkit::builder().tool(book).build().unwrap();
//!
//! let first = toolkit.execute("book_flight", serde_json::json!({}), &Context::new()).await;
//! let req = pending_of(&first).expect("suspended");
//! assert_eq!(first.output, "Input required: Which city?");
//!
//! let ctx = Context::new().with_answer(req.accept("Oslo"));
//! let second = toolkit.execute("book_flight", serde_json::json!({}), &ctx).await;
//! assert_eq!(second.output, "booked to Oslo");
//! # });
//! ```

pub mod adapters;
mod client;
mod context;
mod error;
mod lower;
mod macro_support;
mod model;
mod request;
mod result;
mod schema;
mod suspend;
mod tool;
mod toolkit;

pub use client::{
    BeforeTool, Client, ClientBuilder, DEFAULT_MAX_TURNS, Event, FnModel, IntoAnswer, IntoReply,
    Limit, Metric, PENDING_RUN_VERSION, PendingRun, Reply, RunResult, RunStatus, ScriptedModel,
    ToolCallRecord,
};
pub use context::Context;
pub use error::{Error, Result};
pub use model::{
    DeltaSink, Message, Model, ModelRequest, ModelTurn, Role, ToolCall, ToolSpec, Usage,
};
pub use request::{
    Answer, AnswerDataError, DeclineReason, KIND_APPROVAL, KIND_AUTHORIZATION, KIND_INPUT,
    KIND_QUESTION, Request, new_request_id,
};
pub use result::{Metadata, ToolResult, pending_of};
pub use schema::{check_input_schema, generator as schema_generator, input_schema_for};
pub use suspend::Suspension;
pub use tool::{
    BoxFuture, FnTool, FnToolBuilder, IntoTool, IntoToolResult, Json, MAX_TOOL_NAME_LEN,
    SOURCE_NATIVE, SharedTool, Tool, Wrapped, deserialize_args, retried, sanitize,
    validate_tool_name, wrap,
};
pub use toolkit::{Toolkit, ToolkitBuilder};

/// Turns a plain Rust function into a [`Tool`], its input schema and argument decoding
/// generated at compile time.
///
/// ```
/// use toolnexus::{Context, Toolkit, tool};
///
/// /// Book a flight for the traveller.
/// #[tool]
/// async fn book_flight(
///     /// The flight number, e.g. "AI-503".
///     flight: String,
///     /// How many seats; one when omitted.
///     seats: Option<u8>,
///     ctx: &toolnexus::Context,
/// ) -> Result<String, std::io::Error> {
///     let _ = ctx;
///     Ok(format!("booked {} seat(s) on {flight}", seats.unwrap_or(1)))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let toolkit = Toolkit::builder().tool(BookFlight).build().unwrap();
/// let r = toolkit
///     .execute("book_flight", serde_json::json!({"flight": "AI-503", "seats": 2}), &Context::new())
///     .await;
/// assert_eq!(r.output, "booked 2 seat(s) on AI-503");
///
/// let r = toolkit
///     .execute("book_flight", serde_json::json!({"flight": "AI-503", "seats": "two"}), &Context::new())
///     .await;
/// assert_eq!(r.output, r#"invalid arguments for book_flight: seats: invalid type: string "two", expected u8"#);
///
/// // the function itself stays callable as written
/// assert_eq!(book_flight("X1".into(), None, &Context::new()).await.unwrap(), "booked 1 seat(s) on X1");
/// # });
/// ```
///
/// # The generated tool
///
/// Next to the function (which stays exactly as written), `#[tool]` defines a **unit struct
/// named after the function in PascalCase** (`book_flight` -> `BookFlight`, `r#type` ->
/// `Type`), with the function's visibility, implementing [`Tool`]. Register it with
/// [`ToolkitBuilder::tool`]. Works on `fn` and `async fn`.
///
/// - **Name**: `#[tool(name = "...")]`, else the function's name. Checked at compile time: 1 to
///   64 characters of `[A-Za-z0-9_-]`.
/// - **Description**: `#[tool(description = "...")]` (a string literal or a macro such as
///   `include_str!`), else the doc comment: all lines, one leading space stripped from each,
///   joined with `\n` (so a blank `///` line stays a paragraph break), trimmed.
///   `#[doc = include_str!("..")]` works. No description at all is a compile error: models
///   choose tools by their descriptions.
/// - **Input schema**: one property per parameter, in declaration order;
///   `additionalProperties: false`. Built once per process, never per call. The schema of
///   `String`, `&str`, `char`, `bool`, integers (with their ranges), floats, and `Option`/`Vec`
///   of those is written by the macro at compile time; any other type needs
///   `serde::Deserialize` and `schemars::JsonSchema` (nested types are inlined; only recursive
///   types keep `$defs`).
///
/// # Parameters
///
/// - `///` on a parameter becomes its property's `description`.
/// - `Option<T>` is not required (absent or `null` reads as `None`).
/// - `#[arg(default = expr)]`: not required; `expr` when absent (shown as the schema's
///   `default` when the type is `Serialize`).
/// - `#[arg(rename = "...")]`: the property's name.
/// - `&str`, `&[T]` and `&T` parameters are decoded as `String`, `Vec<T>`, `T` and lent.
/// - **Context**: a parameter of type `&toolnexus::Context` (or `toolnexus::Context` by value)
///   receives the call's [`Context`] and is not in the schema. It is recognised by that full
///   path, or by an explicit `#[ctx]` (alias `#[context]`) marker on the parameter, never by the
///   last path segment alone (a bare `&Context` is a compile error asking for one of those).
/// - **One arguments struct**: mark a single parameter `#[args]` and its type's fields become the
///   properties (the type derives `Deserialize` and `JsonSchema`; the parameter may be a
///   destructuring pattern). Unless the struct says otherwise (`deny_unknown_fields`), the
///   schema gets `additionalProperties: false` and unknown keys are rejected.
///
/// ```
/// use toolnexus::tool;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct SearchArgs {
///     /// Words to look for.
///     query: String,
///     /// At most this many hits.
///     limit: Option<u32>,
/// }
///
/// /// Search the catalogue.
/// #[tool]
/// fn search(#[args] SearchArgs { query, limit }: SearchArgs) -> Vec<String> {
///     vec![query; limit.unwrap_or(1) as usize]
/// }
///
/// let schema = toolnexus::Tool::input_schema(&Search);
/// assert_eq!(schema["required"], serde_json::json!(["query"]));
/// assert_eq!(schema["additionalProperties"], false);
/// ```
///
/// # Arguments at run time
///
/// Arguments that do not match become an `is_error` result naming the tool, the field path and
/// what was expected: `invalid arguments for book_flight: seats: invalid type: string "two",
/// expected u8`; ``missing field `flight` ``; an unknown key lists the accepted ones (``unknown
/// field `sets`, expected `flight` or `seats` ``). The generated code never panics.
///
/// # Return types
///
/// - `String`, `&str`: the output as-is; `()`: empty output;
/// - [`ToolResult`]: passed through; a [`Suspension`] (what `suspend!` produces): suspends;
/// - any other `Serialize` value: compact JSON;
/// - `Result<T, E>` of those with `E: Display`: `Err` becomes an `is_error` result with the
///   error's Display text, **except** when the error is a suspension: `E` = [`Suspension`],
///   a `Box<dyn Error + Send + Sync>` holding one (what `?` makes of it), or an
///   `E: std::error::Error` whose `source()` chain holds one (e.g. a variant
///   `#[error("suspended")] Suspended(#[from] Suspension)`). So a function returning
///   `Result<String, E>` suspends with `return Err(suspension.into())` or `Err(suspension)?`.
///
/// Anything else is a compile error on the return type.
///
/// # Attribute keys
///
/// `name = "..."`, `description = "..."`, and `crate = path` (or `crate = "path"`): the path the
/// generated code reaches toolnexus by (default `::toolnexus`), for crates that rename or
/// re-export it. Generated code names the runtime only through `<crate>::__private`, so the
/// user's crate needs no direct dependency on serde, serde_json or schemars.
///
/// # Compile errors
///
/// A `self` receiver outside a [`toolset`], generic parameters, `impl Trait`, pattern and `&mut`
/// parameters, argument types that are not `Deserialize`/`JsonSchema` (reported on the type),
/// invalid names, unknown or duplicate keys, a missing description, two context parameters and
/// unsupported return types (reported on the type) are compile errors. A failing `#[tool]`
/// still emits the function, so one mistake gives one error.
pub use toolnexus_macros::tool;

/// Binds the `#[tool]` methods of an inherent `impl` block to one shared instance, for tools
/// that need state (a database pool, an HTTP client, configuration).
///
/// The block's `#[tool]` methods take `&self` (or no receiver); everything `#[tool]` accepts
/// applies to them. `#[toolset]` adds one method:
///
/// ```text
/// pub fn tools(self: Arc<Self>) -> Vec<toolnexus::SharedTool>
/// ```
///
/// returning the tools in declaration order, each holding a clone of the `Arc`. Methods
/// without `#[tool]` are left alone. `#[toolset(crate = path)]` sets the runtime path for all
/// of its tools.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use toolnexus::{Context, Toolkit, tool, toolset};
///
/// struct Counter {
///     hits: AtomicU32,
/// }
///
/// #[toolset]
/// impl Counter {
///     /// Count one more hit and return the total.
///     #[tool]
///     fn hit(&self, /// How many hits to add.
///         by: u32) -> u32 {
///         self.hits.fetch_add(by, Ordering::SeqCst) + by
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let counter = Arc::new(Counter { hits: AtomicU32::new(0) });
/// let toolkit = Toolkit::builder().tools(Arc::clone(&counter).tools()).build().unwrap();
/// let r = toolkit.execute("hit", serde_json::json!({"by": 2}), &Context::new()).await;
/// assert_eq!(r.output, "2");
/// assert_eq!(counter.hits.load(Ordering::SeqCst), 2);
/// # });
/// ```
pub use toolnexus_macros::toolset;

/// Cancellation tokens, as [`Context::cancellation`] hands them out.
pub use tokio_util::sync::CancellationToken;

/// Not public API: what code generated by `toolnexus-macros` reaches the runtime through.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    // empty until the `suspend!` support lands in macro_support/suspend.rs
    #[allow(unused_imports, unreachable_pub)]
    pub use crate::macro_support::suspend::*;
    pub use crate::macro_support::tool::*;
}
