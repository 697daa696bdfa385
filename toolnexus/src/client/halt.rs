//! Halting and finishing a run: the state becomes a [`RunResult`]; on a suspension without
//! `wait_for`, the halted call and the rest of its turn are kept for the resume.

use std::mem;

use super::fingerprint;
use super::persist::{Deferred, Halted};
use super::run::{Exec, State};
use super::{Limit, RunResult, RunStatus, ToolCallRecord};
use crate::model::{Message, ToolCall};
use crate::request::Request;

impl Exec {
    /// What a later call of a halted turn leaves for the resume: its result, finished or a
    /// suspension (which keeps its request, fingerprinted now, and is not run again until
    /// its own answer arrives).
    pub(super) fn defer(self, call: &ToolCall) -> Deferred {
        let fingerprint = self
            .result
            .is_pending()
            .then(|| fingerprint::of(&call.name, &call.arguments, &self.args));
        Deferred {
            args: self.args,
            result: self.result,
            duration: self.duration,
            fingerprint,
        }
    }
}

impl From<Deferred> for Exec {
    fn from(d: Deferred) -> Self {
        Self {
            args: d.args,
            result: d.result,
            duration: d.duration,
        }
    }
}

/// The run halts on `call`: its result in the transcript is the request's prompt (isError);
/// the later calls of the turn stay out of the transcript, kept in the resume state.
pub(super) fn halt(
    st: &mut State,
    call: &ToolCall,
    index: usize,
    exec: Exec,
    request: Request,
    deferred: Vec<Option<Deferred>>,
) -> RunResult {
    // taken now, when the request is made: a resume checks the call against it
    let fingerprint = fingerprint::of(&call.name, &call.arguments, &exec.args);
    st.request.messages.push(Message::tool_result(
        call.id.clone(),
        request.prompt.clone(),
        true,
    ));
    st.records.push(ToolCallRecord {
        name: call.name.clone(),
        args: exec.args,
        output: exec.result.output,
        is_error: exec.result.is_error,
        metadata: exec.result.metadata,
        parts: exec.result.parts,
    });
    st.text.clone_from(&request.prompt);
    let mut result = finish(st, RunStatus::Pending, None);
    result.pending = Some(Box::new(request));
    result.halted = Some(Box::new(Halted {
        call_index: index,
        fingerprint,
        deferred,
    }));
    result
}

/// The run ends with `status`: its state becomes the [`RunResult`].
pub(super) fn finish(st: &mut State, status: RunStatus, limit: Option<Limit>) -> RunResult {
    RunResult {
        run_id: st.run_id.clone(),
        text: mem::take(&mut st.text),
        messages: mem::take(&mut st.request.messages),
        tool_call_count: st.records.len(),
        tool_calls: mem::take(&mut st.records),
        turns: st.turns,
        usage: st.usage,
        model: st.request.model.clone(),
        status,
        limit,
        pending: None,
        halted: None,
    }
}
