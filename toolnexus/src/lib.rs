//! # toolnexus
//!
//! Turn plain Rust functions into LLM tools, let any tool **suspend** to ask a human (input,
//! approval, login, a question), and run those tools in an agent loop that waits for the
//! answer in-process or halts durably and resumes later.
//!
//! ```
//! use toolnexus::{Context, Form, Suspension, Toolkit, ask, assert_pending, assert_success, json, tool};
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
//! - [`client`]: the agent loop ([`Client`]): runs, streams and resumes;
//! - [`run`]: the durable record of a run ([`RunResult`], [`PendingRun`]), its checks, seal
//!   and checkpoints;
//! - [`store`]: run stores ([`RunStore`](store::RunStore)) that keep parked runs and hand
//!   each answer to exactly one worker (memory; SQLite and PostgreSQL behind features);
//! - [`notify`]: telling people a run waits: the outbox's deliverer, webhook (feature
//!   `notify-webhook`) and email (feature `notify-email`) notifiers;
//! - [`providers`]: HTTP providers ([`HttpProvider`], feature `http`);
//! - [`adapters`]: tool specs in each provider's wire format, and schema lowerings;
//! - [`testing`]: helpers and assertion macros for testing tools;
//! - `mcp`: serve a toolkit over MCP and use MCP servers' tools (feature `mcp`);
//! - [`contract`]: the wire contract shared with the other toolnexus ports, which the docs cite
//!   as "contract section N".
//!
//! # Durable runs: guarantees
//!
//! A run that halts on a suspension becomes a [`PendingRun`]: a JSON record a host persists
//! anywhere and resumes later, in any process ([`Client::resume`]).
//!
//! - **Bound to what the human saw.** An answer resumes a run only if it echoes the pending
//!   request's id (unique across processes and machines: `sus-<ms>-<counter>-<64 random
//!   bits>`) and arrives before its `expiresAt` (millisecond precision; a late answer reads as
//!   `declined/expired: <prompt>` and runs nothing), and only while the record's halted call
//!   still matches the fingerprint (SHA-256 of the tool name, the canonical arguments, the run
//!   id and the request id) taken when the request was made. A record that disagrees with itself is refused on load, naming
//!   the field and both values; a [sealed](PendingRun::seal) record (HMAC-SHA-256, with a key
//!   id so keys rotate) is refused after any edit at all. Seal every record that leaves the
//!   process.
//! - **Exactly once per record.** A resume consumes the record (`resume` takes it by value)
//!   and runs the halted tool at most once more; the other calls of the halted turn never run
//!   again (finished results are kept, a later suspension keeps its request and waits for its
//!   own answer). A record is data, though: a *copy* resumes again. Keeping it single-use is
//!   the host's part: delete or mark it atomically, keyed by its run id and request id, before
//!   resuming (see [`PendingRun`]).
//! - **Checkpoints: a recorded result never runs again.** Every time a tool result enters a
//!   run's state, the run is resumable from there. An error after a tool ran in that call (the
//!   next model call failing, the run's timeout or cancellation) is [`Error::Interrupted`]
//!   carrying the checkpoint ([`Error::halted_run`], a [`RunResult`] with status
//!   `incomplete`, plain JSON); [`Client::resume_checkpoint`] goes on with the next model call
//!   and runs none of the recorded tools again. A failing `wait_for` is [`Error::WaitFor`],
//!   carrying the run halted on its request (resume it with the answer). The checkpoint holds
//!   every turn whose calls all have their result; a turn cut short mid-way (a timeout while a
//!   call runs) is left out with its results, so the transcript stays balanced.
//! - **At least once across a crash.** The tool's side effect and the persisted checkpoint (or
//!   the next record) are two writes to two systems, and nothing makes them atomic. The crash
//!   window is *after the side effect, before the host has persisted the state that records
//!   it*: if the process dies there, the only durable state is the previous checkpoint or
//!   record, and resuming it runs the tool again, if the tool is idempotent (a run resumed
//!   from a store saves a started marker before a tool that is not idempotent runs, and the
//!   worker that takes it over asks a person instead: [`reconcile`]). Within a process nothing
//!   runs twice (the
//!   error carries the checkpoint). A tool with side effects dedupes on
//!   [`Context::idempotency_key`] (`Some` for every call the loop runs, `None` for a direct
//!   [`Toolkit::execute`] without one): SHA-256 of the run id, turn and tool-call id, the same on
//!   every execution of one call (the first, the retry after an answer, a re-run after a
//!   crash, in any process) and different for every other call; it stores the key atomically
//!   with the effect and returns the recorded outcome when the key is already there. With
//!   that, each side effect happens exactly once.
//! - **What the loop accepts reads back.** Tool arguments are accepted up to
//!   [`MAX_DEPTH`](limits::MAX_DEPTH) (128) levels deep, and records holding them
//!   read back at that depth. Records are versioned ([`run::PENDING_RUN_VERSION`] 2); a
//!   version-1 record (it carries no fingerprint) is refused, saying so.

#![doc = include_str!("../docs/guide.md")]
//!
// The guide's links to the `http` feature's items: to this build's items where the feature is
// on, to docs.rs (built with every feature) where it is off, so the docs build clean either way.
#![cfg_attr(
    feature = "http",
    doc = "[retry_statuses]: providers::HttpProviderBuilder::retry_statuses"
)]
#![cfg_attr(
    not(feature = "http"),
    doc = "[`HttpProvider`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProvider.html\n\
           [`providers`]: https://docs.rs/toolnexus/latest/toolnexus/providers/index.html\n\
           [`providers::HttpProviderBuilder`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProviderBuilder.html\n\
           [retry_statuses]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProviderBuilder.html#method.retry_statuses"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adapters;
