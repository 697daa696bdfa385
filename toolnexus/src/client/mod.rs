//! The agent loop: [`Client`] runs a toolkit's tools for a [`Model`] and keeps CONTRACT
//! sections 3 (the loop rule) and 4 (durable resume).

mod event;
mod hooks;
mod inproc;
mod persist;
mod result;
mod scripted;
mod store;

use std::fmt;
use std::future::Future;
use std::mem;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime};

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::{Message, Model, ModelRequest, ModelTurn, Role, ToolCall, Usage};
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::tool::BoxFuture;
use crate::toolkit::{Toolkit, json_kind, panic_message};

pub use event::{Event, Metric};
pub use hooks::BeforeTool;
pub use inproc::{FnModel, IntoReply, Reply};
pub use persist::{PENDING_RUN_VERSION, PendingRun};
pub use result::{Limit, RunResult, RunStatus, ToolCallRecord};
pub use scripted::ScriptedModel;

use hooks::Hooks;
use persist::{Deferred, Halted};

/// The default `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 10;

type WaitForFn = Arc<dyn Fn(Request) -> BoxFuture<'static, Result<Answer, String>> + Send + Sync>;
type EventFn = Arc<dyn Fn(&Event) + Send + Sync>;
type MetricFn = Arc<dyn Fn(&Metric) + Send + Sync>;
type Sink<'a> = &'a (dyn Fn(&Event) + Send + Sync);

/// What a `wait_for` function may return: an [`Answer`], or a `Result` of one whose error is
/// the host's failure (the run then ends with [`Error::WaitFor`], the request still pending).
pub trait IntoAnswer {
    /// The answer, or the failure's text.
    ///
    /// # Errors
    ///
    /// The host's failure, as text.
    fn into_answer(self) -> Result<Answer, String>;
}

impl IntoAnswer for Answer {
    fn into_answer(self) -> Result<Answer, String> {
        Ok(self)
    }
}

impl<E: fmt::Display> IntoAnswer for Result<Answer, E> {
    fn into_answer(self) -> Result<Answer, String> {
        self.map_err(|e| e.to_string())
    }
}

