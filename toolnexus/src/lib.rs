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
//!
//! # The map of the crate
//!
//! The headline types are at the root; everything else lives in the module of its concept:
//!
//! - [`tool`](mod@tool): the [`Tool`] trait, tool names, argument decoding, [`FnTool`], the
//!   decorators [`wrap`](tool::wrap) and [`retried`](tool::retried);
//! - [`toolkit`]: the [`Toolkit`] a model's calls are dispatched through;
//! - [`result`]: [`ToolResult`] and the return mapping ([`IntoToolResult`], [`Json`]);
//! - [`request`]: the [`Request`] a suspension parks and the human's [`Answer`];
//! - [`suspend`](mod@suspend): the [`Suspension`] a tool returns to ask (see [`suspend!`]);
//! - [`form`]: answer forms ([`Form`](trait@Form)) and the trust boundary;
//! - [`question`]: the built-in `question` tool;
//! - [`schema`]: input schemas from `schemars` types, and their checks;
//! - [`model`]: the [`Model`] trait and the messages it exchanges;
//! - [`client`]: the agent loop ([`Client`]), its runs and durable resume;
//! - [`providers`]: HTTP providers ([`HttpProvider`], feature `http`);
//! - [`adapters`]: tool specs in each provider's wire format, and schema lowerings;
//! - `mcp`: serve a toolkit over MCP and use MCP servers' tools (feature `mcp`);
//! - [`testing`]: helpers and assertion macros for testing tools.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adapters;
pub mod client;
mod context;
mod error;
pub mod form;
mod lower;
mod macro_support;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod model;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod providers;
pub mod question;
pub mod request;
pub mod result;
pub mod schema;
pub mod suspend;
pub mod testing;
pub mod tool;
pub mod toolkit;

pub use client::{Client, Event, FnModel, PendingRun, Reply, RunResult, RunStatus, ScriptedModel};
pub use context::Context;
pub use error::{Error, Result};
pub use form::Form;
// `#[derive(Form)]` on an enum still expands to `::toolnexus::FormField`: hidden, not part of
// the map, until the derive names `__private::FormField` (then this line goes).
#[doc(hidden)]
pub use form::FormField;
pub use model::{Message, Model, ModelRequest, Role, Usage};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use providers::{ApiKey, HttpProvider};
pub use request::{Answer, Request};
pub use result::{IntoToolResult, Json, ToolResult, pending_of};
pub use suspend::Suspension;
pub use tool::{BoxFuture, FnTool, SharedTool, Tool};
pub use toolkit::Toolkit;

#[doc = include_str!("../docs/suspend.md")]
#[doc(inline)]
pub use toolnexus_macros::suspend;

#[doc = include_str!("../docs/ask.md")]
#[doc(inline)]
pub use toolnexus_macros::ask;

#[doc = include_str!("../docs/assert_pending.md")]
#[doc(inline)]
pub use toolnexus_macros::assert_pending;

#[doc = include_str!("../docs/form.md")]
#[doc(inline)]
pub use toolnexus_macros::Form;

#[doc = include_str!("../docs/tool.md")]
pub use toolnexus_macros::tool;

#[doc = include_str!("../docs/toolset.md")]
pub use toolnexus_macros::toolset;

/// Cancellation tokens, as [`Context::cancellation`] hands them out.
#[doc(no_inline)]
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Not public API: what code generated by `toolnexus-macros` reaches the runtime through, and
/// the entry points the fuzz targets drive.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::form::{Form, FormField};
    pub use crate::macro_support::returns::*;
    pub use crate::macro_support::suspend::*;
    pub use crate::macro_support::tool::*;

    #[cfg(feature = "http")]
    pub use crate::providers::{parse_event_stream_chunks, parse_reply_body};
}
