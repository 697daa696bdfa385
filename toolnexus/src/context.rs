//! [`Context`]: what a tool call knows besides its arguments.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::request::{Answer, AnswerDataError, Request};

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
    /// The request the answer answers, as the host kept it (shared: clones are cheap).
    request: Option<Arc<Request>>,
    /// The token, made on first use when none was given (shared by the clones either way): a
    /// context nobody can cancel answers `is_cancelled` without locking a token.
    cancel: Arc<OnceLock<CancellationToken>>,
    timeout: Option<Duration>,
    call_id: Option<String>,
    idempotency_key: Option<String>,
    /// Who hears what the tool says while it runs ([`Context::log`], [`Context::progress`]).
    notifier: Option<Notifier>,
}

/// How severe a message a tool logs is ([`Context::log`]): MCP's levels (those of syslog),
/// least severe first. JSON: the lowercase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// What happens, as it happens.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Action must be taken now.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// What a tool says while it runs: a log message ([`Context::log`]) or its progress
/// ([`Context::progress`]), as a [`Context::with_notifier`] function hears it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// A log message.
    Log {
        /// How severe it is.
        level: LogLevel,
        /// What it says.
        message: String,
    },
    /// How far the call has got.
    Progress {
        /// The work done so far (grows with each notice).
        progress: f64,
        /// The work in all, when known.
        total: Option<f64>,
        /// What is being done.
        message: Option<String>,
    },
}

