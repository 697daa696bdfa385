//! [`ToolResult`], what every tool call produces; [`pending_of`], the one way to ask whether it
//! is a suspension; and the return mapping ([`IntoToolResult`], [`Json`]) that turns what a
//! tool function returns into one.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::Request;

/// The outcome of one tool call: `{"output", "isError", "metadata"?, "parts"?}`.
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
    pub metadata: Option<Box<Metadata>>,
    /// Content parts beside the text (images, files, audio), in order; sent to the model as
    /// the provider's content blocks. Omitted from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ContentPart>,
}

/// The kind of a [`ContentPart`] that carries an image.
pub const PART_IMAGE: &str = "image";
/// The kind of a [`ContentPart`] that carries a file (a PDF, a text file, ...).
pub const PART_FILE: &str = "file";
/// The kind of a [`ContentPart`] that carries audio.
pub const PART_AUDIO: &str = "audio";
/// The kind of a [`ContentPart`] that embeds a resource (MCP's embedded resource): `url` is
/// the resource's URI, its content is inline, as `text` (a key of its own) or as base64 `data`.
pub const PART_RESOURCE: &str = "resource";
/// The kind of a [`ContentPart`] that links to a resource (MCP's resource link): `url` is the
/// resource's URI, `name` (a key of its own) names it.
pub const PART_RESOURCE_LINK: &str = "resource_link";

/// One content part of a [`ToolResult`]: `{"type", "data"?, "mimeType"?, "url"?, ...}`.
///
/// `type` is `image`, `file` or `audio` (the family's vocabulary), or `resource` and
/// `resource_link` (MCP's embedded resources and resource links, see
/// [`resource_text`](Self::resource_text) and [`resource_link`](Self::resource_link)); any
/// other kind read from another port is kept as it is. A part carries its bytes inline (`data`, base64, with its
/// `mimeType`) or points at them (`url`). Keys this port does not know (a file's `name`, say)
/// are kept, after the known ones, so a result read from another port loses nothing.
///
/// ```
/// use toolnexus::{ToolResult, result::ContentPart};
///
/// let r = ToolResult::success("the chart")
///     .with_part(ContentPart::image("iVBORw0KGgo=", "image/png"))
///     .with_part(ContentPart::url("file", "https://example.com/report.pdf"));
/// assert_eq!(
///     serde_json::to_string(&r).unwrap(),
///     r#"{"output":"the chart","isError":false,"parts":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"file","url":"https://example.com/report.pdf"}]}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContentPart {
    /// `image`, `file`, `audio` ([`PART_IMAGE`], [`PART_FILE`], [`PART_AUDIO`]), or another
    /// port's kind.
    #[serde(rename = "type")]
    pub kind: String,
    /// The bytes, base64-encoded (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// The media type of `data` (or of what `url` points at), e.g. `image/png`.
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where the content is, instead of inline `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Every other key, in its original order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ContentPart {
    /// A part of any kind with inline base64 `data` of media type `mime_type`.
    pub fn inline(
        kind: impl Into<String>,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        Self {
            kind: kind.into(),
            data: Some(data.into()),
            mime_type: Some(mime_type.into()),
            url: None,
            extra: Map::new(),
        }
    }

    /// A part of any kind that points at `url`.
    pub fn url(kind: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            data: None,
            mime_type: None,
            url: Some(url.into()),
            extra: Map::new(),
        }
    }

    /// An inline image (`data` is base64).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::inline(PART_IMAGE, data, mime_type)
    }

    /// An inline file (`data` is base64).
    pub fn file(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::inline(PART_FILE, data, mime_type)
    }

    /// Inline audio (`data` is base64).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::inline(PART_AUDIO, data, mime_type)
    }

    /// An embedded resource whose content is text: `{"type":"resource","url":uri,"text":text}`
    /// (served over MCP as an embedded text resource).
    ///
    /// ```
    /// use toolnexus::result::ContentPart;
    ///
    /// let part = ContentPart::resource_text("test://notes/1", "Buy milk").with_mime_type("text/plain");
    /// assert_eq!(
    ///     serde_json::to_string(&part).unwrap(),
    ///     r#"{"type":"resource","mimeType":"text/plain","url":"test://notes/1","text":"Buy milk"}"#
    /// );
    /// ```
    pub fn resource_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self::url(PART_RESOURCE, uri).with_extra("text", Value::String(text.into()))
    }

    /// An embedded resource whose content is bytes (`data`, base64) of media type `mime_type`.
    pub fn resource_blob(
        uri: impl Into<String>,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        let mut part = Self::inline(PART_RESOURCE, data, mime_type);
        part.url = Some(uri.into());
        part
    }

    /// A link to a resource the reader fetches itself: `{"type":"resource_link","url":uri,"name":name}`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::url(PART_RESOURCE_LINK, uri).with_extra("name", Value::String(name.into()))
    }

    /// The same part with its media type set (useful on a `url` part).
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same part with one more key (a file's `name`, say).
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }
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
            parts: Vec::new(),
        }
    }

    /// A failed result: the model reads `output` and may correct its call.
    pub fn error(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: true,
            metadata: None,
            parts: Vec::new(),
        }
    }

    /// A suspension carrying `request`; its output follows [contract section 2](crate::contract)
    /// ([`Request::display_output`]).
    ///
    /// The trust boundary is enforced here: a request that violates
    /// [`Request::check_trust_boundary`] (an `input` or `question` request, or any request
    /// that carries a form, that collects a credential) makes a plain failure carrying that
    /// error instead.
    pub fn suspended(request: Request) -> Self {
        if let Err(e) = request.check_trust_boundary() {
            return Self::error(e.to_string());
        }
        Self {
            output: request.display_output(),
            is_error: true,
            metadata: Some(Box::new(Metadata {
                pending: Some(Box::new(request)),
                extra: Map::new(),
            })),
            parts: Vec::new(),
        }
    }

    /// Sets one metadata key other than `pending` (creating the object when absent).
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata
            .get_or_insert_with(Box::default)
            .extra
            .insert(key.into(), value);
        self
    }

    /// Appends a content part (an image, a file, audio) for the model to see beside `output`.
    #[must_use]
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.parts.push(part);
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

