//! The agent loop: [`Client`] runs a toolkit's tools for a [`Model`] and keeps the
//! [contract](crate::contract)'s sections 3 (the loop rule) and 4 (durable resume).
//!
//! This module holds the [`Client`] and its entry points (run, stream, resume, resume a
//! checkpoint; those through a store, answer, resume a claim and ask in a conversation, are in
//! `store`); the rest is one concept a file: [`ClientBuilder`] (`builder`), one run in progress and all of
//! its work, the turn loop, the tool phase and the resume of a halted turn (`run`), the run's
//! state and how it becomes a [`RunResult`] (`state`), in-process answers (`wait`), what the
//! loop does with a client's store (`store`), events (`event`), hooks (`hooks`), tracing
//! (`trace`) and the in-process models ([`FnModel`], [`ScriptedModel`], [`Reply`]). The
//! durable record of a run, what it is at rest and its checks, is [`run`](crate::run)'s.

mod builder;
pub(crate) mod edit;
mod event;
mod fn_model;
mod hooks;
mod marks;
mod remember;
mod reply;
mod run;
mod scripted;
mod state;
mod store;
mod together;
mod trace;
mod wait;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::model::{Message, Model};
use crate::request::{Answer, Request};
use crate::run::{Limit, PendingRun, RunResult, RunStatus, ToolCallRecord};
use crate::tool::BoxFuture;
use crate::toolkit::Toolkit;

pub use builder::ClientBuilder;
pub use event::{Event, Metric};
pub use fn_model::FnModel;
pub use hooks::BeforeTool;
pub use reply::{IntoReply, Reply};
pub use scripted::ScriptedModel;
pub use wait::IntoAnswer;

use builder::Config;
use remember::Remembering;
use run::Resume;
use state::State;

/// The default `max_turns`: 10.
pub const DEFAULT_MAX_TURNS: u32 = 10;

type WaitForFn = Arc<dyn Fn(Request) -> BoxFuture<'static, Result<Answer, String>> + Send + Sync>;
type EventFn = Arc<dyn Fn(&Event) + Send + Sync>;
/// A client-wide approval policy: the prompt to ask before running a call, or `None`.
type ApprovalFn = Arc<
    dyn Fn(&dyn crate::tool::Tool, &serde_json::Map<String, serde_json::Value>) -> Option<String>
        + Send
        + Sync,
>;
type MetricFn = Arc<dyn Fn(&Metric) + Send + Sync>;
type Sink<'a> = &'a (dyn Fn(&Event) + Send + Sync);

/// The agent loop: calls the model with the toolkit's tools, runs the tool calls it asks for
/// (those of one turn concurrently, results recorded in call order), feeds the results back,
/// and repeats until the model answers without tool calls or `max_turns` is reached.
///
/// When a tool suspends ([contract section 3](crate::contract)):
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
    inner: Arc<Config>,
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

impl Client {
    /// Starts a client for `model` (an HTTP provider, a [`FnModel`], a [`ScriptedModel`], or
    /// an `Arc<dyn Model>`).
    pub fn builder(model: impl Model + 'static) -> ClientBuilder {
        ClientBuilder::new(Arc::new(model))
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

    /// The same client, running for `principal` (a user, a team, a service: whoever the host
    /// says the runs are for): the [remembered decisions](crate::remember) kept for that
    /// principal apply to the runs started (and resumed) through the returned client, and an
    /// answer given through it that says `within: principal` is remembered for it.
    ///
    /// Who a run is for is kept in its records (bound by their fingerprints, like the agent's
    /// name), so a run resumed elsewhere (by a [`Worker`](crate::worker::Worker), or a client
    /// for another principal) stays the run of the principal it started for, and a run started
    /// for nobody stays nobody's: no client widens whose rules hold.
    ///
    /// ```
    /// use toolnexus::{Client, ScriptedModel};
    ///
    /// let client = Client::builder(ScriptedModel::default()).model_name("m").build().unwrap();
    /// let for_ada = client.for_principal("ada");
    /// # let _ = for_ada;
    /// ```
    ///
    /// A principal takes at most [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES) (256): a
    /// client for a longer one runs nothing; every run (and resume) through it fails with
    /// [`Error::Config`] saying so, before anything runs or is stored.
    ///
    /// ```
    /// use toolnexus::{Client, Error, ScriptedModel, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = Client::builder(ScriptedModel::default()).model_name("m").build().unwrap();
    /// let toolkit = Toolkit::builder().build().unwrap();
    /// let run = client.for_principal("x".repeat(300)).run("hi", &toolkit).await;
    /// assert!(matches!(run, Err(Error::Config(why)) if why.contains("MAX_NAME_BYTES")));
    /// # });
    /// ```
    #[must_use]
    pub fn for_principal(&self, principal: impl Into<String>) -> Self {
        let principal = principal.into();
        let mut inner = (*self.inner).clone();
        match crate::limits::check_name("the principal", &principal) {
            Ok(()) => inner.principal = Some(principal),
            Err(why) => inner.refused = Some(why),
        }
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
    /// Once a tool result has entered the run's state, any of these comes wrapped in
    /// [`Error::Interrupted`] with the run's checkpoint (see
    /// [`Client::resume_checkpoint`]).
    pub async fn run(&self, prompt: impl Into<String>, toolkit: &Toolkit) -> Result<RunResult> {
        self.run_in(None, Vec::new(), prompt.into(), toolkit).await
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
        self.run_in(None, history, prompt.into(), toolkit).await
    }

    /// A new run continuing `history`, a turn of `conversation` when given (kept in its
    /// records). Not an `async fn`: the state is made before the future, which then holds the
    /// boxed run and not the transcript and prompt it was made from.
    fn run_in<'a>(
        &'a self,
        conversation: Option<&str>,
        history: Vec<Message>,
        prompt: String,
        toolkit: &'a Toolkit,
    ) -> impl Future<Output = Result<RunResult>> + Send + 'a {
        let mut state = State::fresh(&self.inner, history, prompt, toolkit);
        state.conversation = conversation.map(str::to_owned);
        let run = self.drive(state, toolkit, None, false, None, self.remembering());
        async move {
            let run = run.await;
            if self.inner.store.is_none() {
                return run;
            }
            // boxed: a run without a store does not carry the store's future in its own
            Box::pin(self.park_halted(run)).await
        }
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
        let state = State::fresh(&self.inner, Vec::new(), prompt.into(), toolkit);
        let run = self
            .drive(state, toolkit, Some(&sink), true, None, self.remembering())
            .await;
        if self.inner.store.is_none() {
            return run;
        }
        // boxed: a run without a store does not carry the store's future in its own
        Box::pin(self.park_halted(run)).await
    }

