//! In-process answers: what a `wait_for` function may return, and waiting for it under the
//! run's timeout and cancellation without losing the request.
//!
//! A call that suspends parks the run: the turn's future is dropped and only the request, the
//! call's execution and the rest of its turn are kept ([`Parked`]) while `wait_for` waits; the
//! answer then goes on from there (the same order of results, events and retries as if the
//! turn had waited in place).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use tokio_util::sync::WaitForCancellationFuture;

use super::state::{Exec, State, finish, halt};
use super::{RunResult, RunStatus};
use crate::error::{Error, Result};
use crate::model::{Role, ToolCall};
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::util::panic_message;

/// What a `wait_for` function may return: an [`Answer`], or a `Result` of one whose error is
/// the host's failure (the run then ends with [`Error::WaitFor`](crate::error::Error::WaitFor), the request still pending).
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

/// How a piece of a run's work stops: the run ended (finished, or halted on a suspension
/// without `wait_for`), or a call suspended and `wait_for` is to answer it.
pub(super) enum Stop {
    /// The run's result (boxed: a future that awaits a `Stop` keeps room for one).
    Done(Box<RunResult>),
    /// The parked call: the future that ran the turn is dropped while `wait_for` waits.
    Parked(Box<Parked>),
}

/// A call parked on its suspension while `wait_for` waits: what is kept of its turn (the run's
/// state keeps the rest; the turn's calls are its last assistant message's).
pub(super) struct Parked {
    /// The call's position in its turn.
    pub(super) index: usize,
    /// The arguments it ran with, unless they are the call's own (the usual case: no hook
    /// rewrote them, the model sent an object).
    pub(super) args: Option<Box<serde_json::Value>>,
    /// How long it ran.
    pub(super) duration: std::time::Duration,
    /// Its result without the request, when it is not the plain suspension on the request
    /// (as [`ToolResult::suspended`] makes it; made again on a halt).
    pub(super) result: Option<Box<ToolResult>>,
    /// The request the call suspended on.
    pub(super) request: Box<Request>,
    /// The executions of the later calls of the turn, in call order.
    pub(super) rest: Vec<Exec>,
    /// The other requests of a together turn ([`ClientBuilder::questions_together`](super::ClientBuilder::questions_together)),
    /// in call order: `wait_for` is asked each before the turn goes on.
    pub(super) others: Vec<Request>,
}

impl Parked {
    /// Parks the suspended call `index` on `request` (its result's copy is dropped while it
    /// waits).
    pub(super) fn new(
        index: usize,
        call: &ToolCall,
        exec: Exec,
        request: Request,
        rest: Vec<Exec>,
    ) -> Self {
        let Exec {
            args,
            mut result,
            duration,
        } = exec;
        if let Some(metadata) = result.metadata.as_mut() {
            metadata.pending = None;
        }
        let plain = result.is_error
            && result.parts.is_empty()
            && result.metadata.as_ref().is_some_and(|m| m.extra.is_empty())
            && result.output == request.display_output();
        Self {
            index,
            args: (args != call.arguments).then(|| Box::new(args)),
            duration,
            result: (!plain).then(|| Box::new(result)),
            request: Box::new(request),
            rest,
            others: Vec::new(),
        }
    }

    /// The arguments the call ran with.
    pub(super) fn args(args: Option<Box<serde_json::Value>>, call: &ToolCall) -> serde_json::Value {
        args.map_or_else(|| call.arguments.clone(), |args| *args)
    }

    /// The call's execution as it was, with its request.
    fn into_exec(self, call: &ToolCall) -> (usize, Exec, Request, Vec<Exec>) {
        let request = *self.request;
        let mut result = match self.result {
            Some(result) => *result,
            None => ToolResult {
                output: request.display_output(),
                is_error: true,
                metadata: Some(Box::default()),
                parts: Vec::new(),
            },
        };
        if let Some(metadata) = result.metadata.as_mut() {
            metadata.pending = Some(Box::new(request.clone()));
        }
        let exec = Exec {
            args: Self::args(self.args, call),
            result,
            duration: self.duration,
        };
        (self.index, exec, request, self.rest)
    }

    /// `wait_for` gave no answer (`message` says why): the run halts on the parked call's
    /// request ([`Error::WaitFor`], the halted run in the error), the rest of its turn kept.
    pub(super) fn fail(self, st: &mut State, message: String) -> Error {
        let calls = turn_calls(st);
        let request_id = self.request.id.clone();
        let Some(call) = calls.get(self.index) else {
            return Error::WaitFor {
                request_id,
                message,
                run: Box::new(finish(st, RunStatus::Incomplete, None)),
            };
        };
        let (index, exec, request, rest) = self.into_exec(call);
        let rest = rest
            .into_iter()
            .zip(calls.iter().skip(index + 1))
            .map(|(e, call)| Some(e.defer(st, call)))
            .collect();
        let run = halt(st, call, index, exec, request, rest);
        Error::WaitFor {
            request_id,
            message,
            run: Box::new(run),
        }
    }
}

/// The failure of a `wait_for` that panicked.
pub(super) fn panicked(panic: &Box<dyn Any + Send>) -> String {
    format!("wait_for panicked: {}", panic_message(&**panic))
}

/// Whether the run's cancellation fired (never, for a run without a token).
pub(super) fn fired(cancelled: &mut Cancelled<'_>, cx: &mut std::task::Context<'_>) -> bool {
    cancelled
        .as_mut()
        .is_some_and(|cancelled| cancelled.as_mut().poll(cx).is_ready())
}

/// The run's cancellation, boxed: only a run with a token pays for its future (a parked run
/// keeps it while it waits).
pub(super) type Cancelled<'a> = Option<Pin<Box<WaitForCancellationFuture<'a>>>>;

/// The tool calls of the state's current turn (its last assistant message with tool calls).
pub(super) fn turn_calls(st: &State) -> Vec<ToolCall> {
    st.request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        .map(|m| m.tool_calls.clone())
        .unwrap_or_default()
}