/// The return mapping of [contract section 1](crate::contract): how a tool function's return value becomes a
/// [`ToolResult`].
///
/// - `String`, `&'static str`, `Cow<str>`: the output as-is;
/// - `ToolResult`: unchanged (this is how a suspension is returned);
/// - `()`: empty output;
/// - [`serde_json::Value`], numbers, `bool`, `Vec<T>` and [`Json<T>`]: compact JSON;
/// - `Result<T, E>` with `E: Display`: `Ok` maps `T`, `Err` becomes `is_error: true` with the
///   error's Display text; an `Err` that is a suspension (or a boxed error whose chain holds
///   one) becomes that suspension.
///
/// `#[tool]` functions additionally map any `Serialize` value to compact JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this type is not a tool return type",
    note = "return a `String`, `()`, a `ToolResult`, a JSON value, `toolnexus::Json(value)` for any `Serialize` value, or a `Result` of those whose error implements `Display`"
)]
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self)
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self.into_owned())
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(String::new())
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self.to_string())
    }
}

impl IntoToolResult for Request {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::suspended(self)
    }
}

macro_rules! json_results {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> ToolResult {
                Json(self).into_tool_result()
            }
        }
    )*};
}
json_results!(
    bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

impl<T: Serialize> IntoToolResult for Vec<T> {
    fn into_tool_result(self) -> ToolResult {
        Json(self).into_tool_result()
    }
}

/// Wraps any `Serialize` value so a hand-built tool returns it as compact JSON.
///
/// ```
/// use toolnexus::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize)]
/// struct Weather { city: &'static str, celsius: i8 }
///
/// let r = Json(Weather { city: "Oslo", celsius: -3 }).into_tool_result();
/// assert_eq!(r.output, r#"{"city":"Oslo","celsius":-3}"#);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        match serde_json::to_string(&self.0) {
            Ok(s) => ToolResult::success(s),
            Err(e) => ToolResult::error(format!("the tool's result could not be serialized: {e}")),
        }
    }
}

impl<T: IntoToolResult, E: fmt::Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => error_into_tool_result(e),
        }
    }
}

/// Maps an `Err` value: a suspension stays a suspension (also inside a boxed error's chain),
/// anything else becomes a failure with the error's Display text.
pub(crate) fn error_into_tool_result<E: fmt::Display + 'static>(e: E) -> ToolResult {
    let any: &dyn std::any::Any = &e;
    if let Some(r) = any.downcast_ref::<ToolResult>() {
        return r.clone();
    }
    if let Some(s) = any.downcast_ref::<crate::suspend::Suspension>() {
        return s.clone().into_tool_result();
    }
    if let Some(req) = any.downcast_ref::<Request>() {
        return ToolResult::suspended(req.clone());
    }
    let chained = if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
        suspension_in_chain(b.as_ref())
    } else if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error>>() {
        suspension_in_chain(b.as_ref())
    } else {
        None
    };
    if let Some(r) = chained {
        return r;
    }
    ToolResult::error(e.to_string())
}

/// Walks an error chain for a suspension (a [`Suspension`](crate::Suspension) error).
pub(crate) fn suspension_in_chain(err: &(dyn std::error::Error + 'static)) -> Option<ToolResult> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(s) = e.downcast_ref::<crate::suspend::Suspension>() {
            return Some(s.clone().into_tool_result());
        }
        cur = e.source();
    }
    None
}
