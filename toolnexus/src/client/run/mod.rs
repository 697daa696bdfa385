//! The turn loop: call the model, run the tool calls of its turn (concurrently, results in
//! call order), feed the results back, until the model answers without tool calls or
//! `max_turns` is reached ([contract section 3](crate::contract)).
//!
//! [`Run`] is one run in progress. Its work is in three files: here the run's drive (timeout,
//! cancellation, parking for `wait_for`) and the model turns; `tools.rs` the tool phase
//! (execute, `before_tool`, resolve an answer, record a result); `resume.rs` what a turn
//! resumes from (an answer that arrived, a halted run's resume, `wait_for`'s wait, going on
//! after it, checkpoints). The state a run works on, and how that becomes a result, is
//! `state.rs`.

mod resume;
mod tools;

pub(super) use resume::{Arrived, Resume};
use tools::refuse_too_deep;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::builder::Config;
use super::remember::Remembering;
use super::state::{State, attach, finish};
use super::trace;
use super::wait::{Parked, Stop};
use super::{Client, Event, Limit, Metric, RunResult, RunStatus, Sink};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::{Message, ModelRequest, ModelTurn, ToolCall};
use crate::run;
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
    /// Where remembered decisions are checked and kept; `None` for a run without a store (it
    /// has no rules, and a parked run keeps a pointer, not the whole `Remembering`).
    pub(super) remembering: Option<Box<Remembering<'a>>>,
}

impl Client {
    /// The run, in one box: its state and the future that drives it (a caller's future holds
    /// a pointer, and the state is not moved into a second place). The [`Run`] is made here,
    /// before the box: the future keeps it once, not beside the arguments it is made from.
    pub(super) fn drive<'a>(
        &'a self,
        mut state: State,
        toolkit: &'a Toolkit,
        sink: Option<Sink<'a>>,
        streaming: bool,
        resume: Option<Box<Resume>>,
        mut remembering: Remembering<'a>,
    ) -> crate::tool::BoxFuture<'a, Result<RunResult>> {
        // the conversation the run is a turn of (kept in its records) is where its
        // conversation's rules hold
        if remembering.conversation.is_none() {
            remembering.conversation.clone_from(&state.conversation);
        }
        // whose rules hold: the principal the run is for, as its records keep it (a run
        // resumed by a client for another principal, or by a worker, stays its own)
        remembering.principal.clone_from(&state.principal);
        state.together |= self.inner.questions_together;
        let remembering = remembering.store.is_some().then(|| Box::new(remembering));
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
        Box::pin(async move {
            // a client for a principal over its bound runs nothing
            if let Some(why) = &self.inner.refused {
                return Err(Error::Config(why.clone()));
            }
            // the run stops: after a tool result entered its state, the error carries it
            run.drive(&mut state, resume)
                .await
                .map_err(|error| attach(error, &mut state))
        })
    }
}

impl Run<'_> {
    /// The run's work, step by step: parked on a suspension, it waits for `wait_for`'s
    /// answer, and goes on with it.
    async fn drive(&self, state: &mut State, resume: Option<Box<Resume>>) -> Result<RunResult> {
        let span = trace::run_span(&state.request.model, resume.is_some());
        // a cancellation ends the run, except while `wait_for` waits: then the run halts on
        // the request with Error::WaitFor, so the request is not lost (the timeout alike)
        let mut cancelled: super::wait::Cancelled<'_> = self
            .cancel
            .as_ref()
            .map(|token| Box::pin(token.cancelled()));
        let mut step = Step::Start(resume);
        let result = loop {
            // boxed: moved into `timed` and the poll below, an inline future would be stored
            // twice; and dropped, with everything the turn held, before `wait_for` waits
            let outcome = {
                let work = Box::pin(self.step(state, step).instrument(span.clone()));
                let timed = async {
                    match self.deadline {
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
                Stop::Parked(mut parked) => {
                    state.request.tools = Vec::new();
                    state.request.messages.shrink_to_fit();
                    let answer = match self.wait(&parked.request, &mut cancelled).await {
                        Ok(answer) => Box::new(answer),
                        Err(message) => return Err(parked.fail(state, message)),
                    };
                    // a together turn: each other request is asked before it goes on (boxed:
                    // a run parked on one request keeps no room for the others' waits)
                    if !parked.others.is_empty() {
                        let others = std::mem::take(&mut parked.others);
                        if let Err(message) =
                            Box::pin(self.wait_others(state, others, &mut cancelled)).await
                        {
                            return Err(parked.fail(state, message));
                        }
                    }
                    step = Step::Answered(parked, answer);
                    state.request.tools = self.toolkit.specs();
                }
            }
        };
        trace::run_finished(&span, &result);
        self.emit(|| Event::Done {
            result: result.clone(),
        });
        Ok(*result)
    }
}

impl Run<'_> {
    /// Asks `wait_for` for each other request of a together turn, in call order, keeping each
    /// answer in the run's state; the first failure's text, else nothing.
    async fn wait_others(
        &self,
        state: &mut State,
        others: Vec<crate::request::Request>,
        cancelled: &mut super::wait::Cancelled<'_>,
    ) -> std::result::Result<(), String> {
        for other in others {
            let answer = self.wait(&other, cancelled).await?;
            state.answers.push(Arrived::now(answer));
        }
        Ok(())
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