/// The agent loop: calls the model with the toolkit's tools, runs the tool calls it asks for
/// (those of one turn concurrently, results recorded in call order), feeds the results back,
/// and repeats until the model answers without tool calls or `max_turns` is reached.
///
/// When a tool suspends (CONTRACT section 3):
/// - a [`Event::Pending`] is emitted before anything waits;
/// - with [`wait_for`](ClientBuilder::wait_for), the host answers: on `ok` the same tool runs
///   once more with the same arguments and `ctx.answer` (a `before_tool` hook is not consulted
///   again; a second suspension becomes `unresolved: <prompt>`); on `ok: false`, or an answer
///   arriving after the request's `expiresAt`, the model reads `declined/expired: <prompt>`;
/// - without it, the run halts on the first suspension in call order with
///   [`RunStatus::Pending`]; persist it as a [`PendingRun`] and [`resume`](Client::resume)
///   it later, in any process.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Client, FnTool, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let book = FnTool::builder("book_flight").description("Books a flight.")
///     .handler(|_, ctx| async move {
///         match ctx.answer_data::<String>() {
///             Ok(Some(city)) => ToolResult::success(format!("booked to {city}")),
///             _ => ToolResult::suspended(Request::input("Which city?")),
///         }
///     })
///     .build().unwrap();
/// let toolkit = Toolkit::builder().tool(book).build().unwrap();
/// let model = ScriptedModel::new([
///     Reply::tool_call("book_flight", json!({})),
///     Reply::text("You are booked to Oslo."),
/// ]);
///
/// let client = Client::builder(model)
///     .model_name("demo")
///     .wait_for(|req| async move { req.accept("Oslo") })
///     .build()
///     .unwrap();
/// let result = client.run("Book me a flight", &toolkit).await.unwrap();
/// assert_eq!(result.status, RunStatus::Done);
/// assert_eq!(result.tool_calls[0].output, "booked to Oslo");
/// # });
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    model: Arc<dyn Model>,
    model_name: String,
    system: Option<String>,
    max_turns: u32,
    wait_for: Option<WaitForFn>,
    hooks: Hooks,
    on_event: Option<EventFn>,
    on_metric: Option<MetricFn>,
    timeout: Option<Duration>,
    tool_timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    store: Option<Arc<dyn crate::store::RunStore>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("Client")
            .field("model_name", &i.model_name)
            .field("system", &i.system)
            .field("max_turns", &i.max_turns)
            .field("wait_for", &i.wait_for.is_some())
            .field("timeout", &i.timeout)
            .field("tool_timeout", &i.tool_timeout)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Client`]; see [`Client::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct ClientBuilder {
    model: Arc<dyn Model>,
    model_name: Option<String>,
    system: Option<String>,
    max_turns: u32,
    wait_for: Option<WaitForFn>,
    hooks: Hooks,
    on_event: Option<EventFn>,
    on_metric: Option<MetricFn>,
    timeout: Option<Duration>,
    tool_timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    store: Option<Arc<dyn crate::store::RunStore>>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("model_name", &self.model_name)
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The model id sent with every request (required).
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// The system prompt: the first message of every new run's transcript.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// The most model round trips per run (default [`DEFAULT_MAX_TURNS`]); a run that reaches
    /// it ends [`RunStatus::Incomplete`] with [`Limit::MaxTurns`].
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }

    /// The host slot that answers suspensions in-process. `f` receives the [`Request`] and
    /// returns an [`Answer`], or a `Result` of one whose `Err` is the host's failure (the run
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
        self.wait_for = Some(Arc::new(move |req| {
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
        self.hooks.before_tool = Some(Arc::new(move |call| Box::pin(f(call))));
        self
    }

    /// Transforms each result before it enters the transcript. Never sees a suspension, only
    /// the resolved result.
    pub fn after_tool<F>(mut self, f: F) -> Self
    where
        F: Fn(&ToolCall, ToolResult) -> ToolResult + Send + Sync + 'static,
    {
        self.hooks.after_tool = Some(Arc::new(f));
        self
    }

    /// Replaces what is sent to the model for one turn (messages, tools); the run's own
    /// transcript is unchanged.
    pub fn before_llm<F>(mut self, f: F) -> Self
    where
        F: Fn(ModelRequest) -> ModelRequest + Send + Sync + 'static,
    {
        self.hooks.before_llm = Some(Arc::new(f));
        self
    }

    /// Observes each model turn.
    pub fn after_llm<F>(mut self, f: F) -> Self
    where
        F: Fn(&ModelTurn) + Send + Sync + 'static,
    {
        self.hooks.after_llm = Some(Arc::new(f));
        self
    }

    /// Receives every [`Event`] of every run, in order.
    pub fn on_event<F>(mut self, f: F) -> Self
    where
        F: Fn(&Event) + Send + Sync + 'static,
    {
        self.on_event = Some(Arc::new(f));
        self
    }

    /// Receives a [`Metric`] for each model turn and each tool call.
    pub fn on_metric<F>(mut self, f: F) -> Self
    where
        F: Fn(&Metric) + Send + Sync + 'static,
    {
        self.on_metric = Some(Arc::new(f));
        self
    }

    /// Ends a run that takes longer with [`Error::Timeout`]; when it elapses while `wait_for`
    /// waits, the run ends with [`Error::WaitFor`] instead, carrying the halted run.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The timeout of each tool call (its [`Context::timeout`]); a call that exceeds it fails
    /// with `tool <name> timed out after <duration>`.
    pub fn tool_timeout(mut self, limit: Duration) -> Self {
        self.tool_timeout = Some(limit);
        self
    }

    /// Cancelling `token` ends every run of this client with [`Error::Cancelled`] (with
    /// [`Error::WaitFor`], carrying the halted run, when `wait_for` is waiting); tool calls
    /// see it through [`Context::cancellation`].
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Finishes the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] without a model name, or with `max_turns` 0.
    pub fn build(self) -> Result<Client> {
        let model_name = self.model_name.filter(|n| !n.is_empty()).ok_or_else(|| {
            Error::Config(
                "a client needs a model name: call `.model_name(..)` (any label for an in-process model)"
                    .to_owned(),
            )
        })?;
        if self.max_turns == 0 {
            return Err(Error::Config(
                "max_turns must be at least 1: a run needs one model turn".to_owned(),
            ));
        }
        Ok(Client {
            inner: Arc::new(Inner {
                model: self.model,
                model_name,
                system: self.system,
                max_turns: self.max_turns,
                wait_for: self.wait_for,
                hooks: self.hooks,
                on_event: self.on_event,
                on_metric: self.on_metric,
                timeout: self.timeout,
                tool_timeout: self.tool_timeout,
                cancel: self.cancel,
                store: self.store,
            }),
        })
    }
}

