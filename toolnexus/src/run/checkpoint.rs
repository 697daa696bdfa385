//! Checkpoints at rest: a run's state once a tool result entered it, as a [`RunResult`] with
//! status `incomplete` ([contract section 4](crate::contract)). An error that ends a run
//! carries one ([`Error::Interrupted`](crate::Error::Interrupted)); a claimed run saves one in
//! its store, tagged `{"toolnexus":"checkpoint-v1","run":<RunResult>}`. This is the format and
//! the check a checkpoint passes before
//! [`Client::resume_checkpoint`](crate::Client::resume_checkpoint) goes on from it.
//!
//! A claimed run also checkpoints a turn *in flight*: before a tool that is not idempotent
//! starts, the run's state with that turn's assistant message (and the results of its calls
//! that entered the state) is saved with an `inFlight` entry, `{"started": [<marker>..],
//! "deferred": [..]}`: a marker per started call that has no recorded result yet (tool,
//! arguments, idempotency key, when it started), and the results the later calls of a halted
//! turn already gave. The turn's result checkpoint replaces it. A worker that takes the run
//! over from such a checkpoint does not run a marked call again: it asks a person (a
//! `reconcile` request, [`reconcile`](crate::reconcile)).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{RecordError, RecordResult, invalid};
use super::pending::Deferred;
use super::result::{RunResult, RunStatus};
use super::verify::show;
use crate::message::Role;

/// A call that started and has no recorded result: what a `reconcile` request shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Marker {
    /// The call's id (in the turn's assistant message).
    pub(crate) call_id: String,
    /// The tool's name.
    pub(crate) tool: String,
    /// The arguments it ran with.
    pub(crate) args: Value,
    /// Its idempotency key ([`Context::idempotency_key`](crate::Context::idempotency_key)).
    pub(crate) idempotency_key: String,
    /// When it started, RFC 3339 UTC.
    pub(crate) started_at: String,
    /// Whether the arguments are a person's edit (the transcript then shows them).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) edited: bool,
    /// The request and answer it ran with (a retry after an answer): a rerun runs with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ran_with: Option<Box<(crate::request::Request, crate::request::Answer)>>,
}

/// The turn in flight of a checkpoint: the calls that started without a recorded result, and
/// what the calls without a result in the transcript already gave (`deferred[k]` is the
/// `k`th of them, in call order; `null` for a call to run, or a started one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InFlight {
    pub(crate) started: Vec<Marker>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) deferred: Vec<Option<Deferred>>,
}

/// `run` (its last turn in flight) as a store keeps it, tagged, with its `inFlight` entry.
pub(crate) fn tag_in_flight(run: &Value, in_flight: &InFlight) -> Value {
    serde_json::json!({"toolnexus": CHECKPOINT_TAG, "run": run, "inFlight": in_flight})
}

/// The checkpoint format tag: a stored checkpoint is `{"toolnexus":"checkpoint-v1","run":<RunResult>}`.
const CHECKPOINT_TAG: &str = "checkpoint-v1";

/// `run` (a checkpoint: status incomplete) as a store keeps it, tagged.
pub(crate) fn tag_checkpoint(run: &RunResult) -> Value {
    serde_json::json!({"toolnexus": CHECKPOINT_TAG, "run": run})
}

/// The run a stored checkpoint of run `run_id` holds, and its turn in flight when it has one
/// (checked: [`check_in_flight`]); an error when it is not one written for that run (nothing
/// runs then).
pub(crate) fn checkpoint_of_claim(
    run_id: &str,
    checkpoint: &Value,
) -> RecordResult<(RunResult, Option<InFlight>)> {
    let bad = |why: &str| {
        RecordError::Invalid(format!(
            "the checkpoint of run `{run_id}` is not a run checkpoint: {why}"
        ))
    };
    if checkpoint.get("toolnexus").and_then(Value::as_str) != Some(CHECKPOINT_TAG) {
        return Err(bad(&format!("no `\"toolnexus\":\"{CHECKPOINT_TAG}\"` tag")));
    }
    let run: RunResult = serde_json::from_value(checkpoint.get("run").cloned().unwrap_or_default())
        .map_err(|e| bad(&e.to_string()))?;
    if run.run_id != run_id {
        return Err(bad(&format!("it holds run `{}`", run.run_id)));
    }
    let Some(in_flight) = checkpoint.get("inFlight") else {
        return Ok((run, None));
    };
    let in_flight: InFlight =
        serde_json::from_value(in_flight.clone()).map_err(|e| bad(&format!("`inFlight`: {e}")))?;
    check_in_flight(&run, &in_flight)?;
    Ok((run, Some(in_flight)))
}