/// The function that hears a tool's [`Notice`]s.
#[derive(Clone)]
struct Notifier(Arc<dyn Fn(Notice) + Send + Sync>);

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
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

    /// The same context with its answer (and the request it answers) removed.
    #[must_use]
    pub fn without_answer(mut self) -> Self {
        self.answer = None;
        self.request = None;
        self
    }

    /// The same context carrying `request`, the suspension the answer answers: the agent
    /// loop (with `wait_for` and on resume) and the MCP server set it on the retry, so a tool
    /// that keeps state in its request's `data` (an MCP server's `requestState`, for one)
    /// finds it again.
    ///
    /// ```
    /// use toolnexus::{Answer, Context, Request};
    ///
    /// let asked = Request::input("Which city?").with_id("r1");
    /// let ctx = Context::new()
    ///     .with_request(asked.clone())
    ///     .with_answer(Answer::accept("r1", "Oslo"));
    /// assert_eq!(ctx.request(), Some(&asked));
    /// ```
    #[must_use]
    pub fn with_request(mut self, request: Request) -> Self {
        self.request = Some(Arc::new(request));
        self
    }

    /// The request the answer answers, on the retry after a suspension (when the host that
    /// retries set it: see [`with_request`](Self::with_request)).
    pub fn request(&self) -> Option<&Request> {
        self.request.as_deref()
    }

    /// The same context observing `token` for cancellation.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Arc::new(OnceLock::from(token));
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

    /// The same context carrying `key` as its [idempotency key](Context::idempotency_key)
    /// (the agent loop sets it on every call it runs).
    #[must_use]
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// The same context passing what the tool says while it runs ([`log`](Self::log),
    /// [`progress`](Self::progress)) to `notify`, in the order the tool says it. The agent
    /// loop sets one that emits [`Event::ToolLog`](crate::Event::ToolLog) and
    /// [`Event::ToolProgress`](crate::Event::ToolProgress) to the client's `on_event`; the MCP
    /// server one that sends `notifications/message` and `notifications/progress`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolnexus::{Context, LogLevel, Notice};
    ///
    /// let heard = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&heard);
    /// let ctx = Context::new().with_notifier(move |n| log.lock().unwrap().push(n));
    /// ctx.log(LogLevel::Info, "started");
    /// ctx.progress(1.0, Some(2.0), None);
    /// assert_eq!(
    ///     *heard.lock().unwrap(),
    ///     [
    ///         Notice::Log { level: LogLevel::Info, message: "started".into() },
    ///         Notice::Progress { progress: 1.0, total: Some(2.0), message: None },
    ///     ]
    /// );
    /// ```
    #[must_use]
    pub fn with_notifier<F>(mut self, notify: F) -> Self
    where
        F: Fn(Notice) + Send + Sync + 'static,
    {
        self.notifier = Some(Notifier(Arc::new(notify)));
        self
    }

    /// Logs `message` at `level` while the tool runs: a `tracing` event (target
    /// `toolnexus::tool`, with the call id), and a [`Notice::Log`] to the context's notifier:
    /// in the agent loop an [`Event::ToolLog`](crate::Event::ToolLog), served over MCP a
    /// `notifications/message` (when the client's `logging/setLevel` lets it through).
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        let message = message.into();
        let call = self.call_id.as_deref().unwrap_or("");
        match level {
            LogLevel::Debug => tracing::debug!(target: "toolnexus::tool", call, "{message}"),
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: "toolnexus::tool", call, "{message}");
            }
            LogLevel::Warning => tracing::warn!(target: "toolnexus::tool", call, "{message}"),
            _ => tracing::error!(target: "toolnexus::tool", call, "{message}"),
        }
        if let Some(Notifier(notify)) = &self.notifier {
            notify(Notice::Log { level, message });
        }
    }

    /// Reports how far the call has got (`progress` of `total`, when known; `progress`
    /// grows with each report): a [`Notice::Progress`] to the context's notifier: in the
    /// agent loop an [`Event::ToolProgress`](crate::Event::ToolProgress), served over MCP a
    /// `notifications/progress` (only when the caller sent a progress token).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        tracing::debug!(target: "toolnexus::tool", call = self.call_id.as_deref().unwrap_or(""), progress, total, message);
        if let Some(Notifier(notify)) = &self.notifier {
            notify(Notice::Progress {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
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
        self.cancel.get_or_init(CancellationToken::new)
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// The timeout for the call, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The model's id for this tool call, when run by the agent loop.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// A key naming this tool call of this run, for deduplicating its side effect; `None`
    /// outside the agent loop (unless set with [`Context::with_idempotency_key`]).
    ///
    /// The loop derives it from the run id, the turn and the model's tool-call id: 64
    /// lowercase hex digits (SHA-256 of `toolnexus-idempotency-v1`, the run id, the turn and
    /// the call id, NUL-separated). It is the same on every execution of one call: the first
    /// run, the retry after its suspension was answered (in this process or, after
    /// [`Client::resume`](crate::Client::resume), in another), and a resume of an older record
    /// or checkpoint that runs the call again. It differs for every other call.
    ///
    /// # The crash window
    ///
    /// A result enters the run's state (a [checkpoint](crate#durable-runs-guarantees)) when
    /// the tool returns; persisting that state is the host's write, after it. If the process
    /// dies *after the side effect and before the host has persisted the checkpoint* (or the
    /// next [`PendingRun`](crate::PendingRun)), the only durable state is the previous one,
    /// and resuming it runs this call again, with the same key. A tool with side effects
    /// makes that harmless by recording the key atomically with the effect (a unique column,
    /// an `Idempotency-Key` header of the API it calls) and, when the key is already there,
    /// returning the recorded outcome instead of acting again:
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::Mutex;
    /// use toolnexus::Context;
    ///
    /// // stands in for a table with a unique key column
    /// let charges: Mutex<HashMap<String, String>> = Mutex::default();
    /// let charge = |ctx: &Context, amount: u32| -> String {
    ///     let key = ctx.idempotency_key().expect("run by the agent loop").to_owned();
    ///     charges
    ///         .lock()
    ///         .unwrap()
    ///         .entry(key)
    ///         .or_insert_with(|| format!("charged {amount}"))
    ///         .clone()
    /// };
    /// let ctx = Context::new().with_idempotency_key("k1");
    /// assert_eq!(charge(&ctx, 5), "charged 5");
    /// assert_eq!(charge(&ctx, 5), "charged 5"); // the re-run after a crash: no second charge
    /// assert_eq!(charges.lock().unwrap().len(), 1);
    /// ```
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }
}