impl Client {
    /// Starts a client for `model` (an HTTP provider, a [`FnModel`], a [`ScriptedModel`], or
    /// an `Arc<dyn Model>`).
    pub fn builder(model: impl Model + 'static) -> ClientBuilder {
        ClientBuilder {
            model: Arc::new(model),
            model_name: None,
            system: None,
            max_turns: DEFAULT_MAX_TURNS,
            wait_for: None,
            hooks: Hooks::default(),
            on_event: None,
            on_metric: None,
            timeout: None,
            tool_timeout: None,
            cancel: None,
            store: None,
        }
    }

    /// The model id this client sends.
    pub fn model_name(&self) -> &str {
        &self.inner.model_name
    }

    /// The same client observing `token` instead: cancel it to end the runs started through
    /// the returned client (and only those) with [`Error::Cancelled`].
    ///
    /// ```
    /// use toolnexus::{CancellationToken, Client, ScriptedModel};
    ///
    /// let client = Client::builder(ScriptedModel::default()).model_name("m").build().unwrap();
    /// let token = CancellationToken::new();
    /// let cancellable = client.with_cancellation(token.clone());
    /// # let _ = cancellable;
    /// ```
    #[must_use]
    pub fn with_cancellation(&self, token: CancellationToken) -> Self {
        let mut inner = (*self.inner).clone();
        inner.cancel = Some(token);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Runs the loop on a new transcript: the system prompt (if any), then `prompt` as the
    /// user turn.
    ///
    /// # Errors
    ///
    /// The model's failure ([`Error::Model`], [`Error::Provider`], ...), [`Error::WaitFor`]
    /// (the halted run is in the error: [`Error::halted_run`]), [`Error::Timeout`],
    /// [`Error::Cancelled`]. A tool's failure or suspension is never an error.
    pub async fn run(&self, prompt: impl Into<String>, toolkit: &Toolkit) -> Result<RunResult> {
        self.run_with_history(Vec::new(), prompt, toolkit).await
    }

    /// Continues `history` (for instance the `messages` of an earlier [`RunResult`]) with
    /// `prompt` as a new user turn. The system prompt is put first unless `history` already
    /// starts with a system message.
    ///
    /// # Errors
    ///
    /// As [`Client::run`].
    pub async fn run_with_history(
        &self,
        history: Vec<Message>,
        prompt: impl Into<String>,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let state = self.fresh_state(history, prompt.into(), toolkit);
        let run = self.drive(state, toolkit, None, false, None).await;
        self.park_halted(run).await
    }

    /// As [`Client::run`], streaming: the model is asked to stream, and `sink` receives every
    /// [`Event`] as it happens, text deltas as [`Event::Text`] (as does the client's
    /// [`on_event`](ClientBuilder::on_event)).
    ///
    /// # Errors
    ///
    /// As [`Client::run`]; [`Error::StreamingUnsupported`] from a model that cannot stream
    /// (the in-process [`FnModel`]).
    pub async fn stream<F>(
        &self,
        prompt: impl Into<String>,
        toolkit: &Toolkit,
        sink: F,
    ) -> Result<RunResult>
    where
        F: Fn(&Event) + Send + Sync,
    {
        let state = self.fresh_state(Vec::new(), prompt.into(), toolkit);
        let run = self.drive(state, toolkit, Some(&sink), true, None).await;
        self.park_halted(run).await
    }

    /// Resumes a halted run with the answer to its pending request (CONTRACT section 4).
    ///
    /// The halted call is resolved first (on `ok`, the same tool runs again with the same
    /// arguments and `ctx.answer`; on `ok: false` or past `expiresAt`, the model reads
    /// `declined/expired: <prompt>`), then the later calls of the halted turn (their finished
    /// results enter the transcript; calls that had suspended run again and may halt the run
    /// again), then the loop goes on. No user turn is added; the run keeps its model id and
    /// transcript (the record's system message, not this client's). `max_turns` counts the
    /// run's turns from its start.
    ///
    /// # Errors
    ///
    /// [`Error::AnswerMismatch`] naming both ids when the answer does not echo the pending id
    /// (nothing is changed: the record is only read); [`Error::Persist`] for an inconsistent
    /// record; then as [`Client::run`].
    pub async fn resume(
        &self,
        run: &PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        self.resume_inner(run, answer, toolkit, None).await
    }

    /// As [`Client::resume`], streaming into `sink` (see [`Client::stream`]).
    ///
    /// # Errors
    ///
    /// As [`Client::resume`] and [`Client::stream`].
    pub async fn stream_resume<F>(
        &self,
        run: &PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
        sink: F,
    ) -> Result<RunResult>
    where
        F: Fn(&Event) + Send + Sync,
    {
        self.resume_inner(run, answer, toolkit, Some(&sink)).await
    }

    async fn resume_inner(
        &self,
        run: &PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
        sink: Option<Sink<'_>>,
    ) -> Result<RunResult> {
        if answer.id != run.pending().id {
            return Err(Error::AnswerMismatch {
                expected: run.pending().id.clone(),
                got: answer.id,
            });
        }
        let at = run.check()?;
        let (result, halted) = run.clone().into_parts();
        let state = State {
            request: ModelRequest::new(result.model, result.messages, toolkit.specs()),
            records: result.tool_calls,
            usage: result.usage,
            turns: result.turns,
            text: String::new(),
        };
        let pending = result.pending.unwrap_or_else(|| run.pending().clone());
        let resume = Resume {
            assistant_at: at,
            halted,
            pending,
            answer,
        };
        self.drive(state, toolkit, sink, sink.is_some(), Some(resume))
            .await
    }

    fn fresh_state(&self, mut history: Vec<Message>, prompt: String, toolkit: &Toolkit) -> State {
        if let Some(system) = &self.inner.system
            && history.first().is_none_or(|m| m.role != Role::System)
        {
            history.insert(0, Message::system(system.clone()));
        }
        history.push(Message::user(prompt));
        State {
            request: ModelRequest::new(self.inner.model_name.clone(), history, toolkit.specs()),
            records: Vec::new(),
            usage: Usage::default(),
            turns: 0,
            text: String::new(),
        }
    }

    async fn drive(
        &self,
        mut state: State,
        toolkit: &Toolkit,
        sink: Option<Sink<'_>>,
        streaming: bool,
        resume: Option<Resume>,
    ) -> Result<RunResult> {
        let cancel = self
            .inner
            .cancel
            .as_ref()
            .map_or_else(CancellationToken::new, CancellationToken::child_token);
        let deadline = self
            .inner
            .timeout
            .map(|limit| (tokio::time::Instant::now() + limit, limit));
        let run = Run {
            client: &self.inner,
            toolkit,
            sink,
            cancel: cancel.clone(),
            deadline,
            waiting: AtomicBool::new(false),
            streaming,
        };
        // boxed: moved into `timed` and the select, an inline future would be stored thrice
        let work = Box::pin(async {
            if let Some(resume) = resume
                && let Some(halted) = Box::pin(run.resume_turn(&mut state, resume)).await?
            {
                return Ok(halted);
            }
            run.model_loop(&mut state).await
        });
        let timed = async {
            match deadline {
                Some((at, limit)) => tokio::time::timeout_at(at, work)
                    .await
                    .unwrap_or(Err(Error::Timeout(limit))),
                None => work.await,
            }
        };
        // a cancellation ends the run here, except while `wait_for` waits: then the work
        // sees it and ends with the halted run (Error::WaitFor), so the request is not lost
        // (the timeout is handled alike: `timeout_at` polls the work before its deadline)
        let mut cancelled = std::pin::pin!(cancel.cancelled());
        let mut timed = std::pin::pin!(timed);
        let mut fired = false;
        let result = std::future::poll_fn(|cx| {
            fired = fired || cancelled.as_mut().poll(cx).is_ready();
            if fired && !run.waiting.load(Ordering::SeqCst) {
                return Poll::Ready(Err(Error::Cancelled));
            }
            timed.as_mut().poll(cx)
        })
        .await?;
        run.emit(|| Event::Done {
            result: Box::new(result.clone()),
        });
        Ok(result)
    }
}

impl Error {
    /// The run a failed `wait_for` left pending ([`Error::WaitFor`]): persist it as a
    /// [`PendingRun`] or answer its `pending` request and [`Client::resume`] it.
    pub fn halted_run(&self) -> Option<&RunResult> {
        match self {
            Self::WaitFor { run, .. } => Some(run),
            _ => None,
        }
    }