/// Whether `run` and `in_flight` are a turn in flight to go on from: the transcript before the
/// last assistant turn is a checkpoint's; after it come results of its first calls only, in
/// call order; every marker names a later call of that turn, by its tool, once, with no
/// deferred result; `deferred` covers at most the calls without a result.
pub(crate) fn check_in_flight(run: &RunResult, in_flight: &InFlight) -> RecordResult<()> {
    let Some(at) = run
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return invalid("a turn in flight needs an assistant turn with tool calls".to_owned());
    };
    let before = RunResult {
        messages: run.messages[..at].to_vec(),
        ..run.clone()
    };
    check_checkpoint(&before)?;
    let calls = &run.messages[at].tool_calls;
    let answered = run.messages.len() - at - 1;
    for (k, m) in run.messages[at + 1..].iter().enumerate() {
        let expected = calls.get(k).map(|c| c.id.as_str());
        if m.role != Role::Tool || m.tool_call_id.as_deref() != expected {
            return invalid(format!(
                "`messages[{}]` is not the result of the turn in flight's call {}",
                at + 1 + k,
                show(&expected.unwrap_or_default())
            ));
        }
    }
    let open = &calls[answered.min(calls.len())..];
    if in_flight.deferred.len() > open.len() {
        return invalid(format!(
            "`inFlight.deferred` has {} entries for {} calls without a result",
            in_flight.deferred.len(),
            open.len()
        ));
    }
    let mut seen = HashSet::new();
    for marker in &in_flight.started {
        let Some(k) = open.iter().position(|c| c.id == marker.call_id) else {
            return invalid(format!(
                "`inFlight.started` names the call {}, which is not a call of the turn in flight without a result",
                show(&marker.call_id)
            ));
        };
        if open[k].name != marker.tool || !seen.insert(k) {
            return invalid(format!(
                "`inFlight.started` disagrees with the call {} (tool {} or named twice)",
                show(&marker.call_id),
                show(&marker.tool)
            ));
        }
        if in_flight.deferred.get(k).is_some_and(Option::is_some) {
            return invalid(format!(
                "the started call {} also has a deferred result",
                show(&marker.call_id)
            ));
        }
    }
    Ok(())
}

/// Whether `run` is a checkpoint to go on from: incomplete, nothing pending, every tool call
/// answered exactly once, and not ended by the model's answer.
pub(crate) fn check_checkpoint(run: &RunResult) -> RecordResult<()> {
    match run.status {
        RunStatus::Incomplete => {}
        RunStatus::Pending => {
            return invalid(
                "`status` is `pending`: a halted run resumes with its answer (`Client::resume`)"
                    .to_owned(),
            );
        }
        other @ RunStatus::Done => {
            return invalid(format!(
                "`status` is `{other}`: a checkpoint is `incomplete`"
            ));
        }
    }
    if let Some(pending) = &run.pending {
        return invalid(format!(
            "`pending` is {} in an incomplete run; a checkpoint has no pending request",
            show(&pending.id)
        ));
    }
    let mut open: Vec<&str> = Vec::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (i, m) in run.messages.iter().enumerate() {
        if m.role == Role::Tool {
            let id = m.tool_call_id.as_deref().unwrap_or_default();
            let Some(k) = open.iter().position(|o| *o == id) else {
                let why = if answered.contains(id) {
                    "a second result for"
                } else {
                    "a result for the unknown call"
                };
                return invalid(format!("`messages[{i}]` is {why} {}", show(id)));
            };
            answered.insert(open.remove(k));
            continue;
        }
        if let Some(id) = open.first() {
            return invalid(format!(
                "`messages[{i}]` follows a turn whose call {} has no result",
                show(id)
            ));
        }
        answered.clear();
        if m.role == Role::Assistant {
            open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        }
    }
    if let Some(id) = open.first() {
        return invalid(format!("the last turn's call {} has no result", show(id)));
    }
    if run
        .messages
        .last()
        .is_some_and(|m| m.role == Role::Assistant)
    {
        return invalid(
            "the last message is the model's answer: the run is over, there is nothing to go on with"
                .to_owned(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{InFlight, Marker, check_in_flight};
    use crate::message::{Message, ToolCall};
    use crate::run::result::{RunResult, RunStatus};

    fn run(messages: Vec<Message>) -> RunResult {
        let mut run = RunResult::start("m".to_owned(), Vec::new());
        run.messages = messages;
        run.status = RunStatus::Incomplete;
        run
    }

    fn marker(call_id: &str, tool: &str) -> Marker {
        Marker {
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            args: json!({}),
            idempotency_key: "k".to_owned(),
            started_at: "2026-01-01T00:00:00Z".to_owned(),
            edited: false,
            ran_with: None,
        }
    }

    #[test]
    fn a_turn_in_flight_is_checked_against_its_transcript() {
        let calls = vec![
            ToolCall::new("a", "look", json!({})),
            ToolCall::new("b", "pay", json!({})),
        ];
        let turn = run(vec![
            Message::user("hi"),
            Message::assistant_tool_calls(None, calls),
            Message::tool_result("a", "ok", false),
        ]);
        let flight = |started: Vec<Marker>| InFlight {
            started,
            deferred: Vec::new(),
        };
        assert!(check_in_flight(&turn, &flight(vec![marker("b", "pay")])).is_ok());
        let err = |f: &InFlight| check_in_flight(&turn, f).unwrap_err().to_string();
        assert_eq!(
            err(&flight(vec![marker("a", "look")])),
            "invalid persisted run: `inFlight.started` names the call \"a\", which is not a call of the turn in flight without a result"
        );
        assert_eq!(
            err(&flight(vec![marker("b", "send")])),
            "invalid persisted run: `inFlight.started` disagrees with the call \"b\" (tool \"send\" or named twice)"
        );
        let mut out_of_order = turn.clone();
        out_of_order.messages[2] = Message::tool_result("b", "ok", false);
        assert_eq!(
            check_in_flight(&out_of_order, &flight(vec![]))
                .unwrap_err()
                .to_string(),
            "invalid persisted run: `messages[2]` is not the result of the turn in flight's call \"a\""
        );
        let too_many = InFlight {
            started: Vec::new(),
            deferred: vec![None, None],
        };
        assert_eq!(
            err(&too_many),
            "invalid persisted run: `inFlight.deferred` has 2 entries for 1 calls without a result"
        );
    }
}
