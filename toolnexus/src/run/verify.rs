//! The checks a [`PendingRun`] passes before anything resumes it: the whole record against
//! itself. Each failure is an [`RecordError::Invalid`] naming the field and both values.

use serde::Serialize;

use super::error::{RecordError, RecordResult};
use crate::message::{Role, ToolCall};
use crate::request::Request;

use super::fingerprint;
use super::pending::{PENDING_RUN_VERSION, PendingRun};

/// The longest a value is shown in an error before it is cut.
const SHOWN: usize = 120;

/// A value as compact JSON, cut after [`SHOWN`] characters.
pub(crate) fn show(value: &(impl Serialize + ?Sized)) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn fail<T>(message: String) -> RecordResult<T> {
    Err(RecordError::Invalid(message))
}

/// The index of the halted turn's assistant message (the last assistant message).
fn halted_turn(run: &PendingRun) -> RecordResult<usize> {
    let Some(at) = run.messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return fail("`messages` has no assistant turn to resume".to_owned());
    };
    if run.messages[at].tool_calls.is_empty() {
        return fail(format!(
            "`messages[{at}]`, the last assistant turn, calls no tool: there is no halted call"
        ));
    }
    Ok(at)
}

/// The halted call as the model made it (the transcript's tool call).
pub(crate) fn halted_call(run: &PendingRun) -> RecordResult<&ToolCall> {
    let at = halted_turn(run)?;
    let calls = &run.messages[at].tool_calls;
    let index = run.halted.call_index;
    calls.get(index).map_or_else(
        || {
            fail(format!(
                "`halted.callIndex` is {index} but the halted turn (`messages[{at}]`) has {} tool calls",
                calls.len()
            ))
        },
        Ok,
    )
}

/// Checks `run` against itself; returns the index of the halted turn's assistant message.
pub(crate) fn check(run: &PendingRun) -> RecordResult<usize> {
    if run.version != PENDING_RUN_VERSION {
        return fail(format!(
            "`version` is {} but this release reads version {PENDING_RUN_VERSION}",
            run.version
        ));
    }
    if run.run_id.is_empty() {
        return fail("`runId` is empty: every record names its run".to_owned());
    }
    if run.model.is_empty() {
        return fail("`model` is empty: every record names its model".to_owned());
    }
    let at = halted_turn(run)?;
    let call = halted_call(run)?;
    let answered = check_transcript(run, at)?;
    check_records(run, &answered)?;
    check_halted(run, at, call)?;
    let assistants = run
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    if run.turns == 0 || usize::try_from(run.turns).is_ok_and(|t| t > assistants) {
        return fail(format!(
            "`turns` is {} but the transcript holds {assistants} assistant turns (each model turn of a run adds one, and the halted turn is one)",
            run.turns
        ));
    }
    Ok(at)
}

