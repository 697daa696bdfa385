//! [`ClientBuilder`]: every option of a [`Client`], held in one private [`Config`] that
//! `build` checks and hands to the client.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

use super::hooks::Hooks;
use super::wait::IntoAnswer;
use super::{
    ApprovalFn, BeforeTool, Client, DEFAULT_MAX_TURNS, Event, EventFn, Metric, MetricFn, WaitForFn,
};
use crate::error::{Error, Result};
use crate::model::{Model, ModelRequest, ModelTurn, ToolCall};
use crate::request::Request;
use crate::result::ToolResult;
use crate::store::RunStore;

/// Builds a [`Client`]; see [`Client::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct ClientBuilder {
    pub(super) config: Config,
}

/// Every option of a [`Client`], declared once: the builder fills it, `build` checks it and
/// the client keeps it.
#[derive(Clone)]
pub(super) struct Config {
    pub(super) model: Arc<dyn Model>,
    /// Empty until set; `build` takes the model's [`Model::default_model`] then, and refuses
    /// a client with neither.
    pub(super) model_name: String,
    pub(super) system: Option<String>,
    pub(super) max_turns: u32,
    pub(super) wait_for: Option<WaitForFn>,
    /// Consulted in order before each call; the first prompt asks for approval.
    pub(super) approval: Vec<ApprovalFn>,
    pub(super) hooks: Hooks,
    pub(super) on_event: Option<EventFn>,
    pub(super) on_metric: Option<MetricFn>,
    pub(super) timeout: Option<Duration>,
    pub(super) tool_timeout: Option<Duration>,
    pub(super) cancel: Option<CancellationToken>,
    /// Where halted runs park themselves ([`ClientBuilder::store`]).
    pub(super) store: Option<Arc<dyn RunStore>>,
    /// Where a claimed run's checkpoints go while [`Client::resume_claim`] resumes it.
    pub(super) checkpoints: Option<super::store::Checkpoints>,
    /// The agent's name ([`ClientBuilder::agent_name`]).
    pub(super) agent_name: Option<String>,
    /// The conversation a run taken over from its checkpoint is a turn of (set by
    /// [`Client::resume_claim`] from the claimed record; no builder option).
    pub(super) conversation: Option<String>,
    /// Who the runs of this client are for ([`Client::for_principal`]).
    pub(super) principal: Option<String>,
    /// Why the runs of this client are refused before they start (a principal over
    /// [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES) given to [`Client::for_principal`]).
    pub(super) refused: Option<String>,
    /// Whether a turn's questions park together ([`ClientBuilder::questions_together`]).
    pub(super) questions_together: bool,
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
                approval: Vec::new(),
                hooks: Hooks::default(),
                on_event: None,
                on_metric: None,
                timeout: None,
                tool_timeout: None,
                cancel: None,
                store: None,
                checkpoints: None,
                agent_name: None,
                conversation: None,
                principal: None,
                refused: None,
                questions_together: false,
            },
        }
    }

    /// The model id sent with every request. Without it the client sends the model's own
    /// default ([`Model::default_model`]: an [`HttpProvider`] built with `.model(..)`); a
    /// client with neither fails to build.
    ///
    #[cfg_attr(feature = "http", doc = "[`HttpProvider`]: crate::HttpProvider")]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[`HttpProvider`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProvider.html"
    )]
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.config.model_name = name.into();
        self
    }

    /// Names the agent whose runs this client starts (`"expense-bot"`): a person answering
    /// one of its requests sees who is asking. The name is kept in the record of every run
    /// that halts ([`PendingRun::agent`](crate::PendingRun::agent)), bound by its fingerprint
    /// (and sealed with it when the store seals), so it survives a restart and shows for runs
    /// parked by other processes. A run keeps the name it started with (or none) wherever it
    /// is resumed, whatever the resuming client's name. An empty name is no name; one longer
    /// than [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES) (256) makes
    /// [`build`](ClientBuilder::build) fail with [`Error::Config`].
    ///
    /// ```
    /// use toolnexus::{Client, FnTool, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let approve = FnTool::builder("book").description("Books an expense.")
    ///     .handler(|_, ctx| async move {
    ///         if ctx.answer().is_none() {
    ///             return ToolResult::suspended(Request::approval("Book 42 EUR?"));
    ///         }
    ///         ToolResult::success("booked")
    ///     })
    ///     .build().unwrap();
    /// let toolkit = Toolkit::builder().tool(approve).build().unwrap();
    /// let client = Client::builder(ScriptedModel::new([Reply::tool_call("book", serde_json::json!({}))]))
    ///     .model_name("m")
    ///     .agent_name("expense-bot")
    ///     .build()
    ///     .unwrap();
    /// let halted = client.run("book it", &toolkit).await.unwrap();
    /// let record = PendingRun::try_from(halted).unwrap();
    /// assert_eq!(record.agent(), Some("expense-bot"));
    /// # });
    /// ```
    pub fn agent_name(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.config.agent_name = (!name.trim().is_empty()).then_some(name);
        self
    }

    /// The system prompt: the first message of every new run's transcript.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.config.system = Some(prompt.into());
        self
    }

    /// The most model round trips per run (default [`DEFAULT_MAX_TURNS`]); a run that reaches
    /// it ends [`RunStatus::Incomplete`](crate::run::RunStatus::Incomplete) with [`Limit::MaxTurns`](crate::run::Limit::MaxTurns).
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
    #[allow(clippy::redundant_closure_for_method_calls)] // see `map` below
    pub fn wait_for<F, Fut, A>(mut self, f: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = A> + Send + 'static,
        A: IntoAnswer,
    {
        // `map`, not an async block: the host's future is stored once, not twice (a closure,
        // not the method's path, which would need `A: 'static`)
        self.config.wait_for = Some(Arc::new(move |req| {
            Box::pin(f(req).map(|answer| answer.into_answer()))
        }));
        self
    }

    /// Asks for approval before running any tool whose [`annotations`](crate::Tool::annotations)
    /// say it is destructive (`destructive == Some(true)`; a tool that says nothing is not
    /// asked about), with the prompt `` Run the destructive tool `<name>` with <arguments>? ``.
    ///
    /// The call then suspends with an `approval` request before the tool runs, and the loop
    /// rule applies as to any suspension: with [`wait_for`](Self::wait_for) an accepted answer
    /// runs the tool once (with the answer in its context) and a declined one feeds back
    /// `declined/expired: <prompt>`; without it the run halts and resumes durably.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Client, FnTool, Reply, RunStatus, ScriptedModel, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let rm = FnTool::builder("rm").description("Deletes a file.").destructive()
    ///     .handler(|_, _| async { "deleted" }).build().unwrap();
    /// let toolkit = Toolkit::builder().tool(rm).build().unwrap();
    /// let model = ScriptedModel::new([Reply::tool_call("rm", json!({"path": "/tmp/x"}))]);
    /// let client = Client::builder(model).model_name("m").approve_destructive().build().unwrap();
    /// let result = client.run("clean up", &toolkit).await.unwrap();
    /// assert_eq!(result.status, RunStatus::Pending);
    /// assert_eq!(result.text, r#"Run the destructive tool `rm` with {"path":"/tmp/x"}?"#);
    /// # });
    /// ```
    pub fn approve_destructive(self) -> Self {
        self.approval_policy(|tool, args| {
            tool.annotations().is_destructive().then(|| {
                format!(
                    "Run the destructive tool `{}` with {}?",
                    tool.name(),
                    serde_json::Value::Object(args.clone())
                )
            })
        })
    }

    /// A client-wide approval policy, for tools the host did not write: before each call
    /// (after [`before_tool`](Self::before_tool)), `policy` sees the tool and the arguments
    /// and returns the prompt to ask for approval with, or `None` to run the call as it is.
    /// Several policies (and [`approve_destructive`](Self::approve_destructive)) are consulted
    /// in the order they were added; the first prompt wins.
    ///
    /// A prompt makes the call suspend with an `approval` request instead of running; the loop
    /// rule then applies as to any suspension (see
    /// [`approve_destructive`](Self::approve_destructive)). The retry after an accepted
    /// answer is not asked about again.
    pub fn approval_policy<F>(mut self, policy: F) -> Self
    where
        F: Fn(&dyn crate::Tool, &serde_json::Map<String, serde_json::Value>) -> Option<String>
            + Send
            + Sync
            + 'static,
    {
        self.config.approval.push(Arc::new(policy));
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

    /// A turn's questions together (this port's extension; off by default, when the run halts
    /// on the first suspension of a turn in tool-call order, the family's rule): when one model
    /// turn makes several calls that suspend, every call of the turn runs, and the run parks
    /// with every request the turn made ([`RunResult::pending`](crate::RunResult::pending) is
    /// still the first, [`RunResult::pending_all`](crate::RunResult::pending_all) the full
    /// list). Their answers may come in any order ([`Client::resume_all`], or a
    /// [`RunStore`]'s `submit` one at a time); the run goes on once every request of the turn
    /// has its answer. With [`wait_for`](Self::wait_for), every request of the turn is asked
    /// (each [`Event::Pending`] emitted first) before the turn goes on.
    ///
    /// A turn that asks a governed approval (several approvers, not by the requester, a group,
    /// an escalation: [`Request::with_approvals`](crate::Request::with_approvals)) parks the
    /// family's way, on its first request, and surfaces the others one at a time: a store
    /// counts votes and checks the requester and the group of the request a run waits on.
    ///
    /// ```
    /// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pay = FnTool::builder("pay").description("Pays.")
    ///     .handler(|args, ctx| async move {
    ///         match ctx.answer() {
    ///             Some(_) => ToolResult::success(format!("paid {}", args["to"])),
    ///             None => ToolResult::suspended(Request::approval(format!("Pay {}?", args["to"]))),
    ///         }
    ///     })
    ///     .build().unwrap();
    /// let toolkit = Toolkit::builder().tool(pay).build().unwrap();
    /// let turn = Reply::tool_call("pay", serde_json::json!({"to": "ada"}))
    ///     .with_call("pay", serde_json::json!({"to": "bob"}));
    /// let client = Client::builder(ScriptedModel::new([turn, Reply::text("done")]))
    ///     .model_name("m")
    ///     .questions_together(true)
    ///     .build().unwrap();
    /// let halted = client.run("pay both", &toolkit).await.unwrap();
    /// assert_eq!(halted.pending_all.len(), 2);
    /// let record = toolnexus::PendingRun::try_from(&halted).unwrap();
    /// // answered in any order
    /// let answers = vec![halted.pending_all[1].accept(true), halted.pending_all[0].accept(true)];
    /// let done = client.resume_all(record, answers, &toolkit).await.unwrap();
    /// assert_eq!(done.text, "done");
    /// assert_eq!(done.tool_calls[0].output, "paid \"ada\"");
    /// assert_eq!(done.tool_calls[1].output, "paid \"bob\"");
    /// # });
    /// ```
    pub fn questions_together(mut self, on: bool) -> Self {
        self.config.questions_together = on;
        self
    }

    /// Cancelling `token` ends every run of this client with [`Error::Cancelled`] (with
    /// [`Error::WaitFor`], carrying the halted run, when `wait_for` is waiting); tool calls
    /// see it through [`Context::cancellation`](crate::context::Context::cancellation).
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.config.cancel = Some(token);
        self
    }

    /// Parks every run that halts in a [`RunStore`]: [`Client::run`],
    /// [`Client::run_with_history`] and [`Client::stream`] park a pending result (and the run
    /// an [`Error::WaitFor`] carries) before returning it, so the host only shows
    /// `result.pending` to a human and later hands the answer to [`Client::answer`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolnexus::store::{MemoryStore, RunState, RunStore};
    /// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ask = FnTool::builder("ask").description("Asks.")
    ///     .handler(|_, ctx| async move {
    ///         match ctx.answer_data::<String>() {
    ///             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
    ///             _ => ToolResult::suspended(Request::input("Your name?")),
    ///         }
    ///     })
    ///     .build().unwrap();
    /// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    /// let store = Arc::new(MemoryStore::new());
    /// let script = [Reply::tool_call("ask", serde_json::json!({})), Reply::text("done")];
    /// let client = Client::builder(ScriptedModel::new(script))
    ///     .model_name("m")
    ///     .store(store.clone())
    ///     .build()
    ///     .unwrap();
    ///
    /// let halted = client.run("greet me", &toolkit).await.unwrap();
    /// let request = halted.pending.unwrap();
    /// let parked = store.get_by_request(&request.id).await.unwrap().unwrap();
    /// assert_eq!(parked.info.state, RunState::Parked);
    ///
    /// // the human answers, maybe in another process: one call claims, resumes and records
    /// let done = client.answer(request.accept("Ada"), &toolkit).await.unwrap();
    /// assert_eq!(done.text, "done");
    /// let stored = store.get(&parked.info.run_id).await.unwrap().unwrap();
    /// assert_eq!(stored.info.state, RunState::Finished);
    ///
    /// // the same answer twice resumes nothing
    /// let again = client.answer(request.accept("Ada"), &toolkit).await;
    /// assert!(matches!(again, Err(toolnexus::Error::Store(_))));
    /// # });
    /// ```
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.config.store = Some(store);
        self
    }

    /// Finishes the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] without a model name (neither [`model_name`](Self::model_name) nor
    /// the model's [`default_model`](Model::default_model)), with `max_turns` 0, or with an
    /// [`agent_name`](Self::agent_name) longer than
    /// [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES).
    pub fn build(self) -> Result<Client> {
        let mut config = self.config;
        if config.model_name.is_empty() {
            match config.model.default_model().filter(|m| !m.is_empty()) {
                Some(default) => default.clone_into(&mut config.model_name),
                None => {
                    return Err(Error::Config(
                        "a client needs a model name: call `.model_name(..)` (any label for an in-process model), or build the provider with `.model(..)`"
                            .to_owned(),
                    ));
                }
            }
        }
        if let Some(name) = &config.agent_name {
            crate::limits::check_name("the agent name", name).map_err(Error::Config)?;
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
