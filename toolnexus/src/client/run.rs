//! The turn loop and the tool phase: call the model, run the tool calls of its turn
//! (concurrently, results in call order), feed the results back, until the model answers
//! without tool calls or `max_turns` is reached ([contract section 3](crate::contract)).
//!
//! [`Run`] is one run in progress, and all of its work is here: the turn loop, the tool phase,
//! the resolution of an answer, the resume of a halted turn, waiting for `wait_for` and saving
//! checkpoints. The file is longer than the crate's usual ~600 lines on purpose: one turn,
//! fresh or resumed, is followed from start to end without leaving it (the state it works on,
//! and how that becomes a result, is `state.rs`).

use crate::limits::{MAX_DEPTH, excerpt};
use crate::toolkit::enforce_trust_boundary;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime};

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::builder::Config;
use super::edit::{self, Edit};
use super::marks::{Marks, not_started, ran_with};
use super::remember::Remembering;
use super::state::{Exec, State, attach, finish, halt};
use super::trace;
use super::wait::{Cancelled, Parked, Stop, fired, panicked, turn_calls};
use super::{BeforeTool, Client, Event, Limit, Metric, RunResult, RunStatus, Sink, ToolCallRecord};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::{Message, ModelRequest, ModelTurn, ToolCall};
use crate::reconcile::KIND_RECONCILE;
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::run::{self, Halted, InFlight, PendingRun};
use crate::store::StoreError;
use crate::tool::parse_arguments;
use crate::toolkit::Toolkit;

/// One run in progress: the client's options, the toolkit, the sink and the run's own
/// cancellation and deadline.
pub(super) struct Run<'a> {
    pub(super) client: &'a Config,
    pub(super) toolkit: &'a Toolkit,
    pub(super) sink: Option<Sink<'a>>,
    /// The run's token, a child of the client's (none when the client has none: nobody
    /// could cancel the run, and a parked run does not keep a token for nothing).
    pub(super) cancel: Option<CancellationToken>,
    /// When the run's timeout elapses, and the timeout.
    pub(super) deadline: Option<(tokio::time::Instant, Duration)>,
    pub(super) streaming: bool,
    /// The run's id and the turn whose calls run now (for `ctx.idempotency_key()`).
    pub(super) id: String,
    pub(super) turn: AtomicU32,
    /// Where remembered decisions are checked and kept.
    pub(super) remembering: Remembering<'a>,
}

