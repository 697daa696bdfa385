//! Crash-cut calls go to a person (CONTRACT section 2, the `reconcile` kind): a call of a tool
//! that is not idempotent, cut by a crash between starting and its result being checkpointed,
//! is not run again on its own.
//!
//! A tool says whether running it twice is safe with its `idempotent` annotation
//! ([`ToolAnnotations::idempotent`](crate::tool::ToolAnnotations::idempotent):
//! `#[tool(idempotent)]`, [`FnToolBuilder::idempotent`](crate::tool::FnToolBuilder::idempotent),
//! MCP's `idempotentHint` of a consumed tool); a tool that does not say so is not. In a run
//! claimed from a store ([`Client::resume_claim`](crate::Client::resume_claim), a
//! [`Worker`](crate::worker::Worker)), the loop saves a checkpoint with a *started marker*
//! before such a tool starts (its name, arguments, idempotency key and start time); the
//! checkpoint with its result replaces it. A worker that takes the run over from a checkpoint
//! holding a marker does not run that call: the run halts on a [`reconcile`](Request::reconcile)
//! request whose `data` is `{"tool", "args", "idempotencyKey", "startedAt"}` (plus a form,
//! `data.schema`), and the answer ([`Reconcile`]) decides:
//!
//! - `{"action": "rerun"}`: the call runs again (with the answer it first ran with, if any);
//! - `{"action": "record", "output": ".."}`: `output` is the call's result, as if the tool had
//!   returned it;
//! - `{"action": "fail", "output"?: ".."}`, or a declined answer: the call fails (`isError`,
//!   the model reads it).
//!
//! An answer that says anything else (an unknown action, `record` without an `output`) is
//! refused: nothing runs and the model reads `reconcile refused: <why>; nothing ran`. Idempotent
//! tools run again after a crash, as before.
//!
//! ```
//! use toolnexus::{Request, reconcile::Reconcile};
//!
//! let r = Request::reconcile("pay", toolnexus::json!({"to": "Ada"}), "k1", "2026-01-01T00:00:00Z");
//! assert_eq!(r.kind, "reconcile");
//! assert_eq!(r.data_entry("idempotencyKey"), Some(&toolnexus::json!("k1")));
//! let answer = Reconcile::Record("paid #42".to_owned()).answer(&r);
//! assert_eq!(answer.data, Some(toolnexus::json!({"action": "record", "output": "paid #42"})));
//! assert_eq!(Reconcile::of(&answer), Ok(Some(Reconcile::Record("paid #42".to_owned()))));
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::limits::excerpt;
use crate::request::{Answer, Request};

pub use crate::request::KIND_RECONCILE;

/// The reconcile answer's actions, as its form offers them.
const ACTIONS: [&str; 3] = ["rerun", "record", "fail"];

impl Request {
    /// A `reconcile` request for the call of `tool` with `args` that started at `started_at`
    /// (RFC 3339) under `idempotency_key` and has no recorded result. `data` holds those four
    /// (`tool`, `args`, `idempotencyKey`, `startedAt`) and a form (`schema`: `action`, one of
    /// `rerun`, `record`, `fail`, and `output`, text) so a generic page or an MCP client can
    /// ask it. When the arguments would make the form fail the trust boundary (a credential
    /// named in them), the form is left out and the request is answered through an API.
    pub fn reconcile(tool: &str, args: Value, idempotency_key: &str, started_at: &str) -> Self {
        let prompt = format!(
            "The call of `{}` started at {started_at} and was cut off by a crash before its result was recorded: it may or may not have taken effect. Run it again, record what it returned, or fail the call?",
            excerpt(tool)
        );
        let mut data = Map::new();
        data.insert("tool".to_owned(), Value::String(tool.to_owned()));
        data.insert("args".to_owned(), args);
        data.insert(
            "idempotencyKey".to_owned(),
            Value::String(idempotency_key.to_owned()),
        );
        data.insert("startedAt".to_owned(), Value::String(started_at.to_owned()));
        let plain = Self::new(KIND_RECONCILE, prompt).with_data(data);
        let with_form = plain.clone().with_data_entry("schema", form_schema());
        if with_form.check_trust_boundary().is_ok() {
            with_form
        } else {
            plain
        }
    }
}

/// The form of a reconcile answer: `action` (required, a string enum) and `output` (text).
fn form_schema() -> Value {
    let mut action = crate::form::enum_schema(&ACTIONS);
    action.insert("title".to_owned(), Value::String("What to do".to_owned()));
    action.insert(
        "description".to_owned(),
        Value::String(
            "rerun: run the call again; record: use the output below as its result; fail: fail the call".to_owned(),
        ),
    );
    let mut output = Map::new();
    output.insert("type".to_owned(), Value::String("string".to_owned()));
    output.insert("title".to_owned(), Value::String("Output".to_owned()));
    output.insert(
        "description".to_owned(),
        Value::String(
            "What the call returned (for record), or why it failed (for fail, optional)".to_owned(),
        ),
    );
    crate::form::object_schema(vec![
        ("action".to_owned(), action, true),
        ("output".to_owned(), output, false),
    ])
}