    /// Resumes a halted run with the answer to its pending request ([contract section 4](crate::contract)).
    ///
    /// The halted call is resolved first (on `ok`, the same tool runs again with the same
    /// arguments and `ctx.answer`; on `ok: false` or past `expiresAt`, the model reads
    /// `declined/expired: <prompt>`), then the later calls of the halted turn: their finished
    /// results enter the transcript, and a call that had suspended too surfaces with the
    /// request it was first made with (same id; the run halts on it again, or `wait_for` is
    /// asked), never run again before its own answer arrives. Then the loop goes on. No user turn is added; the run keeps its model id and
    /// transcript (the record's system message, not this client's). `max_turns` counts the
    /// run's turns from its start.
    ///
    /// The record is consumed: a record is single-use (the halted call runs at most once
    /// more). A copy of it persisted elsewhere is still a valid record, so a host that keeps
    /// records outside a store deletes or marks the copy atomically *before* resuming (see
    /// [`PendingRun`'s single-use section](PendingRun#single-use)); the result keeps the run's
    /// [`run_id`](RunResult::run_id), and a result that halts again becomes the next record.
    ///
    /// # Errors
    ///
    /// [`Error::AnswerMismatch`] naming both ids when the
    /// answer does not echo the pending id (nothing ran; the record is handed back:
    /// [`Error::into_pending_run`]);
    /// [`Error::Persist`] for a record that disagrees with itself;
    /// then as [`Client::run`].
    pub async fn resume(
        &self,
        run: PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        self.resume_inner(run, (answer, Vec::new()), None, toolkit, None, None)
            .await
    }

    /// As [`Client::resume`], streaming into `sink` (see [`Client::stream`]).
    ///
    /// # Errors
    ///
    /// As [`Client::resume`] and [`Client::stream`].
    pub async fn stream_resume<F>(
        &self,
        run: PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
        sink: F,
    ) -> Result<RunResult>
    where
        F: Fn(&Event) + Send + Sync,
    {
        self.resume_inner(run, (answer, Vec::new()), None, toolkit, Some(&sink), None)
            .await
    }

