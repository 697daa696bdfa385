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
mod words;

use std::fmt;

use serde_json::Value;

use crate::limits::{MAX_DEPTH, excerpt};
use crate::request::{KIND_INPUT, KIND_QUESTION, Request};

pub(crate) use words::{credential_in, credential_name_in};

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
/// ```
pub fn check_request(request: &Request) -> Result<(), BoundaryError> {
    if !is_guarded(request) {
        return Ok(());
    }
    let fail = |path: String, reason: Reason| BoundaryError {
        kind: request.kind.clone(),
        path,
        reason,
    };
    if let Some(word) = credential_in(&request.prompt) {
        return Err(fail("prompt".to_owned(), text(&request.prompt, word)));
    }
    let Some(data) = &request.data else {
        return Ok(());
    };
    let mut path = vec![Seg::Key("data")];
    for (key, value) in data.iter() {
        path.push(Seg::Key(key));
        let found = check_entry(key, value, &mut path);
        path.pop();
        if let Some((at, reason)) = found {
            return Err(fail(at, reason));
        }
    }
    Ok(())
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

/// The keys whose string value is a name (a field's name or label), read as one: also refused
/// for the words refused in names only (`auth`, `authorization`).
const NAME_KEYS: &[&str] = &["name", "key", "title", "label", "header"];

#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn render(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&excerpt(k));
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

fn text(s: &str, word: &'static str) -> Reason {
    Reason::Text {
        text: excerpt(s).into_owned(),
        word,
    }
}

/// One `key: value` of an object; `path` ends with the key.
fn check_entry<'a>(
    key: &'a str,
    value: &'a Value,
    path: &mut Vec<Seg<'a>>,
) -> Option<(String, Reason)> {
    if let Some(word) = credential_name_in(key) {
        return Some((
            render(path),
            Reason::Name {
                name: excerpt(key).into_owned(),
                word,
            },
        ));
    }
    if key == "format"
        && let Value::String(f) = value
        && credential_name_in(f).is_some()
    {
        return Some((
            render(&path[..path.len() - 1]),
            Reason::Format {
                format: excerpt(f).into_owned(),
            },
        ));
    }
    if key == "writeOnly" && value == &Value::Bool(true) {
        return Some((render(&path[..path.len() - 1]), Reason::WriteOnly));
    }
    if let Value::String(s) = value
        && NAME_KEYS.contains(&key)
    {
        return credential_name_in(s).map(|word| (render(path), text(s, word)));
    }
    check_value(value, path)
}

fn check_value<'a>(value: &'a Value, path: &mut Vec<Seg<'a>>) -> Option<(String, Reason)> {
    // `data` is path[0]; one level per container below it
    if path.len() > MAX_DEPTH {
        return Some((render(&path[..MAX_DEPTH.min(8)]), Reason::TooDeep));
    }
    match value {
        Value::String(s) => credential_in(s).map(|word| (render(path), text(s, word))),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            path.push(Seg::Index(i));
            let found = check_value(item, path);
            path.pop();
            found
        }),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            path.push(Seg::Key(k));
            let found = check_entry(k, v, path);
            path.pop();
            found
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Why a request was refused by the trust boundary; see [`check_request`].
///
/// Its message names the place (`path`), says why, and says what to use instead: an
/// `authorization` request with a `url`, so a secret never passes through answer data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundaryError {
    kind: String,
    path: String,
    reason: Reason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Reason {
    Name { name: String, word: &'static str },
    Text { text: String, word: &'static str },
    Format { format: String },
    WriteOnly,
    TooDeep,
}

impl BoundaryError {
    /// The request's kind, as given.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Where in the request: `prompt`, or a path into its data such as
    /// `data.schema.properties.password` or `data.questions[0].header`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The credential word found, if the refusal is about a word (not a `format`, a
    /// `writeOnly` or the nesting depth).
    pub fn word(&self) -> Option<&'static str> {
        match &self.reason {
            Reason::Name { word, .. } | Reason::Text { word, .. } => Some(word),
            _ => None,
        }
    }
}

impl fmt::Display for BoundaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid suspension: `{}` of the `{}` request ",
            self.path, self.kind
        )?;
        match &self.reason {
            Reason::Name { name, word } => write!(
                f,
                "has the name `{name}`, which reads as the credential word `{word}`"
            )?,
            Reason::Text { text, word } => write!(
                f,
                "has the text `{text}`, which mentions the credential word `{word}`"
            )?,
            Reason::Format { format } => {
                write!(f, "has `\"format\": \"{format}\"`, which collects a secret")?;
            }
            Reason::WriteOnly => f.write_str("is marked `\"writeOnly\": true`, a secret")?,
            Reason::TooDeep => write!(
                f,
                "nests deeper than {MAX_DEPTH} levels, too deep to check for credentials"
            )?,
        }
        f.write_str("; secrets must never pass through answer data: use an `authorization` request with a `url` instead")
    }
}

impl std::error::Error for BoundaryError {}
