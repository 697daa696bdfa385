//! What `#[tool(approval = "..")]` expands to: the prompt formatted from the call's arguments,
//! and the gate that asks for approval before the body runs.

use serde_json::{Map, Value};

use crate::context::Context;
use crate::request::{DeclineReason, Request};
use crate::result::ToolResult;

/// One piece of an approval prompt: text as written, or the argument of a property.
#[derive(Clone, Copy, Debug)]
pub enum PromptPiece {
    /// Text, as written.
    Text(&'static str),
    /// The argument of this property: a string as its text, a number as Rust's `Display`
    /// writes it (`140`, not JSON's `140.0`, as the tool's own `format!` of an `f64` would),
    /// anything else as compact JSON, an absent argument as `null`.
    Arg(&'static str),
}

/// The prompt, from the arguments as the model sent them.
pub fn approval_prompt(args: &Map<String, Value>, pieces: &[PromptPiece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            PromptPiece::Text(t) => out.push_str(t),
            PromptPiece::Arg(key) => match args.get(*key) {
                Some(Value::String(s)) => out.push_str(s),
                Some(Value::Number(n)) => out.push_str(&display_number(n)),
                Some(v) => out.push_str(&v.to_string()),
                None => out.push_str("null"),
            },
        }
    }
    out
}

/// A JSON number as Rust's `Display` writes the integer or float it holds.
fn display_number(n: &serde_json::Number) -> String {
    if let Some(u) = n.as_u64() {
        u.to_string()
    } else if let Some(i) = n.as_i64() {
        i.to_string()
    } else {
        n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string())
    }
}

/// Before the body: without an answer, the `approval` suspension to return; with a declining
/// one, `<reason>: <prompt>` (`declined: <prompt>` by default); with an accepting one, the
/// context the body runs with, without that answer (so an `ask!` in the body asks afresh
/// instead of reading the approval as its own answer).
pub fn approval_gate(ctx: &Context, prompt: String) -> Result<Context, ToolResult> {
    match ctx.answer() {
        None => Err(ToolResult::suspended(Request::approval(prompt))),
        Some(answer) if answer.ok => Ok(ctx.clone().without_answer()),
        Some(answer) => Err(ToolResult::error(format!(
            "{}: {prompt}",
            answer.reason.clone().unwrap_or(DeclineReason::Declined)
        ))),
    }
}

/// For `#[tool(approval = "..", editable)]`: the arguments as proposed, kept for the
/// approval request (only on the first call, which asks; a retry carries the answer).
pub fn proposed_args(ctx: &Context, args: &Map<String, Value>) -> Option<Value> {
    ctx.answer().is_none().then(|| Value::Object(args.clone()))
}

/// [`approval_gate`] for a tool whose approvals may be edited: the request carries the
/// proposed arguments and the tool's schema (`data.args`, `data.argsSchema`).
pub fn approval_gate_editable(
    ctx: &Context,
    prompt: String,
    proposed: Option<Value>,
    schema: &Value,
) -> Result<Context, ToolResult> {
    match (ctx.answer(), proposed) {
        (None, Some(args)) => Err(ToolResult::suspended(Request::editable_approval(
            prompt,
            args,
            schema.clone(),
        ))),
        _ => approval_gate(ctx, prompt),
    }
}

/// For `#[tool(approval = "..", approvals = N, not_by_requester)]`: the gate's result, its
/// request (when it is a suspension) needing `approvals` approvers and refusing the run's
/// own principal when `not_by_requester`; any other result as it is.
pub fn govern_approval(
    mut result: ToolResult,
    approvals: u32,
    not_by_requester: bool,
) -> ToolResult {
    if let Some(request) = result.metadata.as_mut().and_then(|m| m.pending.as_mut()) {
        let mut governed = request.as_ref().clone().with_approvals(approvals);
        if not_by_requester {
            governed = governed.with_not_by_requester();
        }
        **request = governed;
    }
    result
}

/// For `#[tool(approval = "..", approvers = "..", expires_in = "..", escalate(..))]`: the
/// request a gate makes (its `Err`, a suspension) carries the group that may answer it, its
/// deadline (`expires_in`, seconds from now) and its escalation steps (group, seconds after the
/// deadline before). Anything else passes through.
pub fn governed(
    gate: Result<Context, ToolResult>,
    approvers: Option<&str>,
    expires_in: Option<u64>,
    escalate: &[(&str, u64)],
) -> Result<Context, ToolResult> {
    let result = match gate {
        Err(result) => result,
        ok => return ok,
    };
    let Some(request) = crate::pending_of(&result) else {
        return Err(result);
    };
    let mut request = request.clone();
    if let Some(group) = approvers {
        request = request.with_approvers(group);
    }
    if let Some(secs) = expires_in {
        request = request.expires_in(std::time::Duration::from_secs(secs));
    }
    for (group, secs) in escalate {
        request = request.escalate_to(*group, std::time::Duration::from_secs(*secs));
    }
    Err(ToolResult::suspended(request))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{PromptPiece, approval_prompt};

    #[test]
    fn numbers_read_as_rust_displays_them() {
        let pieces = [
            PromptPiece::Text("Refund "),
            PromptPiece::Arg("amount"),
            PromptPiece::Text(" of "),
            PromptPiece::Arg("count"),
            PromptPiece::Text(" to "),
            PromptPiece::Arg("who"),
            PromptPiece::Text(" "),
            PromptPiece::Arg("tags"),
            PromptPiece::Arg("missing"),
        ];
        let args = json!({"amount": 140.0, "count": -3, "who": "Ada", "tags": ["a", 1.5]});
        assert_eq!(
            approval_prompt(args.as_object().unwrap(), &pieces),
            format!("Refund {} of {} to Ada [\"a\",1.5]null", 140.0_f64, -3)
        );
        assert_eq!(format!("{}", 140.0_f64), "140");
        let args = json!({"amount": 0.1, "count": 18_446_744_073_709_551_615_u64});
        assert_eq!(
            approval_prompt(args.as_object().unwrap(), &pieces[..4]),
            "Refund 0.1 of 18446744073709551615"
        );
    }
}