impl Client {
    /// The run, in one box: its state and the future that drives it (a caller's future holds
    /// a pointer, and the state is not moved into a second place).
    pub(super) fn drive<'a>(
        &'a self,
        mut state: State,
        toolkit: &'a Toolkit,
        sink: Option<Sink<'a>>,
        streaming: bool,
        resume: Option<Box<Resume>>,
        remembering: Remembering<'a>,
    ) -> crate::tool::BoxFuture<'a, Result<RunResult>> {
        Box::pin(async move {
            // a client for a principal over its bound runs nothing
            if let Some(why) = &self.inner.refused {
                return Err(Error::Config(why.clone()));
            }
            // the run stops: after a tool result entered its state, the error carries it
            self.drive_state(&mut state, toolkit, sink, streaming, resume, remembering)
                .await
                .map_err(|error| attach(error, &mut state))
        })
    }

    async fn drive_state(
        &self,
        state: &mut State,
        toolkit: &Toolkit,
        sink: Option<Sink<'_>>,
        streaming: bool,
        resume: Option<Box<Resume>>,
        mut remembering: Remembering<'_>,
    ) -> Result<RunResult> {
        // the conversation the run is a turn of (kept in its records) is where its
        // conversation's rules hold
        if remembering.conversation.is_none() {
            remembering.conversation.clone_from(&state.conversation);
        }
        // whose rules hold: the principal the run is for, as its records keep it (a run
        // resumed by a client for another principal, or by a worker, stays its own)
        remembering.principal.clone_from(&state.principal);
        let run = Run {
            client: &self.inner,
            toolkit,
            sink,
            cancel: self
                .inner
                .cancel
                .as_ref()
                .map(CancellationToken::child_token),
            deadline: self
                .inner
                .timeout
                .map(|limit| (tokio::time::Instant::now() + limit, limit)),
            streaming,
            id: state.run_id.clone(),
            turn: AtomicU32::new(state.turns),
            remembering,
        };
        let span = trace::run_span(&state.request.model, resume.is_some());
        // a cancellation ends the run, except while `wait_for` waits: then the run halts on
        // the request with Error::WaitFor, so the request is not lost (the timeout alike)
        let mut cancelled: super::wait::Cancelled<'_> =
            run.cancel.as_ref().map(|token| Box::pin(token.cancelled()));
        let mut step = Step::Start(resume);
        let result = loop {
            // boxed: moved into `timed` and the poll below, an inline future would be stored
            // twice; and dropped, with everything the turn held, before `wait_for` waits
            let outcome = {
                let work = Box::pin(run.step(state, step).instrument(span.clone()));
                let timed = async {
                    match run.deadline {
                        // boxed: only a run with a timeout pays for its timer
                        Some((at, limit)) => Box::pin(tokio::time::timeout_at(at, work))
                            .await
                            .unwrap_or(Err(Error::Timeout(limit))),
                        None => work.await,
                    }
                };
                let mut timed = std::pin::pin!(timed);
                std::future::poll_fn(|cx| {
                    if super::wait::fired(&mut cancelled, cx) {
                        return Poll::Ready(Err(Error::Cancelled));
                    }
                    timed.as_mut().poll(cx)
                })
                .await?
            };
            match outcome {
                Stop::Done(result) => break result,
                // only the request, the call's execution and the rest of its turn are kept, and
                // the transcript without the tools' specs (the toolkit's, made again after)
                Stop::Parked(parked) => {
                    state.request.tools = Vec::new();
                    state.request.messages.shrink_to_fit();
                    match run.wait(&parked, &mut cancelled).await {
                        Ok(answer) => step = Step::Answered(parked, Box::new(answer)),
                        Err(message) => return Err(parked.fail(state, message)),
                    }
                    state.request.tools = toolkit.specs();
                }
            }
        };
        trace::run_finished(&span, &result);
        run.emit(|| Event::Done {
            result: result.clone(),
        });
        Ok(*result)
    }
}

/// An answer, and when it counts as given: the request's `expiresAt` is judged against that
/// time ([`crate::suspend::resolve`]). An answer handed to the loop (`wait_for`,
/// [`Client::resume`], a remembered rule) arrives when the loop gets it; one a run store
/// recorded ([`Client::resume_claim`]) arrived when the store recorded it.
pub(super) struct Arrived {
    pub(super) answer: Answer,
    pub(super) at: SystemTime,
}

impl Arrived {
    /// `answer`, arriving now.
    pub(super) fn now(answer: Answer) -> Self {
        Self {
            answer,
            at: SystemTime::now(),
        }
    }
}

/// What a resume starts from: where the halted turn's assistant message is, the halt, the
/// pending request and its answer; or a checkpoint's turn in flight.
#[allow(clippy::large_enum_variant)] // always boxed (`Box<Resume>`)
pub(super) enum Resume {
    Answer {
        assistant_at: usize,
        halted: Halted,
        pending: Request,
        answer: Arrived,
    },
    InFlight(InFlight),
}

impl Resume {
    /// What resuming `run` with `answer` starts from, and the run's state: the record is
    /// checked against itself first (nothing runs when it disagrees). `answered_at`: when a
    /// run store recorded the answer (`None`: it arrives now).
    pub(super) fn start(
        run: PendingRun,
        answer: Answer,
        answered_at: Option<SystemTime>,
        toolkit: &Toolkit,
    ) -> Result<(State, Box<Self>)> {
        let assistant_at = run.check()?;
        let pending = run.pending().clone();
        let (result, halted) = run.into_parts();
        let (agent, conversation, principal) = (
            halted.agent.clone(),
            halted.conversation.clone(),
            halted.principal.clone(),
        );
        let answer = Arrived {
            answer,
            at: answered_at.unwrap_or_else(SystemTime::now),
        };
        let resume = Self::Answer {
            assistant_at,
            halted,
            pending,
            answer,
        };
        let mut state = State::from_run(result, toolkit);
        state.agent = agent;
        state.conversation = conversation;
        state.principal = principal;
        Ok((state, Box::new(resume)))
    }
}