    /// Takes the halted run out of an [`Error::WaitFor`].
    pub fn into_halted_run(self) -> Option<RunResult> {
        match self {
            Self::WaitFor { run, .. } => Some(*run),
            _ => None,
        }
    }
}

struct State {
    request: ModelRequest,
    records: Vec<ToolCallRecord>,
    usage: Usage,
    turns: u32,
    text: String,
}

struct Resume {
    assistant_at: usize,
    halted: Halted,
    pending: Request,
    answer: Answer,
}

/// One tool call's execution: the arguments it ran with, its result, how long it took.
struct Exec {
    args: Value,
    result: ToolResult,
    duration: Duration,
}

impl Exec {
    /// What a later call of a halted turn leaves for the resume: its finished result, or
    /// nothing when it suspended (it runs again on resume, so its request is asked afresh).
    fn defer(self) -> Option<Deferred> {
        (!self.result.is_pending()).then_some(Deferred {
            args: self.args,
            result: self.result,
            duration: self.duration,
        })
    }
}

impl From<Deferred> for Exec {
    fn from(d: Deferred) -> Self {
        Self {
            args: d.args,
            result: d.result,
            duration: d.duration,
        }
    }
}

struct Run<'a> {
    client: &'a Inner,
    toolkit: &'a Toolkit,
    sink: Option<Sink<'a>>,
    cancel: CancellationToken,
    /// When the run's timeout elapses, and the timeout.
    deadline: Option<(tokio::time::Instant, Duration)>,
    /// Whether `wait_for` is waiting (the run's cancellation then ends the wait, not the run).
    waiting: AtomicBool,
    streaming: bool,
}

