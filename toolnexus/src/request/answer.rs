//! The [`Answer`] to a [`Request`], and why an answer declines ([`DeclineReason`]).

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why an answer declines (advisory: the loop branches on [`Answer::ok`] only).
///
/// The contract names three reasons; any other word another port sends (`"timeout"`, say) is
/// kept as [`DeclineReason::Other`] and written back as it came.
///
/// ```
/// use toolnexus::{Answer, request::DeclineReason};
///
/// let raw = r#"{"id":"r1","ok":false,"reason":"timeout"}"#;
/// let a: Answer = serde_json::from_str(raw).unwrap();
/// assert_eq!(a.reason, Some(DeclineReason::Other("timeout".into())));
/// assert_eq!(serde_json::to_string(&a).unwrap(), raw);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeclineReason {
    /// The human said no (`"declined"`).
    Declined,
    /// The human (or host) cancelled (`"cancelled"`).
    Cancelled,
    /// The request expired before it was answered (`"expired"`).
    Expired,
    /// Any other reason, as it was sent.
    Other(String),
}

impl DeclineReason {
    /// The wire word: `declined`, `cancelled`, `expired`, or the other reason as it came.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for DeclineReason {
    fn from(s: &str) -> Self {
        match s {
            "declined" => Self::Declined,
            "cancelled" => Self::Cancelled,
            "expired" => Self::Expired,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl Serialize for DeclineReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DeclineReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::from(s.as_ref()))
    }
}

impl fmt::Display for DeclineReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reply to a [`Request`]: `{"id", "ok", "data"?, "reason"?}`.
///
/// ```
/// use toolnexus::Answer;
///
/// let a = Answer::accept("r1", serde_json::json!({"k": "v"}));
/// assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"id":"r1","ok":true,"data":{"k":"v"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Answer {
    /// The id of the request this answers.
    pub id: String,
    /// Whether the request was granted; the loop branches on this alone.
    pub ok: bool,
    /// The payload (for `input` and `question`, the data the tool asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Why it was not granted (only when `ok` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<DeclineReason>,
}

impl Answer {
    /// An accepting answer with data. A value that serializes to `null` leaves `data` absent.
    pub fn accept(id: impl Into<String>, data: impl Serialize) -> Self {
        let data = serde_json::to_value(data).ok().filter(|v| !v.is_null());
        Self {
            id: id.into(),
            ok: true,
            data,
            reason: None,
        }
    }

    /// An accepting answer without data (`{"id":..,"ok":true}`), e.g. after a login.
    pub fn ok(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ok: true,
            data: None,
            reason: None,
        }
    }

    /// A declining answer with its reason.
    pub fn decline(id: impl Into<String>, reason: DeclineReason) -> Self {
        Self {
            id: id.into(),
            ok: false,
            data: None,
            reason: Some(reason),
        }
    }

    /// The answer's data deserialized as `T`; an absent `data` reads as `null`.
    ///
    /// A free-text answer may come in the family's convention, `{"output": "<text>"}`: when the
    /// data does not read as `T` as it is, that text is tried (so a `String` accepts both
    /// `"Oslo"` and `{"output":"Oslo"}`).
    ///
    /// ```
    /// let bare = toolnexus::Answer::accept("r1", "Oslo");
    /// let wrapped = toolnexus::Answer::accept("r1", serde_json::json!({"output": "Oslo"}));
    /// assert_eq!(bare.data_as::<String>().unwrap(), "Oslo");
    /// assert_eq!(wrapped.data_as::<String>().unwrap(), "Oslo");
    /// ```
    ///
    /// # Errors
    ///
    /// [`AnswerDataError`] names the field path that failed and why (long values quoted as a
    /// short prefix and their length); data nesting deeper than
    /// [`MAX_DEPTH`](crate::limits::MAX_DEPTH) is refused at the root.
    ///
    /// ```
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Trip { city: String, nights: u8 }
    ///
    /// let a = toolnexus::Answer::accept("r1", serde_json::json!({"city": "Oslo", "nights": "two"}));
    /// let err = a.data_as::<Trip>().unwrap_err();
    /// assert_eq!(err.path(), "nights");
    /// assert_eq!(err.to_string(), r#"invalid answer data at `nights`: invalid type: string "two", expected u8"#);
    /// ```
    pub fn data_as<T: DeserializeOwned>(&self) -> Result<T, AnswerDataError> {
        if self.data.as_ref().is_some_and(crate::limits::too_deep) {
            return Err(AnswerDataError {
                path: ".".to_owned(),
                message: crate::limits::too_deep_message("the data nests"),
            });
        }
        let value = self.data.clone().unwrap_or(Value::Null);
        let free_text = free_text(&value).map(str::to_owned);
        serde_path_to_error::deserialize(value).or_else(|err| {
            // the family's free-text convention, `{"output": "<text>"}`, reads as that text
            free_text
                .and_then(|text| serde_json::from_value(Value::String(text)).ok())
                .ok_or_else(|| AnswerDataError {
                    path: crate::limits::excerpt(&err.path().to_string()).into_owned(),
                    message: crate::limits::shorten(err.into_inner().to_string()),
                })
        })
    }
}

/// The text of a free-text answer in the family's convention: an object whose only key is
/// `output`, a string.
fn free_text(data: &Value) -> Option<&str> {
    match data.as_object() {
        Some(map) if map.len() == 1 => map.get("output")?.as_str(),
        _ => None,
    }
}

/// The answer's data did not have the expected shape; see [`Answer::data_as`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid answer data at `{path}`: {message}")]
pub struct AnswerDataError {
    path: String,
    message: String,
}

impl AnswerDataError {
    /// The path of the failing field (`.` for the root, `trip.nights`, `items[2]`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What went wrong there, in serde's words.
    pub fn message(&self) -> &str {
        &self.message
    }
}
