//! Crash-cut calls ([`reconcile`](crate::reconcile)): a claimed run saves a started marker
//! before a tool that is not idempotent starts ([`Marks`]), a run taken over from such a
//! checkpoint asks a person instead of running the marked call again ([`Run::in_flight_turn`]),
//! and the answer decides what the call's result is ([`Run::reconcile`]).

use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tokio::sync::Mutex;

use super::run::{Arrived, Run};
use super::state::{Exec, State};
use super::wait::{Stop, turn_calls};
use crate::error::{Error, Result};
use crate::model::{Role, ToolCall};
use crate::reconcile::{RAN_WITH, Reconcile};
use crate::request::{Answer, Request, format_rfc3339};
use crate::result::ToolResult;
use crate::run::{Deferred, InFlight, Marker, tag_in_flight};

/// The started markers of one turn (or one answered retry) of a claimed run: each marker is
/// saved, with every marker before it, as the claim's checkpoint before its tool starts; the
/// lock keeps the saved sets growing in the order they were made.
pub(super) struct Marks<'s> {
    st: &'s State,
    in_flight: Mutex<InFlight>,
    /// The first failure to save a marker: the run stops with it once the turn's calls end.
    failed: std::sync::Mutex<Option<Error>>,
}

impl<'s> Marks<'s> {
    /// Markers for the calls of `st`'s turn in flight that have no result in its transcript;
    /// `deferred` are the results some of them already gave (a halted turn's later calls).
    pub(super) fn new(st: &'s State, deferred: Vec<Option<Deferred>>) -> Self {
        Self {
            st,
            in_flight: Mutex::new(InFlight {
                started: Vec::new(),
                deferred,
            }),
            failed: std::sync::Mutex::new(None),
        }
    }

    /// Saves the marker of `call` (about to run `args`) with those before it, and waits until
    /// the store has it; `false` when it could not be saved (the call must not run).
    pub(super) async fn start(
        &self,
        run: &Run<'_>,
        call: &ToolCall,
        args: &Value,
        edited: bool,
        ran_with: Option<(Request, Answer)>,
    ) -> bool {
        let mut in_flight = self.in_flight.lock().await;
        let idempotency_key = run
            .ctx(call)
            .idempotency_key()
            .unwrap_or_default()
            .to_owned();
        in_flight.started.retain(|m| m.call_id != call.id);
        in_flight.started.push(Marker {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: args.clone(),
            idempotency_key,
            started_at: format_rfc3339(SystemTime::now()),
            edited,
            ran_with: ran_with.map(Box::new),
        });
        let checkpoint = tag_in_flight(&self.st.snapshot(), &in_flight);
        match run.send_checkpoint(checkpoint).await {
            Ok(()) => true,
            Err(error) => {
                let mut failed = self
                    .failed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                failed.get_or_insert(error);
                false
            }
        }
    }

