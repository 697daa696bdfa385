//! The turn loop and the tool phase: call the model, run the tool calls of its turn
//! (concurrently, results in call order), feed the results back, until the model answers
//! without tool calls or `max_turns` is reached ([contract section 3](crate::contract)).

use crate::limits::excerpt;
use crate::toolkit::enforce_trust_boundary;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::builder::Config;
use super::halt::{finish, halt};
use super::resume::Resume;
use super::trace;
use super::wait::{Parked, Stop};
use super::{BeforeTool, Client, Event, Limit, Metric, RunResult, RunStatus, Sink, ToolCallRecord};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::{Message, ModelRequest, ModelTurn, Role, ToolCall, Usage};
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::run::{self, MAX_JSON_DEPTH};
use crate::toolkit::Toolkit;
use crate::util::json_kind;

/// The run so far: what the model is sent next, the tool calls recorded, the usage, the
/// turns taken and the latest text.
pub(super) struct State {
    /// The run's id (`run-<ms>-<counter>-<random>`), kept across halts and resumes.
    pub(super) run_id: String,
    pub(super) request: ModelRequest,
    pub(super) records: Vec<ToolCallRecord>,
    pub(super) usage: Usage,
    pub(super) turns: u32,
    pub(super) text: String,
    /// Whether a tool result entered the state in this call (an error then carries the
    /// checkpoint, see `checkpoint.rs`).
    pub(super) ran: bool,
}

impl State {
    /// The state a run goes on from: `run`'s id, model, transcript, records, usage and turns
    /// (a fresh run's start, a halted run's record, a checkpoint), sent with the toolkit's
    /// tools. The one place a state is made.
    pub(super) fn from_run(run: RunResult, toolkit: &Toolkit) -> Self {
        Self {
            run_id: run.run_id,
            request: ModelRequest::new(run.model, run.messages, toolkit.specs()),
            records: run.tool_calls,
            usage: run.usage,
            turns: run.turns,
            text: String::new(),
            ran: false,
        }
    }
}

/// One tool call's execution: the arguments it ran with, its result, how long it took.
pub(super) struct Exec {
    pub(super) args: Value,
    pub(super) result: ToolResult,
    pub(super) duration: Duration,
}

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
}

impl Client {
    pub(super) fn fresh_state(
        &self,
        mut history: Vec<Message>,
        prompt: String,
        toolkit: &Toolkit,
    ) -> State {
        if let Some(system) = &self.inner.system
            && history.first().is_none_or(|m| m.role != Role::System)
        {
            history.insert(0, Message::system(system.clone()));
        }
        history.push(Message::user(prompt));
        State::from_run(
            RunResult::start(self.inner.model_name.clone(), history),
            toolkit,
        )
    }

    /// The run, in one box: its state and the future that drives it (a caller's future holds
    /// a pointer, and the state is not moved into a second place).
    pub(super) fn drive<'a>(
        &'a self,
        mut state: State,
        toolkit: &'a Toolkit,
        sink: Option<Sink<'a>>,
        streaming: bool,
        resume: Option<Box<Resume>>,
    ) -> crate::tool::BoxFuture<'a, Result<RunResult>> {
        Box::pin(async move {
            // the run stops: after a tool result entered its state, the error carries it
            self.drive_state(&mut state, toolkit, sink, streaming, resume)
                .await
                .map_err(|error| super::halt::attach(error, &mut state))
        })
    }

    async fn drive_state(
        &self,
        state: &mut State,
        toolkit: &Toolkit,
        sink: Option<Sink<'_>>,
        streaming: bool,
        resume: Option<Box<Resume>>,
    ) -> Result<RunResult> {
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
                if let Some(stop) = Box::pin(self.resume_turn(state, resume)).await? {
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
            let calls: Vec<ToolCall> = tool_calls
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
            let Some(request) = exec.result.pending() else {
                self.tool_metric(call, exec.duration, exec.result.is_error, false);
                self.record(st, call, exec.args, exec.result);
                continue;
            };
            self.tool_metric(call, exec.duration, false, true);
            trace::pending(call, request);
            self.emit(|| Event::Pending {
                request: request.clone(),
            });
            let request = request.clone();
            if self.client.wait_for.is_some() {
                let mut rest: Vec<Exec> = execs.map(|(_, e)| e).collect();
                rest.shrink_to_fit(); // collected in place: it would keep the whole turn's room
                let parked = Parked::new(index, call, exec, request, rest);
                return Ok(Some(Stop::Parked(Box::new(parked))));
            }
            let rest = execs
                .map(|(k, e)| Some(e.defer(&calls[start + k])))
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
    async fn execute_call(&self, call: &ToolCall) -> Exec {
        let span = trace::tool_span(call);
        let exec = self.execute_call_inner(call).instrument(span.clone()).await;
        trace::tool_finished(&span, &exec.result);
        exec
    }

    /// One call: unknown tool, unreadable arguments, `before_tool`, then the tool.
    async fn execute_call_inner(&self, call: &ToolCall) -> Exec {
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
                BeforeTool::Return(result) => {
                    return done(Value::Object(args), enforce_trust_boundary(result));
                }
            }
        }
        // the client's approval policies: the first prompt suspends the call before it runs
        let prompt = self
            .client
            .approval
            .iter()
            .find_map(|policy| policy(tool.as_ref(), &args));
        if let Some(prompt) = prompt {
            let suspension = ToolResult::suspended(Request::approval(prompt));
            return done(Value::Object(args), suspension);
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
    pub(super) async fn resolve(
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
            let span = trace::tool_span(call);
            let retry = self
                .toolkit
                .execute(&call.name, args.clone(), &ctx)
                .instrument(span.clone())
                .await;
            trace::tool_finished(&span, &retry);
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
}

/// The model's arguments as an object, or the failure that tells the model what is wrong:
/// `invalid arguments for <tool>: not valid JSON: <serde message>` or `... expected a JSON
/// object, got <kind>`, or `... nested more than 128 levels deep`. `null` and an empty string
/// read as `{}`.
fn parse_arguments(tool: &str, arguments: &Value) -> Result<Map<String, Value>, ToolResult> {
    // what the loop accepts it can persist and read back (see `MAX_JSON_DEPTH`)
    let too_deep = match arguments {
        Value::String(s) => run::deeper_than(s, MAX_JSON_DEPTH).is_some(),
        other => run::depth(other) > MAX_JSON_DEPTH,
    };
    if too_deep {
        return Err(ToolResult::error(format!(
            "invalid arguments for {tool}: nested more than {MAX_JSON_DEPTH} levels deep"
        )));
    }
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
        Value::String(s) => match run::parse_checked(s) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(not_object(&other)),
            Err(e) => Err(ToolResult::error(format!(
                "invalid arguments for {tool}: not valid JSON: {e}"
            ))),
        },
        other => Err(not_object(other)),
    }
}
