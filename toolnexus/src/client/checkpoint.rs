//! Checkpoints: once a tool result has entered a run's state, an error that ends the run
//! carries that state ([`Error::Interrupted`]), and [`Client::resume_checkpoint`] goes on
//! from it with the next model call, running none of the recorded tools again
//! ([contract section 4](crate::contract)). Also the idempotency key of a call.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::fingerprint::hex;
use super::halt::finish;
use super::run::State;
use super::verify::show;
use super::{Client, Event, RunResult, RunStatus};
use crate::error::{Error, Result};
use crate::model::{Message, ModelRequest, Role};
use crate::toolkit::Toolkit;

/// The key of one tool call of one run: SHA-256 (lowercase hex) of
/// `toolnexus-idempotency-v1 NUL run_id NUL turn NUL call_id` (see
/// [`Context::idempotency_key`](crate::Context::idempotency_key)).
pub(super) fn idempotency_key(run_id: &str, turn: u32, call_id: &str) -> String {
    let mut hash = Sha256::new();
    for part in [
        "toolnexus-idempotency-v1",
        run_id,
        &turn.to_string(),
        call_id,
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex(&hash.finalize())
}

/// How long the balanced start of `messages` is: all of it, or up to the last assistant turn
/// whose tool calls do not all have their result yet (that turn and its results are cut).
fn balanced_len(messages: &[Message]) -> usize {
    let Some(at) = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return messages.len();
    };
    let answered: HashSet<&str> = messages[at + 1..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let complete = messages[at]
        .tool_calls
        .iter()
        .all(|c| answered.contains(c.id.as_str()));
    if complete { messages.len() } else { at }
}

/// The error a run ends with, carrying its checkpoint when a tool result entered its state in
/// this call and the error carries no run yet: the state cut to its last balanced point (a
/// turn whose calls are not all answered is left out, with the results it has), status
/// incomplete.
pub(super) fn attach(error: Error, st: &mut State) -> Error {
    if !st.ran || error.halted_run().is_some() {
        return error;
    }
    let keep = balanced_len(&st.request.messages);
    let cut = st.request.messages[keep..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .count();
    st.request.messages.truncate(keep);
    st.records.truncate(st.records.len().saturating_sub(cut));
    Error::Interrupted {
        error: Box::new(error),
        run: Box::new(finish(st, RunStatus::Incomplete, None)),
    }
}

/// Whether `run` is a checkpoint to go on from: incomplete, nothing pending, every tool call
/// answered exactly once, and not ended by the model's answer.
fn check(run: &RunResult) -> Result<()> {
    let fail = |message: String| Err(Error::Persist(message));
    match run.status {
        RunStatus::Incomplete => {}
        RunStatus::Pending => {
            return fail(
                "`status` is `pending`: a halted run resumes with its answer (`Client::resume`)"
                    .to_owned(),
            );
        }
        other @ RunStatus::Done => {
            return fail(format!(
                "`status` is `{other}`: a checkpoint is `incomplete`"
            ));
        }
    }
    if let Some(pending) = &run.pending {
        return fail(format!(
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
                return fail(format!("`messages[{i}]` is {why} {}", show(id)));
            };
            answered.insert(open.remove(k));
            continue;
        }
        if let Some(id) = open.first() {
            return fail(format!(
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
        return fail(format!("the last turn's call {} has no result", show(id)));
    }
    if run
        .messages
        .last()
        .is_some_and(|m| m.role == Role::Assistant)
    {
        return fail(
            "the last message is the model's answer: the run is over, there is nothing to go on with"
                .to_owned(),
        );
    }
    Ok(())
}

impl Client {
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
        self.resume_checkpoint_inner(run, toolkit, None).await
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
        self.resume_checkpoint_inner(run, toolkit, Some(&sink))
            .await
    }

    async fn resume_checkpoint_inner(
        &self,
        run: RunResult,
        toolkit: &Toolkit,
        sink: Option<super::Sink<'_>>,
    ) -> Result<RunResult> {
        check(&run)?;
        let state = State {
            run_id: run.run_id,
            request: ModelRequest::new(run.model, run.messages, toolkit.specs()),
            records: run.tool_calls,
            usage: run.usage,
            turns: run.turns,
            text: String::new(),
            ran: false,
        };
        self.drive(state, toolkit, sink, sink.is_some(), None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_sha256_of_the_nul_separated_parts() {
        // printf 'toolnexus-idempotency-v1\0run-1\0002\0call_0\0' | sha256sum
        let expected = {
            let mut h = Sha256::new();
            h.update(b"toolnexus-idempotency-v1\x00run-1\x002\x00call_0\x00");
            hex(&h.finalize())
        };
        assert_eq!(idempotency_key("run-1", 2, "call_0"), expected);
        assert_eq!(expected.len(), 64);
        assert_ne!(idempotency_key("run-1", 3, "call_0"), expected);
        assert_ne!(idempotency_key("run-2", 2, "call_0"), expected);
        assert_ne!(idempotency_key("run-1", 2, "call_1"), expected);
        // the separator keeps parts from running into each other
        assert_ne!(
            idempotency_key("run-1", 2, "0call"),
            idempotency_key("run-12", 0, "call")
        );
    }

    #[test]
    fn an_unanswered_last_turn_is_cut() {
        let call = crate::model::ToolCall::new("a", "t", serde_json::json!({}));
        let call2 = crate::model::ToolCall::new("b", "t", serde_json::json!({}));
        let messages = vec![
            Message::user("hi"),
            Message::assistant_tool_calls(None, vec![call, call2]),
            Message::tool_result("a", "ok", false),
        ];
        assert_eq!(balanced_len(&messages), 1);
        let mut full = messages.clone();
        full.push(Message::tool_result("b", "ok", false));
        assert_eq!(balanced_len(&full), 4);
        assert_eq!(balanced_len(&messages[..1]), 1);
    }
}