impl Run<'_> {
    fn emit(&self, make: impl FnOnce() -> Event) {
        if self.client.on_event.is_none() && self.sink.is_none() {
            return;
        }
        let event = make();
        if let Some(on_event) = &self.client.on_event {
            on_event(&event);
        }
        if let Some(sink) = self.sink {
            sink(&event);
        }
    }

    fn metric(&self, make: impl FnOnce() -> Metric) {
        if let Some(on_metric) = &self.client.on_metric {
            on_metric(&make());
        }
    }

    fn tool_metric(&self, call: &ToolCall, duration: Duration, is_error: bool, pending: bool) {
        self.metric(|| Metric::Tool {
            name: call.name.clone(),
            call_id: call.id.clone(),
            duration,
            is_error,
            pending,
        });
    }

    fn ctx(&self, call: &ToolCall) -> Context {
        let ctx = Context::new()
            .with_cancellation(self.cancel.clone())
            .with_call_id(call.id.clone());
        match self.client.tool_timeout {
            Some(limit) => ctx.with_timeout(limit),
            None => ctx,
        }
    }

    async fn model_loop(&self, st: &mut State) -> Result<RunResult> {
        loop {
            if st.turns >= self.client.max_turns {
                return Ok(finish(st, RunStatus::Incomplete, Some(Limit::MaxTurns)));
            }
            let started = Instant::now();
            let turn = self.call_model(&st.request).await?;
            st.turns += 1;
            self.metric(|| Metric::Llm {
                model: st.request.model.clone(),
                turn: st.turns,
                duration: started.elapsed(),
                usage: turn.usage,
                tool_calls: turn.tool_calls.len(),
            });
            if let Some(after_llm) = &self.client.hooks.after_llm {
                after_llm(&turn);
            }
            if let Some(usage) = turn.usage {
                st.usage += usage;
                self.emit(|| Event::Usage { usage });
            }
            let ModelTurn {
                text, tool_calls, ..
            } = turn;
            if !self.streaming
                && let Some(text) = text.as_deref().filter(|t| !t.is_empty())
            {
                self.emit(|| Event::Text {
                    delta: text.to_owned(),
                });
            }
            st.text = text.clone().unwrap_or_default();
            if tool_calls.is_empty() {
                st.request
                    .messages
                    .push(Message::assistant(text.unwrap_or_default()));
                return Ok(finish(st, RunStatus::Done, None));
            }
            let calls: Vec<ToolCall> = tool_calls
                .into_iter()
                .enumerate()
                .map(|(i, mut call)| {
                    if call.id.is_empty() {
                        call.id = format!("call_{i}");
                    }
                    call
                })
                .collect();
            for call in &calls {
                self.emit(|| Event::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    args: call.arguments.clone(),
                });
            }
            st.request
                .messages
                .push(Message::assistant_tool_calls(text, calls.clone()));
            let pre = calls.iter().map(|_| None).collect();
            if let Some(halted) = Box::pin(self.tool_phase(st, &calls, 0, pre)).await? {
                return Ok(halted);
            }
        }
    }

    async fn call_model(&self, request: &ModelRequest) -> Result<ModelTurn> {
        let replaced;
        let request = match &self.client.hooks.before_llm {
            Some(before_llm) => {
                replaced = before_llm(request.clone());
                &replaced
            }
            None => request,
        };
        if self.streaming {
            let delta = |d: &str| {
                self.emit(|| Event::Text {
                    delta: d.to_owned(),
                });
            };
            self.client.model.complete(request, Some(&delta)).await
        } else {
            self.client.model.complete(request, None).await
        }
    }

    /// Resolves the halted call of a resumed run, then the rest of its turn.
    async fn resume_turn(&self, st: &mut State, resume: Resume) -> Result<Option<RunResult>> {
        let Resume {
            assistant_at,
            halted,
            pending,
            answer,
        } = resume;
        let calls = st.request.messages[assistant_at].tool_calls.clone();
        let index = halted.call_index;
        let call = &calls[index];
        // the placeholder and the suspension's record are replaced by the resolved result
        st.request.messages.pop();
        st.records.pop();
        let resolved = Box::pin(self.resolve(call, &halted.args, &pending, answer)).await;
        self.record(st, call, halted.args, resolved);
        let pre = halted
            .deferred
            .into_iter()
            .map(|d| d.map(Exec::from))
            .collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }

    /// Runs `calls[start..]` (those without a result in `pre`, concurrently), then handles the
    /// results in call order. Returns the halted run when one suspends without `wait_for`.
    async fn tool_phase(
        &self,
        st: &mut State,
        calls: &[ToolCall],
        start: usize,
        pre: Vec<Option<Exec>>,
    ) -> Result<Option<RunResult>> {
        let todo = (0..pre.len()).filter(|&k| pre[k].is_none());
        let mut fresh = join_all(todo.map(|k| self.execute_call(&calls[start + k])))
            .await
            .into_iter();
        let execs: Vec<Exec> = pre
            .into_iter()
            .filter_map(|done| done.or_else(|| fresh.next()))
            .collect();
        let mut execs = execs.into_iter().enumerate();
        while let Some((k, exec)) = execs.next() {
            let index = start + k;
            let call = &calls[index];
            let Some(request) = exec.result.pending().cloned() else {
                self.tool_metric(call, exec.duration, exec.result.is_error, false);
                self.record(st, call, exec.args, exec.result);
                continue;
            };
            self.tool_metric(call, exec.duration, false, true);
            self.emit(|| Event::Pending {
                request: request.clone(),
            });
            let Some(wait_for) = &self.client.wait_for else {
                let rest = execs.map(|(_, e)| e.defer()).collect();
                return Ok(Some(halt(st, call, index, exec, request, rest)));
            };
            let waited = self.wait(wait_for, &request).await;
            let failure = match waited {
                Ok(answer) if answer.id == request.id => {
                    let resolved = Box::pin(self.resolve(call, &exec.args, &request, answer)).await;
                    self.record(st, call, exec.args, resolved);
                    continue;
                }
                Ok(answer) => format!(
                    "it answered request `{}`; an answer must echo the pending request's id",
                    answer.id
                ),
                Err(message) => message,
            };
            let rest = execs.map(|(_, e)| e.defer()).collect();
            let request_id = request.id.clone();
            let run = halt(st, call, index, exec, request, rest);
            return Err(Error::WaitFor {
                request_id,
                message: failure,
                run: Box::new(run),
            });
        }
        Ok(None)
    }

    /// The host's answer to `request`, or why there is none: `wait_for` failed or panicked,
    /// or the run's timeout or cancellation interrupted it (the request stays pending either
    /// way: the caller returns the halted run with the failure).
    async fn wait(&self, wait_for: &WaitForFn, request: &Request) -> Result<Answer, String> {
        let waiting = AssertUnwindSafe(async { wait_for(request.clone()).await })
            .catch_unwind()
            .map(|outcome| {
                outcome.unwrap_or_else(|panic| {
                    Err(format!(
                        "wait_for panicked: {}",
                        panic_message(panic.as_ref())
                    ))
                })
            });
        let timeout = async {
            match self.deadline {
                Some((at, limit)) => {
                    tokio::time::sleep_until(at).await;
                    limit
                }
                None => std::future::pending().await,
            }
        };
        self.waiting.store(true, Ordering::SeqCst);
        let outcome = tokio::select! {
            biased;
            answer = waiting => answer,
            () = self.cancel.cancelled() => {
                Err("the run was cancelled while waiting for the answer".to_owned())
            }
            limit = timeout => Err(format!(
                "the run timed out after {limit:?} while waiting for the answer"
            )),
        };
        self.waiting.store(false, Ordering::SeqCst);
        outcome
    }

    /// One call: unknown tool, unreadable arguments, `before_tool`, then the tool.
    async fn execute_call(&self, call: &ToolCall) -> Exec {
        let started = Instant::now();
        let done = |args: Value, result: ToolResult| Exec {
            args,
            result,
            duration: started.elapsed(),
        };
        if self.toolkit.get(&call.name).is_none() {
            let result = ToolResult::error(format!("Unknown tool: {}", call.name));
            return done(call.arguments.clone(), result);
        }
        let mut args = match parse_arguments(&call.name, &call.arguments) {
            Ok(args) => args,
            Err(failure) => return done(call.arguments.clone(), failure),
        };
        if let Some(before_tool) = &self.client.hooks.before_tool {
            let seen = ToolCall::new(
                call.id.clone(),
                call.name.clone(),
                Value::Object(args.clone()),
            );
            match before_tool(seen).await {
                BeforeTool::Continue => {}
                BeforeTool::Rewrite(rewritten) => args = rewritten,
                BeforeTool::Return(result) => return done(Value::Object(args), result),
            }
        }
        let args = Value::Object(args);
        let result = self
            .toolkit
            .execute(&call.name, args.clone(), &self.ctx(call))
            .await;
        done(args, result)
    }

    /// The answer to a suspension becomes the call's result: declined or expired, or the
    /// tool's retry with the answer (a second suspension is `unresolved`).
    async fn resolve(
        &self,
        call: &ToolCall,
        args: &Value,
        request: &Request,
        answer: Answer,
    ) -> ToolResult {
        let started = Instant::now();
        let result = if !answer.ok || request.is_expired_at(SystemTime::now()) {
            ToolResult::error(format!("declined/expired: {}", request.prompt))
        } else {
            let ctx = self.ctx(call).with_answer(answer);
            let retry = self.toolkit.execute(&call.name, args.clone(), &ctx).await;
            if retry.is_pending() {
                ToolResult::error(format!("unresolved: {}", request.prompt))
            } else {
                retry
            }
        };
        self.tool_metric(call, started.elapsed(), result.is_error, false);
        result
    }

    /// A result enters the transcript (after `after_tool`).
    fn record(&self, st: &mut State, call: &ToolCall, args: Value, result: ToolResult) {
        let result = match &self.client.hooks.after_tool {
            Some(after_tool) => after_tool(
                &ToolCall::new(call.id.clone(), call.name.clone(), args.clone()),
                result,
            ),
            None => result,
        };
        self.emit(|| Event::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            output: result.output.clone(),
            is_error: result.is_error,
        });
        st.request.messages.push(Message::tool_result(
            call.id.clone(),
            result.output.clone(),
            result.is_error,
        ));
        st.records.push(ToolCallRecord {
            name: call.name.clone(),
            args,
            output: result.output,
            is_error: result.is_error,
            metadata: result.metadata,
        });
    }
}

