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
    /// The edit cannot run (why); nothing runs.
    Refused(String),
}

/// What the model reads for a refused edit: `edit refused: <why>; nothing ran`.
pub(crate) fn refused(why: &str) -> ToolResult {
    ToolResult::error(format!("edit refused: {why}; nothing ran"))
}

/// The arguments `answer` carries for `tool`'s approval `request`, checked: the tool must
/// allow edits and have asked with its proposed arguments; the edit must be an object no
/// deeper than [`MAX_DEPTH`] that fits the tool's input schema, and must not put a
/// credential the person typed into a field the boundary names as one.
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
        return Edit::Unchanged;
    };
    let name = excerpt(name);
    let Some(tool) = tool.filter(|t| t.approval_edits()) else {
        return Edit::Refused(format!(
            "`{name}` does not allow editing its arguments on approval"
        ));
    };
    let Some(proposed) = request.proposed_args() else {
        return Edit::Refused(format!(
            "the approval of `{name}` did not offer its arguments for editing"
        ));
    };
    if crate::limits::depth(wanted, MAX_DEPTH) > MAX_DEPTH {
        return Edit::Refused(format!(
            "the edited arguments nest more than {MAX_DEPTH} levels deep"
        ));
    }
    let Value::Object(args) = wanted else {
        return Edit::Refused("the edited arguments must be a JSON object".to_owned());
    };
    if let Err(why) = conforms(tool.input_schema(), wanted) {
        return Edit::Refused(format!(
            "the edited arguments do not fit `{name}`'s parameters: {why}"
        ));
    }
    if let Some(key) = crate::form::edited_credential(proposed.as_object(), args) {
        return Edit::Refused(format!(
            "the edit changes `{}`, which holds a credential; secrets never pass through answer data",
            excerpt(key)
        ));
    }
    Edit::Args(args.clone())
}