/// What the next piece of a run's work starts from.
enum Step {
    /// A fresh run, or a resume of a halted one.
    Start(Option<Box<Resume>>),
    /// `wait_for`'s answer to the parked call.
    Answered(Box<Parked>, Box<crate::request::Answer>),
}

impl Run<'_> {
    /// The run's work until it ends or parks on a suspension for `wait_for`.
    async fn step(&self, state: &mut State, step: Step) -> Result<Stop> {
        match step {
            Step::Start(Some(resume)) => {
                let ended = match *resume {
                    Resume::InFlight(in_flight) => {
                        Box::pin(self.in_flight_turn(state, in_flight)).await?
                    }
                    answer @ Resume::Answer { .. } => {
                        Box::pin(self.resume_turn(state, answer)).await?
                    }
                };
                if let Some(stop) = ended {
                    return Ok(stop);
                }
            }
            Step::Start(None) => {}
            Step::Answered(parked, answer) => {
                if let Some(stop) = Box::pin(self.go_on(state, *parked, *answer)).await? {
                    return Ok(stop);
                }
            }
        }
        self.model_loop(state).await
    }

    pub(super) fn emit(&self, make: impl FnOnce() -> Event) {
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

    pub(super) fn tool_metric(
        &self,
        call: &ToolCall,
        duration: Duration,
        is_error: bool,
        pending: bool,
    ) {
        self.metric(|| Metric::Tool {
            name: call.name.clone(),
            call_id: call.id.clone(),
            duration,
            is_error,
            pending,
        });
    }

    pub(super) fn ctx(&self, call: &ToolCall) -> Context {
        let ctx = Context::new();
        let ctx = match &self.cancel {
            Some(token) => ctx.with_cancellation(token.clone()),
            None => ctx,
        };
        let ctx = ctx
            .with_call_id(call.id.clone())
            .with_idempotency_key(run::idempotency_key(
                &self.id,
                self.turn.load(Ordering::SeqCst),
                &call.id,
            ));
        let ctx = match &self.client.on_event {
            Some(on_event) => {
                let on_event = std::sync::Arc::clone(on_event);
                let (id, name) = (call.id.clone(), call.name.clone());
                ctx.with_notifier(move |notice| on_event(&tool_event(&id, &name, notice)))
            }
            None => ctx,
        };
        match self.client.tool_timeout {
            Some(limit) => ctx.with_timeout(limit),
            None => ctx,
        }
    }

    async fn model_loop(&self, st: &mut State) -> Result<Stop> {
        loop {
            if st.turns >= self.client.max_turns {
                let done = finish(st, RunStatus::Incomplete, Some(Limit::MaxTurns));
                return Ok(Stop::Done(Box::new(done)));
            }
            let started = Instant::now();
            let delivered = AtomicBool::new(false);
            let turn = match self.call_model(&st.request, &delivered).await {
                Ok(turn) => turn,
                // part of the reply was shown: the run before this turn goes with the error
                Err(error) if delivered.load(Ordering::SeqCst) => {
                    return Err(Error::Interrupted {
                        error: Box::new(error),
                        run: Box::new(finish(st, RunStatus::Incomplete, None)),
                    });
                }
                Err(error) => return Err(error),
            };
            st.turns += 1;
            self.turn.store(st.turns, Ordering::SeqCst);
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
                return Ok(Stop::Done(Box::new(finish(st, RunStatus::Done, None))));
            }
            let mut calls: Vec<ToolCall> = tool_calls
                .into_iter()
                .enumerate()
                .map(|(i, mut call)| {
                    // unique within the run, also across a resume (the turn count is kept)
                    if call.id.is_empty() {
                        call.id = format!("call_{}_{i}", st.turns);
                    }
                    call
                })
                .collect();
            // arguments nested too deeply are refused before anything copies them (an
            // in-process model can hand in a value deep enough to overflow a recursive clone)
            let pre = calls.iter_mut().map(refuse_too_deep).collect();
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
            if let Some(stop) = Box::pin(self.tool_phase(st, &calls, 0, pre)).await? {
                return Ok(stop);
            }
        }
    }

    /// One model turn; `delivered` is set once a text delta has reached the caller.
    async fn call_model(
        &self,
        request: &ModelRequest,
        delivered: &AtomicBool,
    ) -> Result<ModelTurn> {
        let span = trace::chat_span(&request.model);
        let turn = self
            .call_model_inner(request, delivered)
            .instrument(span.clone())
            .await;
        if let Ok(turn) = &turn {
            trace::chat_finished(&span, turn);
        }
        turn
    }

    async fn call_model_inner(
        &self,
        request: &ModelRequest,
        delivered: &AtomicBool,
    ) -> Result<ModelTurn> {
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
                delivered.store(true, Ordering::SeqCst);
                self.emit(|| Event::Text {
                    delta: d.to_owned(),
                });
            };
            self.client.model.complete(request, Some(&delta)).await
        } else {
            self.client.model.complete(request, None).await
        }
    }

    /// Runs `calls[start..]` (those without a result in `pre`, concurrently), then handles the
    /// results in call order. Returns the halted run when one suspends without `wait_for`, or
    /// the parked call when `wait_for` is to answer it.
    pub(super) async fn tool_phase(
        &self,
        st: &mut State,
        calls: &[ToolCall],
        start: usize,
        pre: Vec<Option<Exec>>,
    ) -> Result<Option<Stop>> {
        let todo = (0..pre.len()).filter(|&k| pre[k].is_none());
        // a claimed run marks the calls of tools that are not idempotent before they start
        let marks = todo
            .clone()
            .any(|k| self.marks(&calls[start + k].name))
            .then(|| {
                let deferred = pre
                    .iter()
                    .zip(&calls[start..])
                    .map(|(e, call)| e.as_ref().map(|e| e.deferred(st, call)))
                    .collect();
                Marks::new(st, deferred)
            });
        let fresh =
            join_all(todo.map(|k| self.execute_call(&calls[start + k], marks.as_ref()))).await;
        if let Some(error) = marks.and_then(Marks::failure) {
            return Err(error);
        }
        let mut fresh = fresh.into_iter();
        let execs: Vec<Exec> = pre
            .into_iter()
            .filter_map(|done| done.or_else(|| fresh.next()))
            .collect();
        let mut execs: std::collections::VecDeque<(usize, Exec)> =
            execs.into_iter().enumerate().collect();
        while let Some((k, exec)) = execs.pop_front() {
            let index = start + k;
            let call = &calls[index];
            let Some(request) = exec.result.pending() else {
                self.tool_metric(call, exec.duration, exec.result.is_error, false);
                self.record(st, call, exec.args, exec.result);
                continue;
            };
            // a remembered rule answers an approval without asking anyone
            if let Some(answer) = self.remembered(st, call, &exec.args, request).await {
                let request = request.clone();
                // as an answered retry: a claimed run marks a tool that is not idempotent
                let marks = self.marks(&call.name).then(|| {
                    let later = execs
                        .iter()
                        .map(|(k, e)| Some(e.deferred(st, &calls[start + k])));
                    Marks::new(st, std::iter::once(None).chain(later).collect())
                });
                let answer = Arrived::now(answer);
                let resolving =
                    self.resolve(call, exec.args, &request, answer, None, marks.as_ref());
                let (args, resolved, _) = Box::pin(resolving).await;
                if let Some(error) = marks.and_then(Marks::failure) {
                    return Err(error);
                }
                self.record(st, call, args, resolved);
                continue;
            }
            self.tool_metric(call, exec.duration, false, true);
            trace::pending(call, request);
            self.emit(|| Event::Pending {
                request: request.clone(),
            });
            let request = request.clone();
            if self.client.wait_for.is_some() {
                let mut rest: Vec<Exec> = execs.into_iter().map(|(_, e)| e).collect();
                rest.shrink_to_fit(); // collected in place: it would keep the whole turn's room
                let parked = Parked::new(index, call, exec, request, rest);
                return Ok(Some(Stop::Parked(Box::new(parked))));
            }
            let rest = execs
                .into_iter()
                .map(|(k, e)| Some(e.defer(st, &calls[start + k])))
                .collect();
            trace::halted(&request);
            let halted = halt(st, call, index, exec, request, rest);
            return Ok(Some(Stop::Done(Box::new(halted))));
        }
        // every call of the turn has its result: a claimed run saves its checkpoint
        self.save_checkpoint(st).await?;
        Ok(None)
    }

    /// One call, in its `execute_tool` span.
    async fn execute_call(&self, call: &ToolCall, marks: Option<&Marks<'_>>) -> Exec {
        let span = trace::tool_span(call);
        let exec = self
            .execute_call_inner(call, marks)
            .instrument(span.clone())
            .await;
        trace::tool_finished(&span, &exec.result);
        exec
    }

    /// One call: unknown tool, unreadable arguments, `before_tool`, then the tool (its started
    /// marker saved first, in a claimed run, when the tool is not idempotent).
    async fn execute_call_inner(&self, call: &ToolCall, marks: Option<&Marks<'_>>) -> Exec {
        let started = Instant::now();
        let done = |args: Value, result: ToolResult| Exec {
            args,
            result,
            duration: started.elapsed(),
        };
        let Some(tool) = self.toolkit.get(&call.name) else {
            let result = ToolResult::error(format!("Unknown tool: {}", excerpt(&call.name)));
            return done(call.arguments.clone(), result);
        };
        let args = match parse_arguments(&call.name, &call.arguments) {
            Ok(args) => args,
            Err(failure) => return done(call.arguments.clone(), failure),
        };
        let args = match self.before_tool(call, args).await {
            Ok(args) => args,
            Err((args, result)) => return done(args, result),
        };
        // the client's approval policies: the first prompt suspends the call before it runs
        let prompt = self
            .client
            .approval
            .iter()
            .find_map(|policy| policy(tool.as_ref(), &args));
        if let Some(prompt) = prompt {
            let request = if tool.approval_edits() {
                let schema = tool.input_schema().clone();
                Request::editable_approval(prompt, Value::Object(args.clone()), schema)
            } else {
                Request::approval(prompt)
            };
            return done(Value::Object(args), ToolResult::suspended(request));
        }
        let args = Value::Object(args);
        if let Some(marks) = marks.filter(|_| self.marks(&call.name))
            && !marks.start(self, call, &args, false, None).await
        {
            return done(args, not_started());
        }
        let result = self
            .toolkit
            .execute(&call.name, args.clone(), &self.ctx(call))
            .await;
        done(args, result)
    }

    /// The `before_tool` hook on a call's arguments (parsed, so not too deep to copy): the
    /// arguments to run with, or the arguments and the result that stands instead.
    async fn before_tool(
        &self,
        call: &ToolCall,
        args: serde_json::Map<String, Value>,
    ) -> std::result::Result<serde_json::Map<String, Value>, (Value, ToolResult)> {
        let Some(before_tool) = &self.client.hooks.before_tool else {
            return Ok(args);
        };
        let seen = ToolCall::new(
            call.id.clone(),
            call.name.clone(),
            Value::Object(args.clone()),
        );
        match before_tool(seen).await {
            BeforeTool::Continue => Ok(args),
            BeforeTool::Rewrite(rewritten) if crate::limits::too_deep_map(&rewritten) => {
                crate::limits::dismantle(Value::Object(rewritten));
                let result = ToolResult::error(format!(
                    "invalid arguments for {}: the before_tool hook's rewrite nests more than {MAX_DEPTH} levels deep",
                    excerpt(&call.name)
                ));
                Err((Value::Object(args), result))
            }
            BeforeTool::Rewrite(rewritten) => Ok(rewritten),
            BeforeTool::Return(result) => {
                Err((Value::Object(args), enforce_trust_boundary(result)))
            }
        }
    }

    /// The answer to a suspension becomes the call's result: declined or expired, or the
    /// tool's retry with the answer (a second suspension is `unresolved`). An accepted
    /// approval that carries edited arguments runs them instead, once they are checked
    /// (`edit.rs`) and passed through `before_tool` again; the arguments that ran come back
    /// with the result, and whether they are the person's edit.
    /// A `reconcile` request's answer is [`Run::reconcile`]'s. In a claimed run, a retry of a
    /// tool that is not idempotent saves its started marker first (`marks`; `ran_with` is
    /// what a reconcile suspension kept of the call it stands for).
    pub(super) async fn resolve(
        &self,
        call: &ToolCall,
        args: Value,
        request: &Request,
        answer: Arrived,
        ran_with: Option<(Request, Answer)>,
        marks: Option<&Marks<'_>>,
    ) -> (Value, ToolResult, bool) {
        if request.kind == KIND_RECONCILE {
            // every answer passes the trust boundary's walk (the others in `edit::edited`)
            if let Some(refused) = edit::boundary_refusal(request, &answer.answer) {
                return (args, edit::refused(&refused), false);
            }
            let (args, result) = self
                .reconcile(call, args, request, answer, ran_with, marks)
                .await;
            return (args, result, false);
        }
        let Arrived {
            answer,
            at: arrived,
        } = answer;
        let started = Instant::now();
        let tool = self.toolkit.get(&call.name).map(AsRef::as_ref);
        let (args, edited) = match edit::edited(tool, &call.name, request, &answer) {
            Edit::Unchanged => (args, false),
            Edit::Refused(why) => {
                let result = edit::refused(&why);
                self.tool_metric(call, started.elapsed(), true, false);
                return (args, result, false);
            }
            Edit::Args(edited) => match self.before_tool(call, edited).await {
                Ok(edited) => (Value::Object(edited), true),
                Err((edited, result)) => {
                    self.tool_metric(call, started.elapsed(), result.is_error, false);
                    return (edited, result, true);
                }
            },
        };
        // "and the same from now on": kept before the call runs, for the arguments approved
        self.keep_rule(call, &args, request, &answer, arrived).await;
        let args = &args;
        let result = crate::suspend::resolve(request, answer, arrived, |answer| async move {
            if let Some(marks) = marks.filter(|_| self.marks(&call.name)) {
                let with = Some((request.clone(), answer.clone()));
                if !marks.start(self, call, args, edited, with).await {
                    return not_started();
                }
            }
            let ctx = self
                .ctx(call)
                .with_request(request.clone())
                .with_answer(answer);
            let span = trace::tool_span(call);
            let retry = self
                .toolkit
                .execute(&call.name, args.clone(), &ctx)
                .instrument(span.clone())
                .await;
            trace::tool_finished(&span, &retry);
            retry
        })
        .await;
        self.tool_metric(call, started.elapsed(), result.is_error, false);
        (args.clone(), result, edited)
    }

    /// The transcript shows the arguments a person's edit ran with, in the call's place.
    pub(super) fn show_edited(st: &mut State, call_id: &str, args: &Value) {
        let call = st
            .request
            .messages
            .iter_mut()
            .rev()
            .flat_map(|m| m.tool_calls.iter_mut())
            .find(|c| c.id == call_id);
        if let Some(call) = call {
            call.arguments = args.clone();
        }
    }

    /// A result enters the transcript (after `after_tool`).
    pub(super) fn record(&self, st: &mut State, call: &ToolCall, args: Value, result: ToolResult) {
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
        st.request.messages.push(
            Message::tool_result(call.id.clone(), result.output.clone(), result.is_error)
                .with_parts(result.parts.clone()),
        );
        st.ran = true;
        st.records.push(ToolCallRecord {
            name: call.name.clone(),
            args,
            output: result.output,
            is_error: result.is_error,
            metadata: result.metadata,
            parts: result.parts,
        });
    }

    /// Resolves the halted call of a resumed run, then the rest of its turn.
    pub(super) async fn resume_turn(&self, st: &mut State, resume: Resume) -> Result<Option<Stop>> {
        let Resume::Answer {
            assistant_at,
            halted,
            pending,
            answer,
        } = resume
        else {
            return Ok(None);
        };
        let calls = st.request.messages[assistant_at].tool_calls.clone();
        let index = halted.call_index;
        let call = &calls[index];
        // the placeholder and the suspension's record are replaced by the resolved result;
        // the retry runs with the arguments of the suspension's record (checked against the
        // fingerprint on load)
        st.request.messages.pop();
        let (args, with) = st
            .records
            .pop()
            .map(|r| (r.args, ran_with(r.metadata.as_deref())))
            .unwrap_or_default();
        let marks = self.marks(&call.name).then(|| {
            let later = halted.deferred.iter().cloned();
            Marks::new(st, std::iter::once(None).chain(later).collect())
        });
        let resolving = self.resolve(call, args, &pending, answer, with, marks.as_ref());
        let (args, resolved, edited) = Box::pin(resolving).await;
        if let Some(error) = marks.and_then(Marks::failure) {
            return Err(error);
        }
        if edited {
            Self::show_edited(st, &call.id, &args);
        }
        self.record(st, call, args, resolved);
        let pre = halted
            .deferred
            .into_iter()
            .map(|d| d.map(Exec::from))
            .collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }

    /// The host's answer to the parked call's request, or why there is none: `wait_for`
    /// failed or panicked, answered another request, or the run's timeout or cancellation
    /// (`cancelled`) interrupted it (the caller then halts the run on the request, which stays
    /// pending: [`Parked::fail`]).
    pub(super) fn wait<'w>(
        &self,
        parked: &'w Parked,
        cancelled: &'w mut Cancelled<'_>,
    ) -> impl Future<Output = Result<Answer, String>> + 'w {
        // a plain `poll_fn` owning what it polls, not an `async fn`: a parked run keeps no
        // more than this while it waits
        let request = &*parked.request;
        let mut waiting = match &self.client.wait_for {
            Some(wait_for) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| wait_for(request.clone()))) {
                    Ok(waiting) => Ok(AssertUnwindSafe(waiting).catch_unwind()),
                    Err(panic) => Err(panicked(&panic)),
                }
            }
            None => Err("no wait_for is set".to_owned()),
        };
        // boxed: only a run with a timeout pays for its timer while parked
        let mut deadline = self
            .deadline
            .map(|(at, limit)| (Box::pin(tokio::time::sleep_until(at)), limit));
        std::future::poll_fn(move |cx| {
            let waiting = match &mut waiting {
                Ok(waiting) => waiting,
                Err(failure) => return Poll::Ready(Err(std::mem::take(failure))),
            };
            if let Poll::Ready(outcome) = waiting.poll_unpin(cx) {
                let outcome = outcome.unwrap_or_else(|panic| Err(panicked(&panic)));
                return Poll::Ready(match outcome {
                    Ok(answer) if answer.id == request.id => Ok(answer),
                    Ok(answer) => Err(format!(
                        "it answered request `{}`; an answer must echo the pending request's id",
                        answer.id
                    )),
                    Err(message) => Err(message),
                });
            }
            if fired(cancelled, cx) {
                return Poll::Ready(Err(
                    "the run was cancelled while waiting for the answer".to_owned()
                ));
            }
            if let Some((sleep, limit)) = &mut deadline
                && sleep.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Err(format!(
                    "the run timed out after {limit:?} while waiting for the answer"
                )));
            }
            Poll::Pending
        })
    }

    /// Goes on after `wait_for`'s answer: the parked call's result (resolved with the answer),
    /// then the rest of its turn.
    pub(super) async fn go_on(
        &self,
        st: &mut State,
        parked: Parked,
        answer: Answer,
    ) -> crate::error::Result<Option<Stop>> {
        let Parked {
            index,
            args,
            request,
            rest,
            result,
            ..
        } = parked;
        let calls = turn_calls(st);
        let Some(call) = calls.get(index) else {
            return Ok(None);
        };
        let args = Parked::args(args, call);
        let with = result.and_then(|r| ran_with(r.metadata.as_deref()));
        let marks = self.marks(&call.name).then(|| {
            let later = rest
                .iter()
                .zip(&calls[index + 1..])
                .map(|(e, call)| Some(e.deferred(st, call)));
            Marks::new(st, std::iter::once(None).chain(later).collect())
        });
        let answer = Arrived::now(answer);
        let resolving = self.resolve(call, args, &request, answer, with, marks.as_ref());
        let (args, resolved, edited) = Box::pin(resolving).await;
        if let Some(error) = marks.and_then(Marks::failure) {
            return Err(error);
        }
        if edited {
            Self::show_edited(st, &call.id, &args);
        }
        self.record(st, call, args, resolved);
        let pre = rest.into_iter().map(Some).collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }

    /// Saves the run's state as the claim's checkpoint, when the run is a claimed one
    /// ([`Client::resume_claim`]); waits until the store has it.
    pub(super) async fn save_checkpoint(&self, st: &mut State) -> Result<()> {
        if self.client.checkpoints.is_none() {
            return Ok(());
        }
        self.send_checkpoint(st.checkpoint()).await
    }

    /// Sends `checkpoint` to the claim's store and waits until the store has it (nothing when
    /// the run is not a claimed one).
    pub(super) async fn send_checkpoint(&self, checkpoint: Value) -> Result<()> {
        let Some(checkpoints) = &self.client.checkpoints else {
            return Ok(());
        };
        let (ack, stored) = oneshot::channel();
        let gone = || {
            Error::Store(StoreError::Backend(
                "the checkpoint writer stopped".to_owned(),
            ))
        };
        checkpoints
            .send((checkpoint, ack))
            .await
            .map_err(|_| gone())?;
        stored.await.map_err(|_| gone())??;
        Ok(())
    }
}

