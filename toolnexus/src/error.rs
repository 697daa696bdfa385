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
        /// The record that was to be resumed, unchanged (see [`Error::into_pending_run`]).
        run: Box<crate::run::PendingRun>,
    },
    /// A resume was asked of a run that is not pending.
    #[error("the run is not pending (status `{status}`): there is nothing to resume")]
    NotPending {
        /// The run's status.
        status: crate::run::RunStatus,
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
        run: Box<crate::run::RunResult>,
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
    /// The provider could not be reached, or its reply could not be read. The message says
    /// what failed; the underlying error (the HTTP client's, a JSON or event-stream decoding
    /// error), when there is one, is the [`source`](std::error::Error::source), not repeated
    /// in the message.
    #[error("transport error: {message}")]
    Transport {
        /// What failed.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// An [`HttpProvider`]'s own per-request timeout elapsed (retries and streaming included);
    /// not retried.
    ///
    #[cfg_attr(
        feature = "http",
        doc = "[`HttpProvider`]: crate::providers::HttpProvider"
    )]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[`HttpProvider`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProvider.html"
    )]
    #[error("the provider did not answer within {0:?} (the provider's own request timeout)")]
    ProviderTimeout(std::time::Duration),
    /// An [`HttpProvider`] waited longer than one of its stall limits
    /// ([`connect_timeout`][connect_timeout],
    /// [`first_byte_timeout`][first_byte_timeout],
    /// [`idle_timeout`][idle_timeout]) for the provider.
    ///
    #[cfg_attr(
        feature = "http",
        doc = "[`HttpProvider`]: crate::providers::HttpProvider"
    )]
    #[cfg_attr(
        feature = "http",
        doc = "[connect_timeout]: crate::providers::HttpProviderBuilder::connect_timeout"
    )]
    #[cfg_attr(
        feature = "http",
        doc = "[first_byte_timeout]: crate::providers::HttpProviderBuilder::first_byte_timeout"
    )]
    #[cfg_attr(
        feature = "http",
        doc = "[idle_timeout]: crate::providers::HttpProviderBuilder::idle_timeout"
    )]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[`HttpProvider`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProvider.html"
    )]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[connect_timeout]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProviderBuilder.html#method.connect_timeout"
    )]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[first_byte_timeout]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProviderBuilder.html#method.first_byte_timeout"
    )]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[idle_timeout]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProviderBuilder.html#method.idle_timeout"
    )]
    #[error("the provider sent nothing for {limit:?} while the client waited for {waiting_for}")]
    ProviderIdle {
        /// What was awaited: `the connection`, `the response head`, `the reply body`, `the
        /// next stream event`.
        waiting_for: &'static str,
        /// The limit that elapsed.
        limit: std::time::Duration,
    },
    /// The run stopped on `error` after its state had moved on, and `run` is its checkpoint
    /// (status `incomplete`), resumable with
    /// [`Client::resume_checkpoint`](crate::Client::resume_checkpoint) (which runs
    /// none of its recorded tools again) or continued with
    /// [`Client::run_with_history`](crate::Client::run_with_history). Two cases:
    ///
    /// - a streamed model reply failed after part of it had reached the caller (text deltas
    ///   were already shown), so it was not retried; `run` is the run before that turn;
    /// - any error (the next model call failing, the run's timeout or cancellation) after a
    ///   tool result entered the run's state in this call; `run` holds every result of the
    ///   turns whose calls all have their result (a turn cut short is left out with its
    ///   results, keeping the transcript balanced).
    ///
    /// See [`Error::halted_run`].
    #[error("the run was interrupted: {error}")]
    Interrupted {
        /// The provider's error.
        #[source]
        error: Box<Error>,
        /// The run before the broken turn.
        run: Box<crate::run::RunResult>,
    },
    /// The run's timeout elapsed.
    #[error("the run timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The run, or the provider's request, was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// A run store refused or failed (see [`StoreError`](crate::store::StoreError)).
    #[error("{0}")]
    Store(crate::store::StoreError),
    /// Streaming was asked of a model that cannot stream.
    #[error("{0} does not support streaming")]
    StreamingUnsupported(String),
}