/// The run halts on `call`: its result in the transcript is the request's prompt (isError);
/// the later calls of the turn stay out of the transcript, kept in the resume state.
fn halt(
    st: &mut State,
    call: &ToolCall,
    index: usize,
    exec: Exec,
    request: Request,
    deferred: Vec<Option<Deferred>>,
) -> RunResult {
    st.request.messages.push(Message::tool_result(
        call.id.clone(),
        request.prompt.clone(),
        true,
    ));
    st.records.push(ToolCallRecord {
        name: call.name.clone(),
        args: exec.args.clone(),
        output: exec.result.output,
        is_error: exec.result.is_error,
        metadata: exec.result.metadata,
    });
    st.text.clone_from(&request.prompt);
    let mut result = finish(st, RunStatus::Pending, None);
    result.pending = Some(request);
    result.halted = Some(Box::new(Halted {
        call_index: index,
        args: exec.args,
        deferred,
    }));
    result
}

fn finish(st: &mut State, status: RunStatus, limit: Option<Limit>) -> RunResult {
    RunResult {
        text: mem::take(&mut st.text),
        messages: mem::take(&mut st.request.messages),
        tool_call_count: st.records.len(),
        tool_calls: mem::take(&mut st.records),
        turns: st.turns,
        usage: st.usage,
        model: st.request.model.clone(),
        status,
        limit,
        pending: None,
        halted: None,
    }
}

/// The model's arguments as an object, or the failure that tells the model what is wrong:
/// `invalid arguments for <tool>: not valid JSON: <serde message>` or `... expected a JSON
/// object, got <kind>`. `null` and an empty string read as `{}`.
fn parse_arguments(tool: &str, arguments: &Value) -> Result<Map<String, Value>, ToolResult> {
    let not_object = |v: &Value| {
        ToolResult::error(format!(
            "invalid arguments for {tool}: expected a JSON object, got {}",
            json_kind(v)
        ))
    };
    match arguments {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        Value::String(s) if s.trim().is_empty() => Ok(Map::new()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(not_object(&other)),
            Err(e) => Err(ToolResult::error(format!(
                "invalid arguments for {tool}: not valid JSON: {e}"
            ))),
        },
        other => Err(not_object(other)),
    }
}
