//! [`Error`]: the host's problems. A tool's own failure or suspension is never an `Error`; it is
//! a [`ToolResult`](crate::ToolResult) handed back to the model.

/// The error type of toolnexus: misconfiguration, transport, a broken `wait_for`, a
/// mismatched answer. Messages are lowercase and say what to change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool name outside `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidToolName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Two tools of one toolkit share a name.
    #[error("duplicate tool name `{name}`: every tool of a toolkit needs its own name")]
    DuplicateTool {
        /// The name registered twice.
        name: String,
    },
    /// A tool's input schema is not a JSON Schema object with root `"type":"object"`.
    #[error("invalid input schema for tool `{tool}`: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// A tool's schema cannot be lowered to what a provider accepts.
    #[error("tool `{tool}` cannot be sent to {target}: {construct} at {}", location(.pointer))]
    SchemaLowering {
        /// The tool.
        tool: String,
        /// The provider dialect (`openai strict`, `gemini`).
        target: &'static str,
        /// The construct that cannot survive the lowering.
        construct: String,
        /// Where it is: a JSON pointer into the tool's schema (RFC 6901; empty for the root).
        pointer: String,
    },
    /// A builder was finished without a required part, or a client is misconfigured.
    #[error("{0}")]
    Config(String),
    /// An answer that does not echo the pending request's id; nothing was changed.
    #[error(
        "answer id `{got}` does not match the pending request `{expected}`; nothing was changed"
    )]
    AnswerMismatch {
        /// The pending request's id.
        expected: String,
        /// The answer's id.
        got: String,
    },
    /// A resume was asked of a run that is not pending.
    #[error("the run is not pending (status `{status}`): there is nothing to resume")]
    NotPending {
        /// The run's status.
        status: String,
    },
    /// The host's `wait_for` failed or panicked, or the run's timeout or cancellation
    /// interrupted it; the request is still pending.
    #[error("wait_for failed for request `{request_id}`: {message}")]
    WaitFor {
        /// The request that was being waited for.
        request_id: String,
        /// What went wrong.
        message: String,
        /// The run, halted on that request (status pending): persist it or resume it with an
        /// answer. See [`Error::halted_run`].
        run: Box<crate::client::RunResult>,
    },
    /// A persisted run could not be read.
    #[error("invalid persisted run: {0}")]
    Persist(String),
    /// An in-process model failed (final, never retried).
    #[error("model failed: {0}")]
    Model(String),
    /// A provider answered with an error status.
    #[error("provider returned HTTP {status}: {message}")]
    Provider {
        /// The HTTP status.
        status: u16,
        /// The provider's own error message.
        message: String,
    },
    /// The provider could not be reached, or its reply could not be read.
    #[error("transport error: {0}")]
    Transport(String),
    /// The run's timeout elapsed.
    #[error("the run timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The run was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// Streaming was asked of a model that cannot stream.
    #[error("{0} does not support streaming")]
    StreamingUnsupported(String),
}

/// `Result<T, toolnexus::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A JSON pointer as an error message says it: `the root` for the empty pointer.
fn location(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}
