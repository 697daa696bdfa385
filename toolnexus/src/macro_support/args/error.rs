//! The decoding error of `#[derive(Args)]`: serde's message, at the path inside the value.

use crate::limits::excerpt;
use serde::de::{self, Unexpected};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

// ---------------------------------------------------------------------------------------------
// the error

/// A value that does not decode: serde's message, and where in the value it is.
pub struct ArgError(Box<ErrorInner>);

struct ErrorInner {
    /// Innermost first.
    path: Vec<Segment>,
    message: String,
}

enum Segment {
    /// A field's key (static: no allocation for the path of an error) or a map's key.
    Key(Cow<'static, str>),
    Index(usize),
}

impl ArgError {
    pub(super) fn new(message: impl fmt::Display) -> Self {
        Self(Box::new(ErrorInner {
            path: Vec::new(),
            message: message.to_string(),
        }))
    }

    pub(super) fn serde(e: &serde_json::Error) -> Self {
        Self::new(e)
    }

    /// The error, one key further out.
    #[must_use]
    pub fn at_key(mut self, key: &str) -> Self {
        self.0.path.push(Segment::Key(Cow::Owned(key.to_owned())));
        self
    }

    /// The error, one field further out (a key known at compile time).
    #[must_use]
    pub fn at_field(mut self, key: &'static str) -> Self {
        self.0.path.push(Segment::Key(Cow::Borrowed(key)));
        self
    }

    #[must_use]
    pub(super) fn at_map_key(mut self, key: String) -> Self {
        self.0.path.push(Segment::Key(Cow::Owned(key)));
        self
    }

    #[must_use]
    pub(super) fn at_index(mut self, index: usize) -> Self {
        self.0.path.push(Segment::Index(index));
        self
    }

    /// ``unknown field `key`, expected ..`` (serde's `deny_unknown_fields` wording).
    pub fn unknown_field(key: &str, expected: &'static [&'static str]) -> Self {
        Self::serde(&de::Error::unknown_field(key, expected))
    }

    /// ``missing field `key` ``.
    pub fn missing_field(key: &'static str) -> Self {
        Self::serde(&de::Error::missing_field(key))
    }

    /// ``unknown variant `tag`, expected ..``.
    pub fn unknown_variant(tag: &str, expected: &'static [&'static str]) -> Self {
        Self::serde(&de::Error::unknown_variant(tag, expected))
    }

    /// ``invalid type: <what the value is>, expected <expected>``.
    pub fn invalid_type(value: &Value, expected: &'static str) -> Self {
        Self::serde(&de::Error::invalid_type(unexpected(value), &expected))
    }

    /// Where the error is (`amount`, `items[2].name`; empty at the root).
    pub fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.0.path.iter().rev() {
            match seg {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Index(i) => {
                    use fmt::Write as _;
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }

    /// What is wrong, in serde's words.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            f.write_str(&self.0.message)
        } else {
            write!(f, "{}: {}", excerpt(&path), self.0.message)
        }
    }
}

impl fmt::Debug for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ArgError").field(&self.to_string()).finish()
    }
}

/// What a value is, in serde's terms (serde_json spells a `Unit` as `null`).
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Unexpected::Unsigned(u)
            } else if let Some(i) = n.as_i64() {
                Unexpected::Signed(i)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}