    /// Goes on with a run from its checkpoint: the [`RunResult`] an error carried
    /// ([`Error::halted_run`], status incomplete), as it was or read back from its JSON.
    ///
    /// The loop goes on with the next model call, with the checkpoint's transcript (no user
    /// turn is added; the run keeps its id and model id, `max_turns` counts from the run's
    /// start). No tool whose result is recorded runs again. A run that stopped at
    /// `max_turns` may go on too (with a client allowing more turns).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use toolnexus::{Client, FnTool, Reply, RunStatus, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ran = Arc::new(AtomicU32::new(0));
    /// let counter = ran.clone();
    /// let send = FnTool::builder("send")
    ///     .description("Sends.")
    ///     .handler(move |_args, _ctx| {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///         async { ToolResult::success("sent") }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let toolkit = Toolkit::builder().tool(send).build().unwrap();
    /// // the tool runs, then the next model call fails (the script has nothing left)
    /// let flaky = Client::builder(ScriptedModel::new([Reply::tool_call("send", "{}")]))
    ///     .model_name("m")
    ///     .build()
    ///     .unwrap();
    /// let err = flaky.run("send it", &toolkit).await.unwrap_err();
    /// let checkpoint = err.into_halted_run().unwrap();
    /// assert_eq!(checkpoint.status, RunStatus::Incomplete);
    /// // persisted and read back, in this process or another
    /// let json = serde_json::to_string(&checkpoint).unwrap();
    /// let checkpoint = serde_json::from_str(&json).unwrap();
    ///
    /// let healthy = Client::builder(ScriptedModel::new([Reply::text("done")]))
    ///     .model_name("m")
    ///     .build()
    ///     .unwrap();
    /// let result = healthy.resume_checkpoint(checkpoint, &toolkit).await.unwrap();
    /// assert_eq!(result.status, RunStatus::Done);
    /// assert_eq!(ran.load(Ordering::SeqCst), 1); // the tool ran once
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Persist`] naming what is wrong when `run` is not a checkpoint: not incomplete
    /// (a pending run resumes with its answer, [`Client::resume`]), a pending request, a tool
    /// call without exactly one result, or a transcript that ends with the model's answer.
    /// Nothing runs then. Otherwise as [`Client::run`].
    pub async fn resume_checkpoint(&self, run: RunResult, toolkit: &Toolkit) -> Result<RunResult> {
        self.resume_checkpoint_inner(run, toolkit, None, self.remembering())
            .await
    }

    /// As [`Client::resume_checkpoint`], streaming into `sink` (see [`Client::stream`]).
    ///
    /// # Errors
    ///
    /// As [`Client::resume_checkpoint`] and [`Client::stream`].
    pub async fn stream_resume_checkpoint<F>(
        &self,
        run: RunResult,
        toolkit: &Toolkit,
        sink: F,
    ) -> Result<RunResult>
    where
        F: Fn(&Event) + Send + Sync,
    {
        self.resume_checkpoint_inner(run, toolkit, Some(&sink), self.remembering())
            .await
    }

    /// Resumes `run` with `answer`, as `claim` of a run store holds them (`None`: the answer
    /// arrives now, and a request past its `expiresAt` reads as expired; with a claim, it
    /// counts from when the store recorded it, and the record is not checked again when the
    /// store checked it as it read it); `remembering`: the claim's (else the client's
    /// store's, with the run's conversation when the store has it waiting on the run).
    async fn resume_inner<'a>(
        &'a self,
        run: PendingRun,
        // the answer to the pending request, and a together turn's answers to its others
        (answer, others): (Answer, Vec<Answer>),
        claim: Option<&crate::store::Claim>,
        toolkit: &'a Toolkit,
        sink: Option<Sink<'a>>,
        remembering: Option<Remembering<'a>>,
    ) -> Result<RunResult> {
        let answered_at = claim.and_then(|claim| claim.answered_at_of(0));
        let deadline = claim.and_then(|claim| claim.deadline);
        let checked = claim
            .and_then(|claim| claim.checked.as_ref())
            .and_then(|checked| checked.of_record(&run));
        if answer.id != run.pending().id {
            return Err(Error::AnswerMismatch {
                expected: run.pending().id.clone(),
                got: answer.id,
                run: Box::new(run),
            });
        }
        let remembering = remembering.unwrap_or_else(|| self.remembering());
        // the run keeps the agent (and conversation) its record names, whatever this client's
        // name: the fingerprints of the halted turn's later calls were taken with them
        let (mut state, resume) = Resume::start(run, answer, answered_at, toolkit, checked)?;
        let resume = resume.with_deadline(deadline);
        // a together turn's answers to its later requests, each resolving its call in turn
        state.answers = store::arrivals(others, claim);
        self.drive(
            state,
            toolkit,
            sink,
            sink.is_some(),
            Some(resume),
            remembering,
        )
        .await
    }

    async fn resume_checkpoint_inner<'a>(
        &'a self,
        run: RunResult,
        toolkit: &'a Toolkit,
        sink: Option<Sink<'a>>,
        remembering: Remembering<'a>,
    ) -> Result<RunResult> {
        crate::run::check_checkpoint(&run)?;
        let mut state = State::from_run(run, toolkit);
        state.agent.clone_from(&self.inner.agent_name);
        state.conversation.clone_from(&self.inner.conversation);
        state.principal.clone_from(&self.inner.principal);
        self.drive(state, toolkit, sink, sink.is_some(), None, remembering)
            .await
    }

    /// What a run of this client starts from for [remembered decisions](crate::remember):
    /// the client's store (the run's conversation and principal are its state's).
    fn remembering(&self) -> Remembering<'_> {
        Remembering {
            store: self.inner.store.as_deref(),
            ..Remembering::default()
        }
    }
}
