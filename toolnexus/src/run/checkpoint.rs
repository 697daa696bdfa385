//! Checkpoints at rest: a run's state once a tool result entered it, as a [`RunResult`] with
//! status `incomplete` ([contract section 4](crate::contract)). An error that ends a run
//! carries one ([`Error::Interrupted`](crate::Error::Interrupted)); a claimed run saves one in
//! its store, tagged `{"toolnexus":"checkpoint-v1","run":<RunResult>}`. This is the format and
//! the check a checkpoint passes before
//! [`Client::resume_checkpoint`](crate::Client::resume_checkpoint) goes on from it.

use std::collections::HashSet;

use serde_json::Value;

use super::error::{RecordError, RecordResult, invalid};
use super::result::{RunResult, RunStatus};
use super::verify::show;
use crate::message::Role;

/// The checkpoint format tag: a stored checkpoint is `{"toolnexus":"checkpoint-v1","run":<RunResult>}`.
const CHECKPOINT_TAG: &str = "checkpoint-v1";

/// `run` (a checkpoint: status incomplete) as a store keeps it, tagged.
pub(crate) fn tag_checkpoint(run: &RunResult) -> Value {
    serde_json::json!({"toolnexus": CHECKPOINT_TAG, "run": run})
}

/// The run a stored checkpoint of run `run_id` holds; an error when it is not one written for
/// that run (nothing runs then).
pub(crate) fn checkpoint_of_claim(run_id: &str, checkpoint: &Value) -> RecordResult<RunResult> {
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
    Ok(run)
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
