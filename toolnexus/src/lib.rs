//! # toolnexus
//!
//! Turn plain Rust functions into LLM tools, let any tool **suspend** to ask a human (input,
//! approval, login, a question), and run those tools in an agent loop that waits for the
//! answer in-process or halts durably and resumes later.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::{Context, Form, Suspension, Toolkit, ask, assert_pending, assert_success, tool};
//!
//! #[derive(Form, serde::Deserialize)]
//! struct Destination {
//!     /// The city to fly to.
//!     city: String,
//! }
//!
//! /// Book a flight; asks the traveller where to.
//! #[tool]
//! async fn book_flight(flight: String, ctx: &toolnexus::Context) -> Result<String, Suspension> {
//!     let dest = ask!(ctx, input "Which city?", schema = Destination);
//!     Ok(format!("booked {flight} to {}", dest.city))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let toolkit = Toolkit::builder().tool(BookFlight).build().unwrap();
//! let args = json!({"flight": "AI-503"});
//!
//! // no answer yet: the tool suspends, and the model would read the output
//! let first = toolkit.execute("book_flight", args.clone(), &Context::new()).await;
//! let request = assert_pending!(first, input "Which city?", schema = Destination);
//! assert_eq!(first.output, "Input required: Which city?");
//!
//! // the human answers; the same call again, with the answer in the context
//! let ctx = Context::new().with_answer(request.accept(json!({"city": "Oslo"})));
//! let second = toolkit.execute("book_flight", args, &ctx).await;
//! assert_success!(second, "booked AI-503 to Oslo");
//! # });
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adapters;
mod client;
mod context;
mod error;
mod form;
mod lower;
mod macro_support;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
mod model;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
mod providers;
mod question;
mod request;
mod result;
mod schema;
mod suspend;
pub mod testing;
mod tool;
mod toolkit;

pub use client::{
    BeforeTool, Client, ClientBuilder, DEFAULT_MAX_TURNS, Event, FnModel, IntoAnswer, IntoReply,
    Limit, Metric, PENDING_RUN_VERSION, PendingRun, Reply, RunResult, RunStatus, ScriptedModel,
    ToolCallRecord,
};
pub use context::Context;
pub use error::{Error, Result};
pub use form::{Form, FormField, answer_schema_for, is_credential_field};
pub use model::{
    DeltaSink, Message, Model, ModelRequest, ModelTurn, Role, ToolCall, ToolSpec, Usage,
};
pub use question::{QUESTION_TOOL_NAME, QuestionTool, SOURCE_BUILTIN};
pub use request::{
    Answer, AnswerDataError, DeclineReason, KIND_APPROVAL, KIND_AUTHORIZATION, KIND_INPUT,
    KIND_QUESTION, Request, new_request_id,
};
pub use result::{Metadata, ToolResult, pending_of};
pub use schema::{check_input_schema, generator as schema_generator, input_schema_for};
pub use suspend::{SuspendError, Suspension};