pub mod boundary;
pub mod client;
mod context;
mod error;
pub mod form;
mod id;
#[cfg(feature = "inbox")]
#[cfg_attr(docsrs, doc(cfg(feature = "inbox")))]
pub mod inbox;
mod json_text;
mod ledger;
pub mod limits;
mod lower;
mod macro_support;
mod macros;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
mod message;
pub mod model;
pub mod notify;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod providers;
pub mod question;
pub mod reconcile;
pub mod remember;
pub mod request;
pub mod result;
pub mod run;
pub mod schema;
pub mod store;
pub mod suspend;
pub mod testing;
pub mod tool;
pub mod toolkit;
mod util;
pub mod worker;

#[doc = include_str!("../docs/contract.md")]
pub mod contract {}

// the types a root type's methods take or give are at the root too: `Metric` and `BeforeTool`
// (`Client::builder`'s `on_metric` and `before_tool`), `SealKey` and `SealKeys`
// (`PendingRun::seal` and `open`), `DeclineReason` (`Request::decline`)
pub use client::{BeforeTool, Client, Event, FnModel, Metric, Reply, ScriptedModel};
pub use context::{Context, LogLevel, Notice};
pub use error::{Error, Result};
pub use form::Form;
pub use model::{Message, Model, ModelRequest, Role, Usage};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use providers::{ApiKey, HttpProvider};
pub use remember::Remember;
pub use request::{Answer, DeclineReason, Request};
pub use result::{ContentPart, IntoToolResult, Json, ToolResult, pending_of};
pub use run::{PendingRun, RunResult, RunStatus, SealKey, SealKeys};
pub use suspend::Suspension;
pub use tool::{BoxFuture, FnTool, SharedTool, Tool};
pub use toolkit::Toolkit;

#[doc = include_str!("../docs/suspend.md")]
#[doc(inline)]
pub use crate::__suspend as suspend;

#[doc = include_str!("../docs/ask.md")]
#[doc(inline)]
pub use crate::__ask as ask;

#[doc = include_str!("../docs/assert_pending.md")]
#[doc(inline)]
pub use crate::__assert_pending as assert_pending;

#[doc = include_str!("../docs/form.md")]
#[doc(inline)]
pub use toolnexus_macros::Form;

#[doc = include_str!("../docs/args.md")]
pub use toolnexus_macros::Args;

#[doc = include_str!("../docs/tool.md")]
pub use toolnexus_macros::tool;

#[doc = include_str!("../docs/toolset.md")]
pub use toolnexus_macros::toolset;

/// JSON values and the `json!` macro, re-exported so tools and their calls need no direct
/// `serde_json` dependency.
#[doc(no_inline)]
pub use serde_json::{Value, json};

/// Cancellation tokens, as [`Context::cancellation`] hands them out.
#[doc(no_inline)]
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled and run as doctests so they stay true. Some need `http` and
/// `notify-webhook` (the workspace's tests turn them on; `ci/check-user-crate.sh` also builds
/// every one of them with every feature), so `cargo test -p toolnexus` without them skips
/// them. The email notifier's example runs as `EmailNotifier`'s doctest (feature
/// `notify-email`, off in the workspace's test command: `.ci/run` runs it).
#[cfg(all(doctest, feature = "http", feature = "notify-webhook"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Not public API: what code generated by `toolnexus-macros` reaches the runtime through, and
/// the entry points the fuzz targets drive.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::macro_support::approval::*;
    pub use crate::macro_support::args::*;
    pub use crate::macro_support::returns::*;
    pub use crate::macro_support::suspend::*;
    pub use crate::macro_support::tool::*;
    pub use crate::testing::{
        PendingExpectation, assert_failure, assert_not_pending, assert_pending, assert_success,
    };
    pub use crate::tool::ToolAnnotations;

    #[cfg(feature = "http")]
    pub use crate::providers::{parse_event_stream_chunks, parse_reply_body};

    /// The crate's JSON reader (`json_text::parse`), for the differential fuzz target: the
    /// value of `text` nested at most `max_depth` levels, or where and why it did not read.
    ///
    /// # Errors
    ///
    /// The text is not one JSON value, or nests deeper than `max_depth`.
    pub fn json_text_parse(
        text: &str,
        max_depth: usize,
    ) -> Result<serde_json::Value, (usize, &'static str)> {
        crate::json_text::parse(text, max_depth).map_err(|e| (e.at, e.what))
    }

    /// [`json_text_parse`], and for a root object each member's key and the byte range of its
    /// value in `text`, in order.
    ///
    /// # Errors
    ///
    /// As [`json_text_parse`].
    #[allow(clippy::type_complexity, reason = "a fuzzing entry point, spelled out")]
    pub fn json_text_parse_with_spans(
        text: &str,
        max_depth: usize,
    ) -> Result<(serde_json::Value, Vec<(String, std::ops::Range<usize>)>), (usize, &'static str)>
    {
        crate::json_text::parse_with_spans(text, max_depth).map_err(|e| (e.at, e.what))
    }
}
