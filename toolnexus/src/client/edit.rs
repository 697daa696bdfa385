//! Edited approvals (CONTRACT section 2): the arguments a person approved instead of the
//! model's, checked before they run. The loop's part of the rule; the request side is
//! [`Request::editable_approval`] and [`Tool::approval_edits`].

use serde_json::{Map, Value};

use crate::limits::{MAX_DEPTH, excerpt};
use crate::request::{Answer, KIND_APPROVAL, Request};
use crate::result::ToolResult;
use crate::tool::{Tool, conforms};

/// What an accepting answer to an approval says about the arguments to run.
#[derive(Debug)]
pub(crate) enum Edit {
    /// No other arguments: the call runs with the ones the person was shown.
    Unchanged,
    /// These arguments, checked, run instead.
    Args(Map<String, Value>),
    /// The edit (or the answer) cannot run: what the model reads; nothing runs.
    Refused(String),
}

/// What the model reads for a refused edit or answer: `edit refused: <why>; nothing ran`, or
/// `invalid answer: <why>; nothing ran` for an answer the trust boundary refuses.
pub(crate) fn refused(text: &str) -> ToolResult {
    ToolResult::error(text)
}

/// An edit refused for `why`.
fn edit_refused(why: &str) -> Edit {
    Edit::Refused(format!("edit refused: {why}; nothing ran"))
}

/// Where under the edited arguments a boundary refusal points (`account.password`), when it is
/// about them.
pub(crate) fn in_args(error: &crate::boundary::BoundaryError) -> Option<&str> {
    error.path().strip_prefix("data.args.")
}

/// What the model reads when `answer` fails the trust boundary's walk
/// ([`check_answer`](crate::boundary::check_answer)), if it does: `edit refused: the edit
/// changes `<path>`, ...` for an edit's arguments, `invalid answer: ...; nothing ran` otherwise.
pub(crate) fn boundary_refusal(request: &Request, answer: &Answer) -> Option<String> {
    let e = crate::boundary::check_answer(request, answer).err()?;
    Some(
        match in_args(&e).filter(|_| request.proposed_args().is_some()) {
            Some(at) => format!(
                "edit refused: the edit changes `{at}`, which holds a credential; secrets never pass through answer data; nothing ran"
            ),
            None => format!("{e}; nothing ran"),
        },
    )
}

/// The arguments `answer` carries for `tool`'s approval `request`, checked: the tool must
/// allow edits and have asked with its proposed arguments; the edit must be an object no
/// deeper than [`MAX_DEPTH`] that fits the tool's input schema, and must not put a
/// credential the person typed into a field the boundary names as one, at any depth.
/// Every answer, an edit or not, passes the trust boundary's walk
/// ([`check_answer`](crate::boundary::check_answer); an edit once it fits the tool's
/// parameters): the loop and the MCP server resolve every answer through here.
pub(crate) fn edited(
    tool: Option<&dyn Tool>,
    name: &str,
    request: &Request,
    answer: &Answer,
) -> Edit {
    let wanted = match answer.data.as_ref() {
        Some(Value::Object(data)) if answer.ok && request.kind == KIND_APPROVAL => data.get("args"),
        _ => None,
    };
    let Some(wanted) = wanted else {
        return match boundary_refusal(request, answer) {
            Some(refused) => Edit::Refused(refused),
            None => Edit::Unchanged,
        };
    };
    let name = excerpt(name);
    let Some(tool) = tool.filter(|t| t.approval_edits()) else {
        return edit_refused(&format!(
            "`{name}` does not allow editing its arguments on approval"
        ));
    };
    if request.proposed_args().is_none() {
        return edit_refused(&format!(
            "the approval of `{name}` did not offer its arguments for editing"
        ));
    }
    if crate::limits::depth(wanted, MAX_DEPTH) > MAX_DEPTH {
        return edit_refused(&format!(
            "the edited arguments nest more than {MAX_DEPTH} levels deep"
        ));
    }
    let Value::Object(args) = wanted else {
        return edit_refused("the edited arguments must be a JSON object");
    };
    if let Err(why) = conforms(tool.input_schema(), wanted) {
        return edit_refused(&format!(
            "the edited arguments do not fit `{name}`'s parameters: {why}"
        ));
    }
    if let Some(refused) = boundary_refusal(request, answer) {
        return Edit::Refused(refused);
    }
    Edit::Args(args.clone())
}