/// Builds a [`Suspension`]: the value a tool returns to stop and ask a human.
///
/// ```text
/// suspend!(<kind> <prompt>? (, <option> = <value>)*)
/// ```
///
/// - **kind**: `input`, `approval`, `authorization`, `question`, or a string literal for a
///   custom kind;
/// - **prompt**: a string literal or any expression that yields a `String` (`format!(..)`
///   works); required, except for `authorization`, whose default prompt is
///   `Login required: <url>`;
/// - **options**, each at most once: `url = expr` (required for `authorization`),
///   `data = expr` (any `Serialize` that makes a JSON object), `schema = Type` (its restricted
///   schema becomes `data.schema`: a type deriving [`Form`](derive@Form), checked at compile
///   time, or any `schemars::JsonSchema`, checked when the request is built),
///   `expires_in = expr` (a [`Duration`](std::time::Duration); sets `expiresAt`, RFC 3339 UTC),
///   `id = expr` (replaces the generated `sus-<ms>-<n>` id).
///
/// The value converts into the suspended [`ToolResult`] (`isError: true`, `metadata.pending`
/// is the [`Request`], output as in CONTRACT section 2), so it can be returned directly, as
/// `.into()`, as an `Err(..)`, or through `?` (also inside a `Box<dyn Error>`).
///
/// Mistakes the macro can see are compile errors spanned on the offending token: an unknown
/// kind or option, a duplicate option, a missing prompt, `authorization` without `url`.
/// Mistakes only visible at run time (data that is not an object, a schema that is not flat,
/// an `input`/`question` schema with a credential field) never panic: the suspension becomes
/// a plain failure explaining the problem (see [`Suspension`]).
///
/// ```
/// use std::time::Duration;
/// use toolnexus::{Form, IntoToolResult, Suspension, suspend};
///
/// #[derive(Form, serde::Deserialize)]
/// struct Trip {
///     /// Where to.
///     city: String,
/// }
///
/// fn book(flight: &str) -> Result<String, Suspension> {
///     Err(suspend!(input format!("Where does {flight} go?"), schema = Trip, expires_in = Duration::from_secs(600)))
/// }
///
/// let r = book("AI-503").into_tool_result();
/// assert_eq!(r.output, "Input required: Where does AI-503 go?");
/// let req = r.pending().unwrap();
/// assert_eq!(
///     serde_json::to_string(&req.data).unwrap(),
///     r#"{"schema":{"type":"object","properties":{"city":{"type":"string","description":"Where to."}},"required":["city"]}}"#
/// );
///
/// let login = suspend!(authorization, url = "https://example.com/login").into_tool_result();
/// assert_eq!(login.output, "Login required: https://example.com/login");
/// ```
#[doc(inline)]
pub use toolnexus_macros::suspend;

/// Asks and continues, in one line: evaluates to the accepted answer's data, or returns the
/// suspension from the enclosing function.
///
/// ```text
/// let value: T = ask!(ctx, <kind> <prompt>? (, <option> = <value>)*);
/// ```
///
/// `ctx` is a [`Context`] or `&Context`; the rest is [`suspend!`]'s grammar. With
/// `schema = T`, the answer data is read as `T` (no annotation needed); otherwise the type
/// comes from the binding (`()` for an approval or a login without data).
///
/// - no answer in the context: `return`s the suspension;
/// - an accepted answer: its data, deserialized;
/// - a declined answer: `return`s a failure `<reason>: <prompt>` (`declined: Where to?`);
/// - accepted data of the wrong shape: `return`s a failure naming the field
///   (``invalid answer data at `nights`: invalid type: string "two", expected u8``);
/// - a request that cannot be built: `return`s the failure explaining why.
///
/// The enclosing function (or async block) may return [`ToolResult`], [`Suspension`], or
/// `Result<_, E>` where `E: From<Suspension>` (`Suspension`, `Box<dyn Error + Send + Sync>`,
/// ...); any other return type is a compile error saying so. One `ask!` per call path: the
/// retry carries one answer.
///
/// ```
/// use toolnexus::{Answer, Context, Form, ToolResult, ask};
///
/// #[derive(Form, serde::Deserialize)]
/// struct Trip { city: String, nights: u8 }
///
/// fn plan(ctx: &Context) -> ToolResult {
///     let trip = ask!(ctx, input "Where to?", schema = Trip);
///     ToolResult::success(format!("{} nights in {}", trip.nights, trip.city))
/// }
///
/// assert_eq!(plan(&Context::new()).output, "Input required: Where to?");
/// let ctx = Context::new().with_answer(Answer::accept("r1", serde_json::json!({"city": "Oslo", "nights": 2})));
/// assert_eq!(plan(&ctx).output, "2 nights in Oslo");
/// ```
#[doc(inline)]
pub use toolnexus_macros::ask;

