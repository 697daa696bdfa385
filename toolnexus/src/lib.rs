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

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adapters;
mod client;
mod context;
mod error;
mod form;
mod lower;
mod macro_support;
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
pub use toolkit::{Toolkit, ToolkitBuilder};
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

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use providers::{
    ANTHROPIC_VERSION, ApiKey, DEFAULT_BACKOFF_BASE, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_MAX_TOKENS, HttpProvider, HttpProviderBuilder, ProviderStyle,
};

/// Cancellation tokens, as [`Context::cancellation`] hands them out.
pub use tokio_util::sync::CancellationToken;

/// Not public API: what code generated by `toolnexus-macros` reaches the runtime through.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::macro_support::suspend::*;
    // empty until `#[tool]` support lands (another branch); then these allows are moot
    #[allow(unused_imports, unreachable_pub)]
    pub use crate::macro_support::tool::*;
}