impl Error {
    /// Whether a timeout ended the work: the run's ([`Error::Timeout`]) or the provider's own
    /// ([`Error::ProviderTimeout`], [`Error::ProviderIdle`]).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// assert!(toolnexus::Error::Timeout(Duration::from_secs(1)).is_timeout());
    /// assert!(toolnexus::Error::ProviderTimeout(Duration::from_secs(1)).is_timeout());
    /// assert!(!toolnexus::Error::Cancelled.is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            Self::Timeout(_) | Self::ProviderTimeout(_) | Self::ProviderIdle { .. }
        )
    }

    /// Whether a cancellation ended the work ([`Error::Cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled)
    }

    /// Whether the provider could not be reached or its reply not read ([`Error::Transport`]).
    pub fn is_transport(&self) -> bool {
        matches!(self, Self::Transport { .. })
    }

    /// The HTTP status of an [`Error::Provider`].
    pub fn provider_status(&self) -> Option<u16> {
        match self {
            Self::Provider { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The run a failed `wait_for` left pending ([`Error::WaitFor`]): persist it as a
    /// [`PendingRun`](crate::run::PendingRun) or answer its `pending` request and
    /// [`Client::resume`](crate::Client::resume) it. For [`Error::Interrupted`],
    /// the run's checkpoint: persist it (it is JSON) and go on with
    /// [`Client::resume_checkpoint`](crate::Client::resume_checkpoint).
    pub fn halted_run(&self) -> Option<&crate::run::RunResult> {
        match self {
            Self::WaitFor { run, .. } | Self::Interrupted { run, .. } => Some(run),
            _ => None,
        }
    }

    /// Takes the halted run out of an [`Error::WaitFor`] or an [`Error::Interrupted`].
    pub fn into_halted_run(self) -> Option<crate::run::RunResult> {
        match self {
            Self::WaitFor { run, .. } | Self::Interrupted { run, .. } => Some(*run),
            _ => None,
        }
    }

    /// Takes back the record a [`Client::resume`](crate::Client::resume) refused
    /// without running anything ([`Error::AnswerMismatch`]): still valid, it may be resumed
    /// with the right answer.
    pub fn into_pending_run(self) -> Option<crate::run::PendingRun> {
        match self {
            Self::AnswerMismatch { run, .. } => Some(*run),
            _ => None,
        }
    }
}

impl From<crate::store::StoreError> for Error {
    fn from(e: crate::store::StoreError) -> Self {
        Self::Store(e)
    }
}

/// A durable record's error, folded in with its message unchanged: `Invalid` becomes
/// [`Error::Persist`], `NotPending` [`Error::NotPending`], `Key` [`Error::Config`].
impl From<crate::run::RecordError> for Error {
    fn from(e: crate::run::RecordError) -> Self {
        use crate::run::RecordError;
        match e {
            RecordError::Invalid(message) => Self::Persist(message),
            RecordError::NotPending { status } => Self::NotPending { status },
            RecordError::Key(message) => Self::Config(message),
        }
    }
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Error;
    use crate::run::RunStatus;

    #[test]
    fn the_provider_timeout_and_the_run_timeout_are_two_errors_worded_apart() {
        let provider = Error::ProviderTimeout(Duration::from_millis(1500));
        assert_eq!(
            provider.to_string(),
            "the provider did not answer within 1.5s (the provider's own request timeout)"
        );
        let run = Error::Timeout(Duration::from_secs(30));
        assert_eq!(run.to_string(), "the run timed out after 30s");
        assert!(provider.is_timeout() && run.is_timeout());
        assert!(!provider.is_cancelled() && !provider.is_transport());
        assert!(Error::Cancelled.is_cancelled() && !Error::Cancelled.is_timeout());
    }

    #[test]
    fn not_pending_carries_the_status() {
        let err = Error::NotPending {
            status: RunStatus::Done,
        };
        assert!(matches!(
            err,
            Error::NotPending {
                status: RunStatus::Done
            }
        ));
        assert_eq!(
            err.to_string(),
            "the run is not pending (status `done`): there is nothing to resume"
        );
    }
}
