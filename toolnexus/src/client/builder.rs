//! [`ClientBuilder`]: every option of a [`Client`], held in one private [`Config`] that
//! `build` checks and hands to the client.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::hooks::Hooks;
use super::wait::IntoAnswer;
use super::{BeforeTool, Client, DEFAULT_MAX_TURNS, Event, EventFn, Metric, MetricFn, WaitForFn};
use crate::error::{Error, Result};
use crate::model::{Model, ModelRequest, ModelTurn, ToolCall};
use crate::request::Request;
use crate::result::ToolResult;

/// Builds a [`Client`]; see [`Client::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct ClientBuilder {
    config: Config,
}

/// Every option of a [`Client`], declared once: the builder fills it, `build` checks it and
/// the client keeps it.
#[derive(Clone)]
pub(super) struct Config {
    pub(super) model: Arc<dyn Model>,
    /// Empty until set; `build` refuses an empty name.
    pub(super) model_name: String,
    pub(super) system: Option<String>,
    pub(super) max_turns: u32,
    pub(super) wait_for: Option<WaitForFn>,
    pub(super) hooks: Hooks,
    pub(super) on_event: Option<EventFn>,
    pub(super) on_metric: Option<MetricFn>,
    pub(super) timeout: Option<Duration>,
    pub(super) tool_timeout: Option<Duration>,
    pub(super) cancel: Option<CancellationToken>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field(
                "model_name",
                &Some(&self.config.model_name).filter(|n| !n.is_empty()),
            )
            .field("max_turns", &self.config.max_turns)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    pub(super) fn new(model: Arc<dyn Model>) -> Self {
        Self {
            config: Config {
                model,
                model_name: String::new(),
                system: None,
                max_turns: DEFAULT_MAX_TURNS,
                wait_for: None,
                hooks: Hooks::default(),
                on_event: None,
                on_metric: None,
                timeout: None,
                tool_timeout: None,
                cancel: None,
            },
        }
    }

    /// The model id sent with every request (required).
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.config.model_name = name.into();
        self
    }

    /// The system prompt: the first message of every new run's transcript.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.config.system = Some(prompt.into());
        self
    }

    /// The most model round trips per run (default [`DEFAULT_MAX_TURNS`]); a run that reaches
    /// it ends [`RunStatus::Incomplete`](super::RunStatus::Incomplete) with [`Limit::MaxTurns`](super::Limit::MaxTurns).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.config.max_turns = turns;
        self
    }

    /// The host slot that answers suspensions in-process. `f` receives the [`Request`] and
    /// returns an [`Answer`](crate::request::Answer), or a `Result` of one whose `Err` is the host's failure (the run
    /// then ends with [`Error::WaitFor`]; the halted run travels with the error). A `wait_for`
    /// that panics, or that the run's [`timeout`](Self::timeout) or
    /// [`cancellation`](Self::cancellation) interrupts, ends the run the same way: a request
    /// is never lost.
    pub fn wait_for<F, Fut, A>(mut self, f: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = A> + Send + 'static,
        A: IntoAnswer,
    {
        self.config.wait_for = Some(Arc::new(move |req| {
            let fut = f(req);
            Box::pin(async move { fut.await.into_answer() })
        }));
        self
    }

    /// Runs before each tool call (not before the retry after an answer) with the call as the
    /// model made it (arguments parsed): continue, rewrite the arguments, or return a result
    /// instead of running the tool (a suspension included).
    pub fn before_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = BeforeTool> + Send + 'static,
    {
        self.config.hooks.before_tool = Some(Arc::new(move |call| Box::pin(f(call))));
        self
    }

    /// Transforms each result before it enters the transcript. Never sees a suspension, only
    /// the resolved result.
    pub fn after_tool<F>(mut self, f: F) -> Self
    where
        F: Fn(&ToolCall, ToolResult) -> ToolResult + Send + Sync + 'static,
    {
        self.config.hooks.after_tool = Some(Arc::new(f));
        self
    }

    /// Replaces what is sent to the model for one turn (messages, tools); the run's own
    /// transcript is unchanged.
    pub fn before_llm<F>(mut self, f: F) -> Self
    where
        F: Fn(ModelRequest) -> ModelRequest + Send + Sync + 'static,
    {
        self.config.hooks.before_llm = Some(Arc::new(f));
        self
    }

    /// Observes each model turn.
    pub fn after_llm<F>(mut self, f: F) -> Self
    where
        F: Fn(&ModelTurn) + Send + Sync + 'static,
    {
        self.config.hooks.after_llm = Some(Arc::new(f));
        self
    }

    /// Receives every [`Event`] of every run, in order.
    pub fn on_event<F>(mut self, f: F) -> Self
    where
        F: Fn(&Event) + Send + Sync + 'static,
    {
        self.config.on_event = Some(Arc::new(f));
        self
    }

    /// Receives a [`Metric`] for each model turn and each tool call.
    pub fn on_metric<F>(mut self, f: F) -> Self
    where
        F: Fn(&Metric) + Send + Sync + 'static,
    {
        self.config.on_metric = Some(Arc::new(f));
        self
    }

    /// Ends a run that takes longer with [`Error::Timeout`]; when it elapses while `wait_for`
    /// waits, the run ends with [`Error::WaitFor`] instead, carrying the halted run.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.config.timeout = Some(limit);
        self
    }

    /// The timeout of each tool call (its [`Context::timeout`](crate::context::Context::timeout)); a call that exceeds it fails
    /// with `tool <name> timed out after <duration>`.
    pub fn tool_timeout(mut self, limit: Duration) -> Self {
        self.config.tool_timeout = Some(limit);
        self
    }

    /// Cancelling `token` ends every run of this client with [`Error::Cancelled`] (with
    /// [`Error::WaitFor`], carrying the halted run, when `wait_for` is waiting); tool calls
    /// see it through [`Context::cancellation`](crate::context::Context::cancellation).
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.config.cancel = Some(token);
        self
    }

    /// Finishes the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] without a model name, or with `max_turns` 0.
    pub fn build(self) -> Result<Client> {
        let config = self.config;
        if config.model_name.is_empty() {
            return Err(Error::Config(
                "a client needs a model name: call `.model_name(..)` (any label for an in-process model)"
                    .to_owned(),
            ));
        }
        if config.max_turns == 0 {
            return Err(Error::Config(
                "max_turns must be at least 1: a run needs one model turn".to_owned(),
            ));
        }
        Ok(Client {
            inner: Arc::new(config),
        })
    }
}