/// What a person decided for a crash-cut call: the answer to a [`reconcile`](Request::reconcile)
/// request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reconcile {
    /// Run the call again.
    Rerun,
    /// Use this output as the call's result.
    Record(String),
    /// Fail the call, with this output if given.
    Fail(Option<String>),
}

impl Reconcile {
    /// The accepting answer to `request` that says this:
    /// `{"action":"rerun"}`, `{"action":"record","output":..}`, `{"action":"fail","output"?:..}`.
    pub fn answer(self, request: &Request) -> Answer {
        let (action, output) = match self {
            Self::Rerun => ("rerun", None),
            Self::Record(output) => ("record", Some(output)),
            Self::Fail(output) => ("fail", output),
        };
        let mut data = Map::new();
        data.insert("action".to_owned(), Value::String(action.to_owned()));
        if let Some(output) = output {
            data.insert("output".to_owned(), Value::String(output));
        }
        request.accept(Value::Object(data))
    }

    /// What `answer` decides: `None` for a declining answer (the call fails), or the action.
    ///
    /// # Errors
    ///
    /// [`ReconcileError`] when an accepting answer says no known action, or `record` without
    /// an `output` text, or an `output` that is not text.
    pub fn of(answer: &Answer) -> Result<Option<Self>, ReconcileError> {
        if !answer.ok {
            return Ok(None);
        }
        let bad = |why: String| Err(ReconcileError(why));
        let Some(Value::Object(data)) = &answer.data else {
            return bad(
                "the answer carries no `action` (one of `rerun`, `record`, `fail`)".to_owned(),
            );
        };
        let output = match data.get("output") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return bad(format!(
                    "`output` must be text, not {}",
                    crate::limits::excerpt(&other.to_string())
                ));
            }
        };
        match data.get("action").and_then(Value::as_str) {
            Some("rerun") => Ok(Some(Self::Rerun)),
            Some("record") => match output {
                Some(output) => Ok(Some(Self::Record(output))),
                None => bad("`record` needs the call's `output`".to_owned()),
            },
            Some("fail") => Ok(Some(Self::Fail(output))),
            Some(other) => bad(format!(
                "unknown action `{}`; expected `rerun`, `record` or `fail`",
                excerpt(other)
            )),
            None => {
                bad("the answer carries no `action` (one of `rerun`, `record`, `fail`)".to_owned())
            }
        }
    }
}

/// Why a reconcile answer cannot be used; nothing runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconcileError(String);

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid reconcile answer: {}", self.0)
    }
}

impl std::error::Error for ReconcileError {}

/// The key, in a reconcile suspension's metadata, of the request and answer the cut call ran
/// with (a rerun runs with them again).
pub(crate) const RAN_WITH: &str = "toolnexusReconcile";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Reconcile, ReconcileError};
    use crate::request::Request;

    #[test]
    fn the_form_is_left_out_when_the_arguments_would_fail_the_boundary() {
        let with_form =
            Request::reconcile("pay", json!({"to": "Ada"}), "k", "2026-01-01T00:00:00Z");
        assert!(with_form.data_entry("schema").is_some());
        // an argument named like a credential would make the form collect it: no form, and
        // the request (a kind without a form) passes the boundary
        let plain = Request::reconcile(
            "pay",
            json!({"to_iban": "DE00"}),
            "k",
            "2026-01-01T00:00:00Z",
        );
        assert!(with_form.check_trust_boundary().is_ok());
        assert!(plain.check_trust_boundary().is_ok());
        let keys: Vec<&String> = plain.data.as_deref().unwrap().keys().collect();
        assert_eq!(keys, ["args", "idempotencyKey", "startedAt", "tool"]);
    }

    #[test]
    fn answers_read_as_actions() {
        let r = Request::reconcile("t", json!({}), "k", "2026-01-01T00:00:00Z");
        assert_eq!(
            Reconcile::of(&r.decline(crate::DeclineReason::Cancelled)),
            Ok(None)
        );
        assert_eq!(
            Reconcile::of(&Reconcile::Rerun.answer(&r)),
            Ok(Some(Reconcile::Rerun))
        );
        assert_eq!(
            Reconcile::of(&r.accept(json!({"action": "fail", "output": null}))),
            Ok(Some(Reconcile::Fail(None)))
        );
        assert_eq!(
            Reconcile::of(&r.accept("rerun")),
            Err(ReconcileError(
                "the answer carries no `action` (one of `rerun`, `record`, `fail`)".to_owned()
            ))
        );
    }
}
