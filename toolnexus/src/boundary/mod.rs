//! The credential trust boundary (CONTRACT section 2): no request that carries a form or a
//! free-text answer collects a credential. [`check_request`] is the one check, applied at every
//! door a request passes: a tool's result ([`Toolkit::execute`](crate::Toolkit::execute),
//! [`ToolResult::suspended`](crate::ToolResult::suspended)), a `before_tool` hook's returned
//! suspension, `suspend!`/`ask!` ([`Suspension::new`](crate::Suspension::new)), the built-in
//! [`QuestionTool`](crate::question::QuestionTool), the answer page (a refused request is never
//! rendered), MCP serving (before an elicitation leaves) and MCP consuming (before an incoming
//! elicitation reaches the host's handler; a refused one is declined to the server). A request
//! built by hand that a host is about to show a human: call it before you render one.
//!
//! Which requests: every `input` and `question` request (they take a free-text answer or a
//! form), and a request of **any** kind whose `data` holds a form: a `schema`, `fields`, `form`
//! or `questions` entry (`login`, `user_input`, an `approval` or an `authorization` with a
//! form...). The one way to a secret is an `authorization` request with a `url` and no form:
//! the human enters the secret there, and it never passes through `data`, the answer, or the
//! model's context. Kinds and those keys are compared case-insensitively, after folding
//! confusables (`"Input"` is an input request, `"Schema"` a form).
//!
//! What it reads: the request's `prompt` and everything in its `data`, at any depth: every
//! key (so every property name of every schema, under `properties`, `items`, `allOf`/`anyOf`/
//! `oneOf`, `$defs`, in `data.fields` or `data.form`), every string (question texts, headers,
//! descriptions, titles, options), `"format": "password"` (any `format` that reads as a
//! credential) and `"writeOnly": true`.
//!
//! How it reads names: split into words at separators, camelCase humps, acronyms and digits,
//! with Unicode confusables folded (a Cyrillic `а` reads as `a`, by a table the project owns);
//! then matched against one word list (owned by `toolnexus-macros`, which checks
//! `#[derive(Form)]` fields by the same list at compile time). Names (keys, and the strings
//! under `name`, `key`, `title`, `label`, `header` and `format`) are also refused for `auth`
//! and `authorization`, which prose may use innocently. It errs on the side of refusing: a
//! question about a `cookie` or a `pin` is refused too; rephrase it, or use another kind.

mod confusables;
mod error;
#[cfg(test)]
mod tests;
mod walk;
mod words;

use std::collections::HashSet;

use serde_json::Value;

pub use error::BoundaryError;
pub(crate) use words::{credential_in, credential_name_in};

use crate::request::{Answer, KIND_INPUT, KIND_QUESTION, KIND_RECONCILE, Request};
use walk::{Reading, Seg};

