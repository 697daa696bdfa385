//! [`ToolResult`], what every tool call produces, and [`pending_of`], the one way to ask
//! whether it is a suspension.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::Request;

/// The outcome of one tool call: `{"output", "isError", "metadata"?}`.
///
/// A failure is a `ToolResult` with `is_error: true` handed back to the model. A *suspension*
/// is a `ToolResult` whose `metadata.pending` is a [`Request`]; its `is_error` is true as
/// well, so ask [`pending_of`] (or [`ToolResult::pending`]), never `is_error`.
///
/// ```
/// use toolnexus::{Request, ToolResult, pending_of};
///
/// let ok = ToolResult::success("42");
/// assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"output":"42","isError":false}"#);
/// assert!(pending_of(&ok).is_none());
///
/// let parked = ToolResult::suspended(Request::input("Which city?"));
/// assert!(parked.is_error);
/// assert_eq!(parked.output, "Input required: Which city?");
/// assert_eq!(pending_of(&parked).unwrap().prompt, "Which city?");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// What the model reads.
    pub output: String,
    /// Whether the call produced no value (a failure, or a suspension).
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// Extra data for the host (never shown to the model); `pending` marks a suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The `metadata` object of a [`ToolResult`]: the typed `pending` request of a suspension,
/// then any other keys, in their original order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Metadata {
    /// The request a suspension parks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Box<Request>>,
    /// Every other key.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolResult {
    /// A successful result.
    pub fn success(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: false,
            metadata: None,
        }
    }

    /// A failed result: the model reads `output` and may correct its call.
    pub fn error(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: true,
            metadata: None,
        }
    }

    /// A suspension carrying `request`; its output follows CONTRACT section 2
    /// ([`Request::display_output`]).
    ///
    /// The trust boundary is enforced here: a request that violates
    /// [`Request::check_trust_boundary`] (an `input` or `question` request whose answer schema
    /// collects a credential) makes a plain failure carrying that error instead.
    pub fn suspended(request: Request) -> Self {
        if let Err(e) = request.check_trust_boundary() {
            return Self::error(e.to_string());
        }
        Self {
            output: request.display_output(),
            is_error: true,
            metadata: Some(Metadata {
                pending: Some(Box::new(request)),
                extra: Map::new(),
            }),
        }
    }

    /// Sets one metadata key other than `pending` (creating the object when absent).
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata
            .get_or_insert_with(Metadata::default)
            .extra
            .insert(key.into(), value);
        self
    }

    /// The request this result parks, if it is a suspension. Same as [`pending_of`].
    pub fn pending(&self) -> Option<&Request> {
        pending_of(self)
    }

    /// Takes the parked request out, leaving an ordinary result.
    pub fn into_pending(self) -> Option<Request> {
        self.metadata?.pending.map(|b| *b)
    }

    /// Whether this result is a suspension.
    pub fn is_pending(&self) -> bool {
        self.pending().is_some()
    }

    /// Whether this result is a failure that is not a suspension.
    pub fn is_failure(&self) -> bool {
        self.is_error && !self.is_pending()
    }
}

impl From<Request> for ToolResult {
    fn from(request: Request) -> Self {
        Self::suspended(request)
    }
}

/// The [`Request`] a result parks, or `None` for an ordinary result (success or failure).
///
/// This is the only supported way to ask "did this suspend?": `is_error` is true on a
/// suspension as well as on a plain failure.
pub fn pending_of(result: &ToolResult) -> Option<&Request> {
    result.metadata.as_ref()?.pending.as_deref()
}