/// What stands in a call's place in the transcript for arguments nested deeper than
/// [`MAX_DEPTH`] levels (they are dropped, not kept).
const TOO_DEEP_ARGUMENTS: &str = "(arguments nested more than 128 levels deep, not kept)";

/// For a call whose arguments nest deeper than [`MAX_DEPTH`]: drops them without recursion,
/// puts [`TOO_DEEP_ARGUMENTS`] in their place and returns the call's failure, so it never runs
/// and nothing ever copies, prints or stores the deep value.
fn refuse_too_deep(call: &mut ToolCall) -> Option<Exec> {
    if crate::limits::depth(&call.arguments, MAX_DEPTH) <= MAX_DEPTH {
        return None;
    }
    let placeholder = Value::String(TOO_DEEP_ARGUMENTS.to_owned());
    crate::limits::dismantle(std::mem::replace(&mut call.arguments, placeholder.clone()));
    Some(Exec {
        args: placeholder,
        result: ToolResult::error(format!(
            "invalid arguments for {}: nested more than {MAX_DEPTH} levels deep",
            excerpt(&call.name)
        )),
        duration: Duration::ZERO,
    })
}

/// What a running tool said, as the run's event.
fn tool_event(id: &str, name: &str, notice: crate::context::Notice) -> Event {
    match notice {
        crate::context::Notice::Log { level, message } => Event::ToolLog {
            id: id.to_owned(),
            name: name.to_owned(),
            level,
            message,
        },
        crate::context::Notice::Progress {
            progress,
            total,
            message,
        } => Event::ToolProgress {
            id: id.to_owned(),
            name: name.to_owned(),
            progress,
            total,
            message,
        },
    }
}
