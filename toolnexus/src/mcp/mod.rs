//! MCP (the Model Context Protocol), on [`rmcp`], the official Rust SDK: serve a
//! [`Toolkit`](crate::Toolkit) to MCP hosts, and use MCP servers' tools in a toolkit, with
//! suspensions carried as MCP **elicitations** (CONTRACT section 8). Feature `mcp`.
//!
//! # Serving
//!
//! [`McpService`] serves a toolkit over stdio ([`McpService::serve_stdio`]), streamable HTTP
//! ([`McpService::serve_http`]) or any rmcp transport ([`McpService::serve`]). A tool that
//! suspends asks the host's human in the host's own UI:
//!
//! | suspension | elicitation |
//! |---|---|
//! | `input` | form, `requestedSchema` = `data.schema` (one string field `output` when absent) |
//! | `approval` | form with no fields (accept = approve) |
//! | `question` | form, one field per question (string enum for options) |
//! | `authorization` | URL mode with the request's `url` (elicitation id = request id) |
//! | other kinds | form from `data.schema`, else a form with no fields (accept or decline) |
//!
//! Accept becomes `Answer{ok:true, data: content}`, decline `{ok:false, reason:"declined"}`,
//! cancel `{ok:false, reason:"cancelled"}`; the tool then runs once more with the answer, as
//! the agent loop would. Every elicitation carries the [`Request`](crate::Request) under
//! `_meta["toolnexus/pending"]` ([`PENDING_META_KEY`]), so a host on another toolnexus port
//! keeps its kind, id and `expiresAt`. A client that cannot be asked gets the suspension's
//! output as an error result with the request under the same key. rmcp builds its messages
//! from `serde_json` values, so a Request (or an answer's content) inside an MCP message has
//! its members in the order of serde_json's maps in your build (sorted, unless a crate turns
//! on serde_json's `preserve_order`), not the contract's; a reader on any port reads it by key.
//!
//! A result's parts are MCP content items (text, image, audio, embedded resource, resource
//! link), bytes intact, both ways. What a tool says while it runs
//! ([`Context::log`](crate::Context::log), [`Context::progress`](crate::Context::progress)) goes
//! to the client as `notifications/message` (honouring `logging/setLevel`) and
//! `notifications/progress` (on the call's progress token), before the call's result. A tool
//! cannot ask the client's model (sampling is not offered: the model belongs to the host).
//!
//! A person's time never times out a call: while an elicitation waits, the server sends
//! progress notifications on the call's progress token
//! ([`with_progress_interval`](McpService::with_progress_interval)), so a client that resets
//! its request timeout on progress keeps waiting; only
//! [`with_timeout`](McpService::with_timeout) bounds the wait.
//! No elicitation leaves that the trust boundary
//! ([`check_request`](crate::boundary::check_request)) refuses, whatever the request's kind:
//! the call's result is that refusal, as an error.
//!
//! # Durable serving
//!
//! Given a run store ([`McpService::with_store`]), a call that suspends is a parked run that
//! outlives the serving process: on a `2026-07-28` session the `input_required` result's
//! `requestState` names the run (sealed, bound to the client's principal, the call and an
//! expiry), and the client's retry with the answer claims it once and resumes it in whichever
//! process serves the same store with the same
//! [`requestState` key](McpService::with_request_state_key).
//!
//! # Consuming
//!
//! [`McpServer::stdio`] / [`McpServer::http`] connect a server; its tools (source `"mcp"`) go
//! into a toolkit like any other. [`McpConfig`] reads an `mcp.json` (`mcpServers`). A consumed
//! server's elicitation becomes a [`Request`](crate::Request) for the host's
//! [`on_elicitation`](McpServerBuilder::on_elicitation) handler; see there why a durable halt
//! cannot answer a live MCP call. Each passes the trust boundary first: one that asks for a
//! credential never reaches the handler, and is declined to the server with the reason under
//! `_meta["toolnexus/refused"]` ([`REFUSED_META_KEY`]).

mod annotations;
mod config;
mod consume;
mod content;
pub(crate) mod elicit;
mod serve;

pub use config::{McpConfig, McpServers, ServerEntry};
pub use consume::{ElicitationHandler, McpServer, McpServerBuilder, ROUND_KEY, SOURCE_MCP};
pub use elicit::{
    ELICITATION_ID_KEY, FREE_TEXT_FIELD, PENDING_META_KEY, REFUSED_META_KEY, SERVER_KEY,
};
pub use serve::{
    DEFAULT_ELICITATION_TIMEOUT, DEFAULT_PARK_TTL, DEFAULT_PROGRESS_INTERVAL, HttpServer,
    INPUT_REQUEST_KEY, McpService,
};

/// The mapping between suspensions and MCP elicitations, both directions, opened for fuzzing
/// and tests (feature `test-support`): the functions serving and consuming go through. Not
/// for production use.
#[cfg(feature = "test-support")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
pub mod mapping {
    use rmcp::model::{ElicitRequestParams, ElicitResult};
    use serde_json::{Map, Value};

    use crate::boundary::BoundaryError;
    use crate::request::{Answer, Request};

    /// Serving: the elicitation a suspension's request becomes once it passed the trust
    /// boundary (`Ok(None)`: it has no MCP form, the text fallback applies), or the boundary's
    /// refusal. `true` with a URL-mode elicitation.
    ///
    /// # Errors
    ///
    /// The trust boundary's refusal: the request asks for a credential.
    pub fn serve(request: &Request) -> Result<Option<(bool, ElicitRequestParams)>, BoundaryError> {
        super::elicit::checked_elicitation_for(request)
            .map(|e| e.map(|(mode, params)| (mode == super::elicit::Mode::Url, params)))
    }

    /// Consuming: what a server's elicitation (with its request's `_meta`) becomes for the
    /// host: `Some(Ok)`: the request its handler is asked, having passed the trust boundary;
    /// `Some(Err)`: refused (declined to the server, never shown); `None`: a mode this crate
    /// does not know.
    pub fn consume(
        server: &str,
        params: &ElicitRequestParams,
        meta: Option<&Map<String, Value>>,
    ) -> Option<Result<Request, BoundaryError>> {
        match super::elicit::incoming(server, params, meta) {
            super::elicit::Incoming::Ask(request) => Some(Ok(request)),
            super::elicit::Incoming::Refused(e) => Some(Err(e)),
            super::elicit::Incoming::Unknown => None,
        }
    }

    /// The decline a server gets for a refused elicitation.
    pub fn refused(why: &BoundaryError) -> ElicitResult {
        super::elicit::refused_result(why)
    }

    /// Serving: the answer a client's elicitation result gives the suspended tool.
    pub fn answer_from_result(request: &Request, result: &ElicitResult) -> Answer {
        super::elicit::answer_from_result(request, result)
    }

    /// Consuming: the elicitation result the host's answer gives back to the server.
    pub fn result_from_answer(request: &Request, answer: &Answer) -> ElicitResult {
        super::elicit::result_from_answer(request, answer)
    }
}

/// The rmcp crate this module is built on, to name its transports and types.
pub use rmcp;

/// What can go wrong setting MCP up (never a tool's failure: that is a
/// [`ToolResult`](crate::ToolResult)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A server could not be started or reached, or did not complete `initialize`.
    #[error("MCP server \"{server}\": {message}")]
    Connect {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// A configuration (`mcp.json`, a key, a header) is invalid.
    #[error("invalid MCP configuration: {0}")]
    Config(String),
    /// Serving failed (binding an address, the client's `initialize`, the transport).
    #[error("MCP serving failed: {0}")]
    Serve(String),
}
