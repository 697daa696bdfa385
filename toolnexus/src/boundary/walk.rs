//! The one walk of the trust boundary: every value of a request's `data`, or of an answer's,
//! at any depth (objects and arrays, up to [`MAX_DEPTH`] levels), read as its reading says.
//! [`check_request`](super::check_request) reads what a human reads; [`check_answer`](super::check_answer)
//! reads the names an answer carries. Every door calls one of those two.

use std::collections::HashSet;

use serde_json::Value;

use super::error::Reason;
use super::words::{credential_in, credential_name_in};
use crate::limits::{MAX_DEPTH, excerpt};

/// How the walk reads what it passes.
pub(super) enum Reading<'r> {
    /// A request's `data`, as a human reads it: every key as a name; the strings under the
    /// [`NAME_KEYS`] as names, every other string as prose; a `format` that reads as a
    /// credential; `"writeOnly": true`.
    Request,
    /// An answer's `data`: its keys, as names. A key the request asked for (`offered`: the
    /// names and texts of its form) is the request's own. Where the answer stands beside a
    /// value the request offered (an edit beside the proposed arguments), a place holding what
    /// was offered is no one's typing and is not read.
    Answer {
        /// The names and texts of the request's form.
        offered: &'r HashSet<&'r str>,
    },
}

/// The keys whose string value is a name (a field's name or label), read as one: also refused
/// for the words refused in names only (`auth`, `authorization`).
const NAME_KEYS: &[&str] = &["name", "key", "title", "label", "header"];

/// One step of a path into a value.
#[derive(Clone, Copy)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `data.schema.properties.a.items[0]`: each key quoted short.
pub(super) fn render(path: &[Seg<'_>]) -> String {
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

/// The reason a text reads as a credential.
pub(super) fn text(s: &str, word: &'static str) -> Reason {
    Reason::Text {
        text: excerpt(s).into_owned(),
        word,
    }
}

/// What the walk found: where (the rendered path) and why.
pub(super) type Found = (String, Reason);

/// One `key: value` of an object; `path` ends with the key. `was`: the value the request
/// offered at this place, if any.
pub(super) fn entry<'a>(
    key: &'a str,
    value: &'a Value,
    was: Option<&'a Value>,
    path: &mut Vec<Seg<'a>>,
    reading: &Reading<'_>,
) -> Option<Found> {
    if was == Some(value) {
        // as offered: nothing anyone typed here
        return None;
    }
    let offered = match reading {
        Reading::Answer { offered } => offered.contains(key),
        Reading::Request => false,
    };
    if !offered && let Some(word) = credential_name_in(key) {
        return Some((
            render(path),
            Reason::Name {
                name: excerpt(key).into_owned(),
                word,
            },
        ));
    }
    if let Reading::Request = reading {
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
    }
    walk(value, was, path, reading)
}

/// Every value inside `value` (whose place is `path`, starting at `data`), at any depth up to
/// [`MAX_DEPTH`] levels below `data`; deeper is refused as too deep to check.
pub(super) fn walk<'a>(
    value: &'a Value,
    was: Option<&'a Value>,
    path: &mut Vec<Seg<'a>>,
    reading: &Reading<'_>,
) -> Option<Found> {
    // `data` is path[0], and a container at level k of the value sits at path length k: a
    // container past MAX_DEPTH levels is too deep to check (its scalars are not)
    if path.len() > MAX_DEPTH && (value.is_array() || value.is_object()) {
        return Some((render(&path[..MAX_DEPTH.min(8)]), Reason::TooDeep));
    }
    match value {
        Value::String(s) => match reading {
            Reading::Request => credential_in(s).map(|word| (render(path), text(s, word))),
            // what a person typed as a value is theirs to say; the names carry the form
            Reading::Answer { .. } => None,
        },
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            path.push(Seg::Index(i));
            let beside = was.and_then(|w| w.get(i));
            let found = if beside == Some(item) {
                None
            } else {
                walk(item, beside, path, reading)
            };
            path.pop();
            found
        }),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            path.push(Seg::Key(k));
            let found = entry(k, v, was.and_then(|w| w.get(k)), path, reading);
            path.pop();
            found
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Every key and string inside `value`: the names and texts of a form, which an answer to it
/// may use as its keys.
pub(super) fn names_and_texts<'a>(value: &'a Value, out: &mut HashSet<&'a str>) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                out.insert(s);
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    out.insert(k);
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
}
