//! The tool phase of a turn: the calls run (unknown tool, arguments, `before_tool`, the
//! client's approval policies, the tool), a suspension is answered by a remembered rule, parked
//! for `wait_for` or halts the run; an answer is resolved into the call's result; a result
//! enters the transcript.

use super::{Arrived, Run};
use crate::limits::{MAX_DEPTH, excerpt};
use crate::toolkit::enforce_trust_boundary;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use tracing::Instrument as _;

use crate::client::edit::{self, Edit};
use crate::client::marks::{Marks, not_started};
use crate::client::state::{Exec, State, halt};
use crate::client::trace;
use crate::client::wait::{Parked, Stop};
use crate::client::{BeforeTool, Event, ToolCallRecord};
use crate::error::Result;
use crate::model::{Message, ToolCall};
use crate::reconcile::KIND_RECONCILE;
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::tool::parse_arguments;

impl Run<'_> {
    /// Runs `calls[start..]` (those without a result in `pre`, concurrently), then handles the
    /// results in call order. Returns the halted run when one suspends without `wait_for`, or
    /// the parked call when `wait_for` is to answer it.
    pub(in crate::client) async fn tool_phase(
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
            // an answer given already (a together turn's), or a remembered rule that answers
            // an approval without asking anyone
            let given = st.take_answer(&request.id);
            let answer = match given {
                Some(given) => Some(given),
                None => self
                    .remembered(st, call, &exec.args, request)
                    .await
                    .map(Arrived::now),
            };
            if let Some(answer) = answer {
                let request = request.clone();
                // as an answered retry: a claimed run marks a tool that is not idempotent
                let marks = self.marks(&call.name).then(|| {
                    let later = execs
                        .iter()
                        .map(|(k, e)| Some(e.deferred(st, &calls[start + k])));
                    Marks::new(st, std::iter::once(None).chain(later).collect())
                });
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
                let mut parked = Parked::new(index, call, exec, request, rest);
                if st.together {
                    parked.others = self.together_others(&parked.rest);
                }
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
    pub(in crate::client) async fn resolve(
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
    pub(in crate::client) fn show_edited(st: &mut State, call_id: &str, args: &Value) {
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

    /// A resolved answer's result enters the transcript (`resolved` as [`Run::resolve`] gives
    /// it): the arguments a person's edit ran with in the call's place, then the result.
    pub(in crate::client) fn record_resolved(
        &self,
        st: &mut State,
        call: &ToolCall,
        (args, result, edited): (Value, ToolResult, bool),
    ) {
        if edited {
            Self::show_edited(st, &call.id, &args);
        }
        self.record(st, call, args, result);
    }

    /// A result enters the transcript (after `after_tool`).
    pub(in crate::client) fn record(
        &self,
        st: &mut State,
        call: &ToolCall,
        args: Value,
        result: ToolResult,
    ) {
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

/// What stands in a call's place in the transcript for arguments nested deeper than
/// [`MAX_DEPTH`] levels (they are dropped, not kept).
const TOO_DEEP_ARGUMENTS: &str = "(arguments nested more than 128 levels deep, not kept)";

/// For a call whose arguments nest deeper than [`MAX_DEPTH`]: drops them without recursion,
/// puts [`TOO_DEEP_ARGUMENTS`] in their place and returns the call's failure, so it never runs
/// and nothing ever copies, prints or stores the deep value.
pub(super) fn refuse_too_deep(call: &mut ToolCall) -> Option<Exec> {
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
