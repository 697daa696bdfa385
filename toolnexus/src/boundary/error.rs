//! Why a request or an answer was refused by the trust boundary.

use std::fmt;

use crate::limits::MAX_DEPTH;

/// Why a request (or an answer) was refused by the trust boundary; see
/// [`check_request`](super::check_request) and [`check_answer`](super::check_answer).
///
/// Its message names the place (`path`), says why, and says what to use instead: an
/// `authorization` request with a `url`, so a secret never passes through answer data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundaryError {
    pub(super) kind: String,
    pub(super) path: String,
    pub(super) reason: Reason,
    /// Whether an answer (not the request) was refused.
    pub(super) answer: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Reason {
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

    /// Where in the request (or the answer): `prompt`, or a path into its data such as
    /// `data.schema.properties.password`, `data.questions[0].header` or (an answer)
    /// `data.args.account.password`.
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

    /// Whether it is an answer that was refused ([`check_answer`](super::check_answer)), not
    /// a request.
    pub fn is_answer(&self) -> bool {
        self.answer
    }
}

impl fmt::Display for BoundaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.answer {
            write!(
                f,
                "invalid answer: `{}` of the answer to the `{}` request ",
                self.path, self.kind
            )?;
        } else {
            write!(
                f,
                "invalid suspension: `{}` of the `{}` request ",
                self.path, self.kind
            )?;
        }
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