/// Every assistant turn's tool calls have exactly one result each (the halted turn: the calls
/// up to the halted one, in order), no result names an unknown call, nothing follows the
/// halted call's result. Returns the tool name of each result, in transcript order.
fn check_transcript(run: &PendingRun, at: usize) -> RecordResult<Vec<&str>> {
    let messages = &run.messages;
    let mut names = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m.role == Role::Tool {
            return fail(format!(
                "`messages[{i}].tool_call_id` is {} but `messages[{}]` is not an assistant turn calling tools: the result answers no call",
                show(&m.tool_call_id),
                i.saturating_sub(1)
            ));
        }
        if m.role != Role::Assistant || m.tool_calls.is_empty() {
            i += 1;
            continue;
        }
        let calls = &m.tool_calls;
        let end = i
            + 1
            + messages[i + 1..]
                .iter()
                .take_while(|r| r.role == Role::Tool)
                .count();
        let results = &messages[i + 1..end];
        if i == at {
            let expected = run.halted.call_index + 1;
            if results.len() != expected {
                return fail(format!(
                    "the halted turn (`messages[{at}]`) has {} tool results but `halted.callIndex` {} means {expected}: the calls before the halted one and the halted call itself",
                    results.len(),
                    run.halted.call_index
                ));
            }
            for (k, result) in results.iter().enumerate() {
                if result.tool_call_id.as_deref() != Some(calls[k].id.as_str()) {
                    return fail(format!(
                        "`messages[{}].tool_call_id` is {} but the halted turn's call {k} is {}",
                        i + 1 + k,
                        show(&result.tool_call_id),
                        show(&calls[k].id)
                    ));
                }
                names.push(calls[k].name.as_str());
            }
            if let Some(after) = messages.get(end) {
                return fail(format!(
                    "`messages[{end}]` ({}) follows the halted call's result: the halted turn must end the transcript",
                    show(&after.role)
                ));
            }
        } else {
            let mut used = vec![false; calls.len()];
            for (k, result) in results.iter().enumerate() {
                let id = result.tool_call_id.as_deref();
                let free = calls
                    .iter()
                    .enumerate()
                    .position(|(c, call)| !used[c] && Some(call.id.as_str()) == id);
                let Some(c) = free else {
                    let known = calls.iter().any(|call| Some(call.id.as_str()) == id);
                    let ids: Vec<&str> = calls.iter().map(|call| call.id.as_str()).collect();
                    return fail(format!(
                        "`messages[{}].tool_call_id` is {} but the calls of `messages[{i}]` are {}: {}",
                        i + 1 + k,
                        show(&id),
                        show(&ids),
                        if known {
                            "that call has a result already"
                        } else {
                            "it names no call of its turn"
                        }
                    ));
                };
                used[c] = true;
                names.push(calls[c].name.as_str());
            }
            if let Some(c) = used.iter().position(|u| !u) {
                return fail(format!(
                    "`messages[{i}].tool_calls[{c}]` ({} of {}) has no result: the turn has {} results for {} calls",
                    show(&calls[c].id),
                    show(&calls[c].name),
                    results.len(),
                    calls.len()
                ));
            }
        }
        i = end;
    }
    Ok(names)
}

/// The tool-call records are the last results of the transcript, in order, with the names
/// of the calls they answer.
fn check_records(run: &PendingRun, answered: &[&str]) -> RecordResult<()> {
    let records = &run.tool_calls;
    if records.is_empty() {
        return fail("`toolCalls` is empty but the halted call needs its record".to_owned());
    }
    if records.len() > answered.len() {
        return fail(format!(
            "`toolCalls` has {} records but the transcript has {} tool results",
            records.len(),
            answered.len()
        ));
    }
    let offset = answered.len() - records.len();
    for (k, record) in records.iter().enumerate() {
        let name = answered[offset + k];
        if record.name != name {
            return fail(format!(
                "`toolCalls[{k}].name` is {} but the transcript's call it records is {}",
                show(&record.name),
                show(name)
            ));
        }
    }
    Ok(())
}

