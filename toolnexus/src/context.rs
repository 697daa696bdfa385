//! [`Context`]: what a tool call knows besides its arguments.

use std::time::Duration;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::request::{Answer, AnswerDataError};

/// What a tool call carries besides its arguments: the [`Answer`] on the retry after a
/// suspension, a cancellation signal, and an optional timeout.
///
/// Cheap to clone (the cancellation token is shared).
///
/// ```
/// use toolnexus::{Answer, Context};
///
/// let ctx = Context::new().with_answer(Answer::accept("r1", "Oslo"));
/// assert_eq!(ctx.answer().unwrap().id, "r1");
/// assert_eq!(ctx.answer_data::<String>().unwrap(), Some("Oslo".to_owned()));
/// assert!(!ctx.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Context {
    answer: Option<Answer>,
    cancel: CancellationToken,
    timeout: Option<Duration>,
    call_id: Option<String>,
}

impl Context {
    /// An empty context: no answer, not cancelled, no timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context carrying `answer` (what the retry after a suspension sees).
    #[must_use]
    pub fn with_answer(mut self, answer: Answer) -> Self {
        self.answer = Some(answer);
        self
    }

    /// The same context with its answer removed.
    #[must_use]
    pub fn without_answer(mut self) -> Self {
        self.answer = None;
        self
    }

    /// The same context observing `token` for cancellation.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The same context with a timeout for the tool call.
    /// [`Toolkit::execute`](crate::Toolkit::execute) enforces it.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The same context tagged with the model's tool-call id.
    #[must_use]
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// The answer, present only on the retry after a suspension was answered.
    pub fn answer(&self) -> Option<&Answer> {
        self.answer.as_ref()
    }

    /// The answer, if it was accepted (`ok: true`).
    pub fn accepted(&self) -> Option<&Answer> {
        self.answer.as_ref().filter(|a| a.ok)
    }

    /// The accepted answer's data as `T`; `Ok(None)` when there is no accepted answer.
    ///
    /// # Errors
    ///
    /// [`AnswerDataError`] names the field that failed and why.
    pub fn answer_data<T: DeserializeOwned>(&self) -> Result<Option<T>, AnswerDataError> {
        self.accepted().map(Answer::data_as).transpose()
    }

    /// The cancellation token of this call (cancelled when the run is cancelled).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The timeout for the call, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The model's id for this tool call, when run by the agent loop.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }
}