    /// The first failure to save a marker, if any.
    pub(super) fn failure(self) -> Option<Error> {
        self.failed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What stands for a call whose marker could not be saved (it did not run; the run stops).
pub(super) fn not_started() -> ToolResult {
    ToolResult::error("not run: its start could not be recorded")
}

/// The suspension that stands for a marked call on takeover: a `reconcile` request, with the
/// request and answer the call ran with kept in its metadata for a rerun.
fn reconcile_exec(marker: Marker) -> Exec {
    let request = Request::reconcile(
        &marker.tool,
        marker.args.clone(),
        &marker.idempotency_key,
        &marker.started_at,
    );
    let mut result = ToolResult::suspended(request);
    if let (Some(ran_with), Some(metadata)) = (marker.ran_with, result.metadata.as_mut()) {
        let (request, answer) = *ran_with;
        metadata.extra.insert(
            RAN_WITH.to_owned(),
            serde_json::json!({"request": request, "answer": answer}),
        );
    }
    Exec {
        args: marker.args,
        result,
        duration: Duration::ZERO,
    }
}

/// The request and answer a reconcile suspension's call ran with (kept by [`reconcile_exec`]).
pub(super) fn ran_with(metadata: Option<&crate::result::Metadata>) -> Option<(Request, Answer)> {
    let kept = metadata?.extra.get(RAN_WITH)?;
    let request = serde_json::from_value(kept.get("request")?.clone()).ok()?;
    let answer = serde_json::from_value(kept.get("answer")?.clone()).ok()?;
    Some((request, answer))
}

impl Run<'_> {
    /// Whether a call of `name` saves a started marker: the run is a claimed one and the tool
    /// does not say it is idempotent.
    pub(super) fn marks(&self, name: &str) -> bool {
        self.client.checkpoints.is_some()
            && self
                .toolkit
                .get(name)
                .is_some_and(|tool| !tool.annotations().is_idempotent())
    }

    /// Goes on with the turn in flight of a checkpoint: the results it holds stand, a marked
    /// call becomes a `reconcile` suspension (the run halts on it, or `wait_for` is asked),
    /// every other call without a result runs.
    pub(super) async fn in_flight_turn(
        &self,
        st: &mut State,
        in_flight: InFlight,
    ) -> Result<Option<Stop>> {
        let at = st
            .request
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
            .unwrap_or_default();
        let answered = st.request.messages.len() - at - 1;
        let InFlight {
            mut started,
            deferred,
        } = in_flight;
        // a call that ran with a person's edit shows it in the transcript, as it does once
        // its result is recorded; the calls are read after that, so the `reconcile` request
        // a marked call halts on is fingerprinted over the arguments the record holds (the
        // edited ones, in the transcript and in the call's record alike)
        for marker in started.iter().filter(|m| m.edited) {
            Self::show_edited(st, &marker.call_id, &marker.args);
        }
        let calls = turn_calls(st);
        let mut deferred = deferred.into_iter();
        let pre = calls[answered..]
            .iter()
            .map(|call| {
                if let Some(done) = deferred.next().flatten() {
                    return Some(Exec::from(done));
                }
                let k = started.iter().position(|m| m.call_id == call.id)?;
                Some(reconcile_exec(started.swap_remove(k)))
            })
            .collect();
        Box::pin(self.tool_phase(st, &calls, answered, pre)).await
    }

    /// The answer to a `reconcile` request becomes the call's result (the arguments it ran
    /// with, `args`): run again, the recorded output, or a failure; an answer that says none of
    /// them runs nothing.
    pub(super) async fn reconcile(
        &self,
        call: &ToolCall,
        args: Value,
        request: &Request,
        answer: Arrived,
        ran_with: Option<(Request, Answer)>,
        marks: Option<&Marks<'_>>,
    ) -> (Value, ToolResult) {
        let started = Instant::now();
        let Arrived {
            answer,
            at: arrived,
        } = answer;
        let result = if !answer.ok || request.is_expired_at(arrived) {
            ToolResult::error(format!("declined/expired: {}", request.prompt))
        } else {
            match Reconcile::of(&answer) {
                Err(e) => ToolResult::error(format!("{e}; nothing ran")),
                Ok(None) => ToolResult::error(format!("declined/expired: {}", request.prompt)),
                Ok(Some(Reconcile::Record(output))) => ToolResult::success(output),
                Ok(Some(Reconcile::Fail(output))) => ToolResult::error(output.unwrap_or_else(|| {
                    format!(
                        "failed: the call was cut off by a crash, and a person chose to fail it: {}",
                        request.prompt
                    )
                })),
                Ok(Some(_)) => self.rerun(call, &args, ran_with, marks).await,
            }
        };
        self.tool_metric(call, started.elapsed(), result.is_error, false);
        (args, result)
    }

    /// Runs a crash-cut call again, as it ran (with the request and answer it ran with, when
    /// it was a retry), its marker saved first when the run needs one; a suspension reads as
    /// `unresolved: <prompt>`.
    async fn rerun(
        &self,
        call: &ToolCall,
        args: &Value,
        ran_with: Option<(Request, Answer)>,
        marks: Option<&Marks<'_>>,
    ) -> ToolResult {
        if let Some(marks) = marks.filter(|_| self.marks(&call.name))
            && !marks.start(self, call, args, false, ran_with.clone()).await
        {
            return not_started();
        }
        let ctx = match ran_with {
            Some((request, answer)) => self.ctx(call).with_request(request).with_answer(answer),
            None => self.ctx(call),
        };
        let result = self.toolkit.execute(&call.name, args.clone(), &ctx).await;
        match result.pending() {
            Some(again) => ToolResult::error(format!("unresolved: {}", again.prompt)),
            None => result,
        }
    }
}
