//! Halting and finishing a run: the state becomes a [`RunResult`]; on a suspension without
//! `wait_for`, the halted call and the rest of its turn are kept for the resume. Also the
//! run's checkpoints: once a tool result has entered its state, an error that ends the run
//! carries that state ([`Error::Interrupted`]), and a claimed run saves it as it goes.

use std::collections::HashSet;
use std::mem;
use std::time::Duration;

use serde_json::Value;

use super::builder::Config;
use super::{Limit, RunResult, RunStatus, ToolCallRecord};
use crate::error::Error;
use crate::model::{Message, ModelRequest, Role, ToolCall, Usage};
use crate::request::Request;
use crate::result::ToolResult;
use crate::run::{Deferred, FingerprintIds, Halted, fingerprint_of};
use crate::toolkit::Toolkit;

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
    /// The agent's name ([`ClientBuilder::agent_name`](super::ClientBuilder::agent_name), or
    /// the halted record's), kept in every record the run parks.
    pub(super) agent: Option<String>,
    /// The conversation the run is a turn of, kept in every record the run parks.
    pub(super) conversation: Option<String>,
    /// Who the run is for ([`Client::for_principal`](super::Client::for_principal), or the
    /// halted record's), kept in every record the run parks: whose remembered decisions hold.
    pub(super) principal: Option<String>,
    /// The decisions remembered rules made that no store has noted yet.
    pub(super) decided: Vec<crate::store::RunEvent>,
    /// Whether a turn's questions park together (the client's option, or the resumed
    /// record's).
    pub(super) together: bool,
    /// Answers given already to later requests of the turn in progress (a together run's
    /// resume, or `wait_for`'s answers to a together turn): each resolves its call when the
    /// turn reaches it.
    pub(super) answers: Vec<super::run::Arrived>,
}

impl State {
    /// A new run's state: `history` (the system prompt first, unless it starts with one),
    /// then `prompt` as the user turn.
    pub(super) fn fresh(
        config: &Config,
        mut history: Vec<Message>,
        prompt: String,
        toolkit: &Toolkit,
    ) -> Self {
        if let Some(system) = &config.system
            && history.first().is_none_or(|m| m.role != Role::System)
        {
            history.insert(0, Message::system(system.clone()));
        }
        history.push(Message::user(prompt));
        let mut state = Self::from_run(
            RunResult::start(config.model_name.clone(), history),
            toolkit,
        );
        state.agent.clone_from(&config.agent_name);
        state.principal.clone_from(&config.principal);
        state.together = config.questions_together;
        state
    }

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
            agent: None,
            conversation: None,
            principal: None,
            decided: Vec::new(),
            together: false,
            answers: Vec::new(),
        }
    }

    /// The answer given already to request `id` of the turn in progress, taken.
    pub(super) fn take_answer(&mut self, id: &str) -> Option<super::run::Arrived> {
        let at = self.answers.iter().position(|a| a.answer.id == id)?;
        Some(self.answers.remove(at))
    }

    /// What a fingerprint of a call of this run, suspended on request `request`, binds
    /// besides the call: the run, the request, the agent, the conversation and the principal.
    pub(super) fn fingerprint_ids<'a>(&'a self, request: &'a str) -> FingerprintIds<'a> {
        FingerprintIds {
            run: &self.run_id,
            request,
            agent: self.agent.as_deref(),
            conversation: self.conversation.as_deref(),
            principal: self.principal.as_deref(),
        }
    }
}

/// One tool call's execution: the arguments it ran with, its result, how long it took.
pub(super) struct Exec {
    pub(super) args: Value,
    pub(super) result: ToolResult,
    pub(super) duration: Duration,
}

impl Exec {
    /// What a later call of a halted turn leaves for the resume: its result, finished or a
    /// suspension (which keeps its request, fingerprinted now, and is not run again until
    /// its own answer arrives) in run `run_id`.
    pub(super) fn defer(self, st: &State, call: &ToolCall) -> Deferred {
        let fingerprint = self.result.pending().map(|request| {
            let ids = st.fingerprint_ids(&request.id);
            fingerprint_of(ids, &call.name, &call.arguments, &self.args)
        });
        Deferred {
            args: self.args,
            result: self.result,
            duration: self.duration,
            fingerprint,
        }
    }
}

impl Exec {
    /// [`Exec::defer`] of a copy (what a started marker's checkpoint keeps of a later call).
    pub(super) fn deferred(&self, st: &State, call: &ToolCall) -> Deferred {
        let copy = Self {
            args: self.args.clone(),
            result: self.result.clone(),
            duration: self.duration,
        };
        copy.defer(st, call)
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
    let ids = st.fingerprint_ids(&request.id);
    let fingerprint = fingerprint_of(ids, &call.name, &call.arguments, &exec.args);
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
    let halted = Halted {
        call_index: index,
        fingerprint,
        deferred,
        agent: st.agent.clone(),
        conversation: st.conversation.clone(),
        principal: st.principal.clone(),
        together: st.together,
    };
    result.pending_all = crate::run::together_requests(&request, &halted);
    // a governed approval is answered through its run's votes, requester and group checks,
    // which hold for the request a run waits on: such a turn parks the family's way
    if result.pending_all.iter().any(Request::asked_alone) {
        result.pending_all = Vec::new();
    }
    // a together turn that waits on one request keeps the family's record
    result.halted = None;
    let halted = Halted {
        together: !result.pending_all.is_empty(),
        ..halted
    };
    result.pending = Some(Box::new(request));
    result.halted = Some(Box::new(halted));
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
        pending_all: Vec::new(),
        halted: None,
        decided: mem::take(&mut st.decided),
    }
}

impl State {
    /// The run's state as its checkpoint, tagged for a store: the state lends its transcript
    /// and records to the [`RunResult`] (status incomplete) and takes them back.
    pub(super) fn checkpoint(&mut self) -> Value {
        let run = finish(self, RunStatus::Incomplete, None);
        let checkpoint = crate::run::tag_checkpoint(&run);
        self.text = run.text;
        self.request.messages = run.messages;
        self.records = run.tool_calls;
        self.decided = run.decided;
        checkpoint
    }
}

impl State {
    /// A copy of the run's state as a [`RunResult`] (status incomplete), as JSON: the `run` of
    /// a started marker's checkpoint (its last turn in flight).
    pub(super) fn snapshot(&self) -> Value {
        let run = RunResult {
            tool_call_count: self.records.len(),
            tool_calls: self.records.clone(),
            turns: self.turns,
            usage: self.usage,
            ..RunResult::incomplete(
                self.run_id.clone(),
                self.request.model.clone(),
                self.request.messages.clone(),
            )
        };
        // plain data with string keys: serialization cannot fail
        serde_json::to_value(&run).unwrap_or_default()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unanswered_last_turn_is_cut() {
        let call = ToolCall::new("a", "t", serde_json::json!({}));
        let call2 = ToolCall::new("b", "t", serde_json::json!({}));
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