/// Checks the trust boundary: an `input` or `question` request, or a request of any kind
/// that carries a form (`data.schema`, `data.fields`, `data.form` or `data.questions`), must
/// not collect a credential anywhere a human would fill in or read (see the
/// [module docs](self) for what is read, and how). Other requests (an `approval` or an
/// `authorization` without a form, a custom kind without one) pass unchecked: they collect
/// nothing.
///
/// # Errors
///
/// [`BoundaryError`] naming the first offending place in the request, why, and what to use
/// instead.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Request, boundary::check_request};
///
/// let ok = Request::input("Which city?")
///     .with_data_entry("schema", json!({"type": "object", "properties": {"city": {"type": "string"}}}));
/// assert!(check_request(&ok).is_ok());
///
/// let bad = Request::custom("Input", "Log in")
///     .with_data_entry("schema", json!({"type": "object", "properties": {
///         "account": {"type": "object", "properties": {"newPassword": {"type": "string"}}}
///     }}));
/// let err = check_request(&bad).unwrap_err();
/// assert_eq!(err.path(), "data.schema.properties.account.properties.newPassword");
/// assert_eq!(
///     err.to_string(),
///     "invalid suspension: `data.schema.properties.account.properties.newPassword` of the `Input` request has the name `newPassword`, which reads as the credential word `password`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
/// );
///
/// // any kind that carries a form is checked
/// let login = Request::custom("login", "Online banking")
///     .with_data_entry("schema", json!({"type": "object", "properties": {
///         "p": {"type": "string", "title": "Online-banking password"}
///     }}));
/// assert_eq!(check_request(&login).unwrap_err().path(), "data.schema.properties.p.title");
///
/// // the way to a secret: an authorization request with a url, and no form
/// assert!(check_request(&Request::authorization("https://bank.example/login")).is_ok());
///
/// // the crate's own hex idempotency key is no prose, whatever letters it happens to hold
/// let cut = Request::reconcile("pay", json!({"to": "Ada"}), "9c2fa0", "2026-01-01T00:00:00Z");
/// assert!(cut.data_entry("schema").is_some());
/// assert!(check_request(&cut).is_ok());
/// ```
pub fn check_request(request: &Request) -> Result<(), BoundaryError> {
    if !is_guarded(request) {
        return Ok(());
    }
    let fail = |path: String, reason| BoundaryError {
        kind: request.kind.clone(),
        path,
        reason,
        answer: false,
    };
    if let Some(word) = credential_in(&request.prompt) {
        return Err(fail("prompt".to_owned(), walk::text(&request.prompt, word)));
    }
    let Some(data) = &request.data else {
        return Ok(());
    };
    let mut path = vec![Seg::Key("data")];
    for (key, value) in data.iter() {
        if crate_made(&request.kind, key, value) {
            continue;
        }
        path.push(Seg::Key(key));
        let found = walk::entry(key, value, None, &mut path, &Reading::Request);
        path.pop();
        if let Some((at, reason)) = found {
            return Err(fail(at, reason));
        }
    }
    Ok(())
}