/// The halted call: its placeholder result, its own request, its fingerprint, the deferred
/// later calls.
fn check_halted(run: &PendingRun, at: usize, call: &ToolCall) -> RecordResult<()> {
    let index = run.halted.call_index;
    let calls = &run.messages[at].tool_calls;
    let later = calls.len() - index - 1;
    if run.halted.deferred.len() != later {
        return fail(format!(
            "`halted.deferred` has {} entries but the halted turn has {later} calls after the halted one",
            run.halted.deferred.len()
        ));
    }
    for (k, deferred) in run.halted.deferred.iter().enumerate() {
        let Some(d) = deferred else { continue };
        let later = &calls[index + 1 + k];
        let expected = d.result.pending().map(|request| {
            let ids = fingerprint::Ids {
                run: &run.run_id,
                request: &request.id,
                agent: run.halted.agent.as_deref(),
                conversation: run.halted.conversation.as_deref(),
                principal: run.halted.principal.as_deref(),
            };
            fingerprint::of(ids, &later.name, &later.arguments, &d.args)
        });
        if d.fingerprint != expected {
            return fail(format!(
                "`halted.deferred[{k}].fingerprint` is {} but the suspended call ({} with `messages[{at}].tool_calls[{}].arguments` {} and `halted.deferred[{k}].args` {}, in run {} asking request {}) hashes to {}: the call, its run id or its request id changed after its request was made",
                show(&d.fingerprint),
                show(&later.name),
                index + 1 + k,
                show(&later.arguments),
                show(&d.args),
                show(&run.run_id),
                show(&d.result.pending().map(|r| &r.id)),
                show(&expected)
            ));
        }
    }
    let last = run.messages.len() - 1;
    let placeholder = &run.messages[last];
    if placeholder.content.as_deref() != Some(run.pending.prompt.as_str()) || !placeholder.is_error
    {
        return fail(format!(
            "`messages[{last}]` (the halted call's result) is {} but the pending request's prompt is {} (isError true)",
            show(&(&placeholder.content, placeholder.is_error)),
            show(&run.pending.prompt)
        ));
    }
    let k = run.tool_calls.len() - 1;
    let record = &run.tool_calls[k];
    let Some(own) = record.metadata.as_ref().and_then(|m| m.pending.as_deref()) else {
        return fail(format!(
            "`toolCalls[{k}]` (the halted call's record) has no `metadata.pending`: it is not a suspension"
        ));
    };
    same_request(&run.pending, own, k)?;
    let ids = fingerprint::Ids {
        run: &run.run_id,
        request: &run.pending.id,
        agent: run.halted.agent.as_deref(),
        conversation: run.halted.conversation.as_deref(),
        principal: run.halted.principal.as_deref(),
    };
    let expected = fingerprint::of(ids, &call.name, &call.arguments, &record.args);
    if run.halted.fingerprint != expected {
        // a named agent is bound too: say so only where there is one
        let halted = &run.halted;
        let (agent, what) = match (&halted.agent, &halted.conversation, &halted.principal) {
            (None, None, None) => (String::new(), "the call, its run id or its request id"),
            (agent, conversation, principal) => (
                format!(
                    "{}{}{}",
                    agent
                        .as_ref()
                        .map_or_else(String::new, |a| format!(" for agent {}", show(a))),
                    conversation
                        .as_ref()
                        .map_or_else(String::new, |c| format!(" in conversation {}", show(c))),
                    principal
                        .as_ref()
                        .map_or_else(String::new, |p| format!(" on behalf of {}", show(p)))
                ),
                "the call, its run id, its request id, its agent's name, its conversation or its principal",
            ),
        };
        return fail(format!(
            "`halted.fingerprint` is {} but the halted call ({} with `messages[{at}].tool_calls[{index}].arguments` {} and `toolCalls[{k}].args` {}, in run {} asking request {}{agent}) hashes to {}: {what} changed after its request was made",
            show(&run.halted.fingerprint),
            show(&call.name),
            show(&call.arguments),
            show(&record.args),
            show(&run.run_id),
            show(&run.pending.id),
            show(&expected)
        ));
    }
    Ok(())
}

/// `pending` is the halted call's own request, field by field.
fn same_request(pending: &Request, own: &Request, k: usize) -> RecordResult<()> {
    // compared as they are (the same equality as their JSON values'); each field's JSON is
    // made only to name a difference
    if pending.id == own.id
        && pending.kind == own.kind
        && pending.prompt == own.prompt
        && pending.url == own.url
        && pending.data == own.data
        && pending.expires_at == own.expires_at
    {
        return Ok(());
    }
    let fields: [(&str, serde_json::Value, serde_json::Value); 6] = [
        ("id", json(&pending.id), json(&own.id)),
        ("kind", json(&pending.kind), json(&own.kind)),
        ("prompt", json(&pending.prompt), json(&own.prompt)),
        ("url", json(&pending.url), json(&own.url)),
        ("data", json(&pending.data), json(&own.data)),
        (
            "expiresAt",
            json(&pending.expires_at),
            json(&own.expires_at),
        ),
    ];
    for (field, a, b) in fields {
        if a != b {
            return fail(format!(
                "`pending.{field}` is {} but the halted call's own request (`toolCalls[{k}].metadata.pending.{field}`) is {}",
                show(&a),
                show(&b)
            ));
        }
    }
    Ok(())
}

fn json(value: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}