/// Asserts that a [`ToolResult`] is a suspension, and evaluates to its `&`[`Request`].
///
/// ```text
/// assert_pending!(result);
/// assert_pending!(result, <kind> <prompt>? (, <check> = <value>)*);
/// ```
///
/// The kind and prompt are written as in [`suspend!`]; the checks are `url = ..`, `id = ..`,
/// `data = ..` (the whole `data` object, as JSON; `json!(null)` for none) and `schema = T`
/// (`data.schema` is `T`'s restricted schema). Each one given is checked; a kind is optional
/// (`assert_pending!(r, url = ..)`). Pass the result by name: the returned request borrows it.
///
/// On failure it panics with what went wrong, what was expected and the whole result as
/// pretty JSON, telling "not a suspension (a plain failure: ..)" from "a suspension of another
/// kind"; see [`testing`] for every message.
///
/// ```
/// use toolnexus::{Request, ToolResult, assert_pending};
///
/// let r = ToolResult::suspended(Request::authorization("https://x/login"));
/// let req = assert_pending!(r, authorization, url = "https://x/login");
/// assert_eq!(req.prompt, "Login required: https://x/login");
/// ```
///
/// ```should_panic
/// # use toolnexus::{ToolResult, assert_pending};
/// // assert_pending! failed: not a suspension (a plain failure: "no such flight")
/// // expected: a suspension of kind `input` with prompt "Which city?"
/// // result: { "output": "no such flight", "isError": true } (pretty-printed)
/// assert_pending!(ToolResult::error("no such flight"), input "Which city?");
/// ```
#[doc(inline)]
pub use toolnexus_macros::assert_pending;

pub use tool::{
    BoxFuture, FnTool, FnToolBuilder, IntoTool, IntoToolResult, Json, MAX_TOOL_NAME_LEN,
    SOURCE_NATIVE, SharedTool, Tool, Wrapped, deserialize_args, retried, sanitize,
    validate_tool_name, wrap,
};
pub use toolkit::{Execution, Toolkit, ToolkitBuilder};
/// Derives [`Form`](trait@Form) for a struct with named fields (an answer form), or
/// [`FormField`] for an enum of unit variants (a string choice).
///
/// Checked at compile time, each mistake spanned on its field: every field must be a flat
/// primitive (string, number, integer, boolean, string enum, or an `Option` of one); lists,
/// maps, tuples, nested structs and `#[serde(flatten)]` are refused; a field whose name
/// collects a credential (`password`, `passwd`, `secret`, `token`, `api_key`/`apikey`,
/// `private_key`, `pin`, `cvv`, `card_number`, `ssn`, in any case or separator style) is
/// refused with a message to use an `authorization` request with a `url` instead.
///
/// Doc comments become descriptions; `#[serde(rename)]`, `#[serde(rename_all)]`,
/// `#[serde(default)]` and `#[serde(skip)]` are followed, so the schema agrees with what
/// `Deserialize` accepts.
///
/// ```
/// use toolnexus::{Form, FormField};
///
/// #[derive(Form, serde::Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Seat { Aisle, Window }
///
/// #[derive(Form, serde::Deserialize)]
/// struct Booking {
///     /// Seat preference.
///     seat: Seat,
///     #[serde(rename = "bags")]
///     checked_bags: Option<u8>,
/// }
///
/// assert_eq!(
///     Booking::answer_schema().to_string(),
///     r#"{"type":"object","properties":{"seat":{"type":"string","enum":["aisle","window"],"description":"Seat preference."},"bags":{"type":"integer"}},"required":["seat"]}"#
/// );
/// ```
#[doc(inline)]
pub use toolnexus_macros::Form;

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
/// [`ToolkitBuilder::tool`]. Works on `fn` and `async fn`. The struct follows the function's
/// name, not `name = ".."`; when that name is already taken (say by `struct Search`, the
/// arguments of `fn search`), rename one of the two.
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
/// - `#[arg(default = expr)]`: not required; `expr` when absent or `null` (shown as the schema's
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
///   `#[error("suspended")] Suspended(#[from] Suspension)`; not `#[error(transparent)]`,
///   which hands `source()` on past the suspension). So a function returning
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
///     /// Count more hits and return the total.
///     #[tool]
///     fn hit(
///         &self,
///         /// How many hits to add.
///         by: u32,
///     ) -> u32 {
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

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use providers::{
    ANTHROPIC_VERSION, ApiKey, DEFAULT_BACKOFF_BASE, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_MAX_TOKENS, HttpProvider, HttpProviderBuilder, ProviderStyle,
};
#[cfg(feature = "http")]
#[doc(hidden)]
pub use providers::{parse_event_stream_chunks, parse_reply_body};

/// Cancellation tokens, as [`Context::cancellation`] hands them out.
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Not public API: what code generated by `toolnexus-macros` reaches the runtime through.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::macro_support::suspend::*;
    pub use crate::macro_support::tool::*;
}