/// Checks an answer against the trust boundary, by the walk [`check_request`] reads requests
/// with: no key of its `data`, at any depth (nested objects and arrays), may name a credential
/// (the same rule and spellings: `password`, `Password`, `pass_word`, a Cyrillic `а`, a
/// zero-width space...), unless the request asked for it:
///
/// - a key that is a name or text of the request's form (`data.schema`, `fields`, `form`,
///   `questions`: which passed [`check_request`]) is the form's own;
/// - in an editable approval's answer, `data.args` (the arguments to run instead) may keep a
///   value the model proposed where it was (`data.args` of the request), at any depth; a
///   credential-named key the edit changes or adds is refused, one level down as at the top.
///
/// An answer that declines, or carries no data, passes. Values are not read as prose. The loop
/// checks every answer before a tool runs with it (an edit refused here runs nothing, and the
/// model reads why); the answer page checks it before recording it. A host that records answers
/// itself ([`RunStore::submit`](crate::store::RunStore::submit)) can call it first.
///
/// # Errors
///
/// [`BoundaryError`] (with [`is_answer`](BoundaryError::is_answer) true) naming the first
/// offending key, such as `data.args.account.password`.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Request, boundary::check_answer};
///
/// let approval = Request::editable_approval("Sign in?", json!({"user": "ada", "account": {"password": "from-the-model"}}), json!({}));
/// // keeping what the model proposed is no typing
/// let kept = approval.approve_with(json!({"user": "bob", "account": {"password": "from-the-model"}}));
/// assert!(check_answer(&approval, &kept).is_ok());
/// // a secret typed one level down is refused
/// let typed = approval.approve_with(json!({"user": "ada", "account": {"password": "hunter2"}}));
/// let err = check_answer(&approval, &typed).unwrap_err();
/// assert_eq!(err.path(), "data.args.account.password");
/// assert_eq!(
///     err.to_string(),
///     "invalid answer: `data.args.account.password` of the answer to the `approval` request has the name `password`, which reads as the credential word `password`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
/// );
///
/// // a form's answer may use the form's names, and nothing that names a credential
/// let city = Request::input("Where to?")
///     .with_data_entry("schema", json!({"type": "object", "properties": {"city": {"type": "string"}}}));
/// assert!(check_answer(&city, &city.accept(json!({"city": "Oslo"}))).is_ok());
/// let smuggled = city.accept(json!({"city": "Oslo", "extra": [{"Pass_Word": "x"}]}));
/// assert_eq!(check_answer(&city, &smuggled).unwrap_err().path(), "data.extra[0].Pass_Word");
/// ```
pub fn check_answer(request: &Request, answer: &Answer) -> Result<(), BoundaryError> {
    let Some(data) = answer.data.as_ref().filter(|_| answer.ok) else {
        return Ok(());
    };
    let mut offered = HashSet::new();
    for (key, value) in request.data.iter().flat_map(|d| d.iter()) {
        if is_one_of(key, FORM_KEYS) {
            walk::names_and_texts(value, &mut offered);
        }
    }
    let nothing = HashSet::new();
    let proposed = request.proposed_args();
    let mut path = vec![Seg::Key("data")];
    let found = match data {
        Value::Object(map) => map.iter().find_map(|(key, value)| {
            path.push(Seg::Key(key));
            // an edit's arguments: beside the proposal, with no name offered
            let found = match proposed.filter(|_| key == crate::request::DATA_ARGS) {
                Some(proposed) => walk::walk(
                    value,
                    Some(proposed),
                    &mut path,
                    &Reading::Answer { offered: &nothing },
                ),
                None => walk::entry(
                    key,
                    value,
                    None,
                    &mut path,
                    &Reading::Answer { offered: &offered },
                ),
            };
            path.pop();
            found
        }),
        other => walk::walk(
            other,
            None,
            &mut path,
            &Reading::Answer { offered: &offered },
        ),
    };
    match found {
        None => Ok(()),
        Some((path, reason)) => Err(BoundaryError {
            kind: request.kind.clone(),
            path,
            reason,
            answer: true,
        }),
    }
}

/// Whether `data.<key>` of a request of `kind` holds a value the crate writes itself, not
/// prose: a [`reconcile`](Request::reconcile) request's `idempotencyKey` while it is lowercase
/// hex (the crate's keys are SHA-256 in hex), and its `startedAt` while it is an RFC 3339 time.
/// Only those exact keys of that kind, and only values of that shape: a tool cannot bring prose
/// through them.
fn crate_made(kind: &str, key: &str, value: &Value) -> bool {
    let Value::String(s) = value else {
        return false;
    };
    kind == KIND_RECONCILE
        && match key {
            "idempotencyKey" => {
                !s.is_empty()
                    && s.len() <= 128
                    && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
            "startedAt" => {
                time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                    .is_ok()
            }
            _ => false,
        }
}

/// The `data` keys that hold a form a human fills in.
const FORM_KEYS: &[&str] = &["schema", "fields", "form", "questions"];

/// Whether the boundary applies: an `input` or `question` request, or one whose `data` holds
/// a form ([`FORM_KEYS`]); kinds and keys compared case-insensitively after folding confusables.
fn is_guarded(request: &Request) -> bool {
    is_one_of(&request.kind, &[KIND_INPUT, KIND_QUESTION])
        || request
            .data
            .as_ref()
            .is_some_and(|data| data.keys().any(|k| is_one_of(k, FORM_KEYS)))
}

/// Whether `name` is one of `words` (lowercase), case-insensitively, after folding confusables
/// (`Input`, `SCHEMA`, a Cyrillic `ѕchema`).
fn is_one_of(name: &str, words: &[&str]) -> bool {
    if words.iter().any(|w| name.eq_ignore_ascii_case(w)) {
        return true;
    }
    if name.is_ascii() {
        return false;
    }
    let w = words::words(name);
    matches!(w.as_slice(), [one] if words.contains(&one.as_str()))
}
