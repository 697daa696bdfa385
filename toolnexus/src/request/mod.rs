//! The two halves of a suspension: the [`Request`] a tool parks, and the [`Answer`] a human (or
//! another system) gives back (`answer.rs`).

mod answer;
mod govern;
mod governed;

pub use answer::{Answer, AnswerDataError, DeclineReason};
pub use governed::Escalation;
pub(crate) use governed::escalation_plan;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The kind of a request that asks for free-form input; the answer's data *is* the payload.
pub const KIND_INPUT: &str = "input";
/// The kind of a request that asks a human to approve an action.
pub const KIND_APPROVAL: &str = "approval";
/// The kind of a request that sends a human to a `url` to log in (OAuth-style).
pub const KIND_AUTHORIZATION: &str = "authorization";
/// The kind of a request made by the built-in `question` tool.
pub const KIND_QUESTION: &str = "question";
/// The kind of a request that asks a person what to do with a call a crash cut
/// ([`reconcile`](crate::reconcile)).
pub const KIND_RECONCILE: &str = "reconcile";

/// The key of an editable approval's proposed arguments in its `data`, and of the arguments
/// to run in an accepting answer's `data` (CONTRACT section 2).
pub(crate) const DATA_ARGS: &str = "args";
/// The key of an editable approval's argument schema in its `data`.
const DATA_ARGS_SCHEMA: &str = "argsSchema";

/// What a suspended tool asks for: the `metadata.pending` of a suspension.
///
/// Wire form (key order and omission of absent keys are part of the contract):
/// `{"id", "kind", "prompt", "url"?, "data"?, "expiresAt"?}`.
///
/// ```
/// use toolnexus::Request;
///
/// let req = Request::input("Which city?");
/// assert!(req.id.starts_with("sus-"), "a fresh, unique id");
///
/// // the wire form (a fixed id, as tests pin exact bytes; real tools keep the generated id)
/// let req = req.with_id("r1");
/// assert_eq!(
///     serde_json::to_string(&req).unwrap(),
///     r#"{"id":"r1","kind":"input","prompt":"Which city?"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Request {
    /// Unique id of this suspension ([`new_request_id`]: `sus-<epoch ms>-<counter>-<random>`),
    /// unless set by hand with [`Request::with_id`] (for tests only).
    pub id: String,
    /// What is asked for: `input`, `approval`, `authorization`, `question`, or any custom kind.
    pub kind: String,
    /// The text a human reads.
    pub prompt: String,
    /// Where the human goes (for `authorization`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra data for the host; `data.schema` describes the expected answer data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<Map<String, Value>>>,
    /// When the request stops accepting answers, RFC 3339 UTC.
    #[serde(default, rename = "expiresAt", skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

impl Request {
    /// A request of any kind, with a fresh id.
    pub fn new(kind: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            id: new_request_id(),
            kind: kind.into(),
            prompt: prompt.into(),
            url: None,
            data: None,
            expires_at: None,
        }
    }

    /// An `input` request: the answer's data is the payload the tool asked for.
    pub fn input(prompt: impl Into<String>) -> Self {
        Self::new(KIND_INPUT, prompt)
    }

    /// An `approval` request.
    pub fn approval(prompt: impl Into<String>) -> Self {
        Self::new(KIND_APPROVAL, prompt)
    }

    /// An `approval` request a person may answer with other arguments (an editable approval,
    /// CONTRACT section 2): `data.args` holds the arguments as proposed, `data.argsSchema`
    /// the tool's input schema. Accept with [`Request::approve_with`] to run other arguments.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let r = Request::editable_approval(
    ///     "Pay 40 EUR to Ada?",
    ///     json!({"amount": 40, "to": "Ada"}),
    ///     json!({"type": "object", "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}}}),
    /// );
    /// assert_eq!(r.proposed_args(), Some(&json!({"amount": 40, "to": "Ada"})));
    /// let answer = r.approve_with(json!({"amount": 30, "to": "Ada"}));
    /// assert_eq!(answer.data, Some(json!({"args": {"amount": 30, "to": "Ada"}})));
    /// ```
    pub fn editable_approval(prompt: impl Into<String>, args: Value, args_schema: Value) -> Self {
        Self::approval(prompt)
            .with_data_entry(DATA_ARGS, args)
            .with_data_entry(DATA_ARGS_SCHEMA, args_schema)
    }

    /// The arguments an editable approval proposes (`data.args`), when this is one.
    pub fn proposed_args(&self) -> Option<&Value> {
        if self.kind != KIND_APPROVAL {
            return None;
        }
        self.data.as_ref()?.get(DATA_ARGS)
    }

    /// The input schema of an editable approval's tool (`data.argsSchema`), when this is one.
    pub fn args_schema(&self) -> Option<&Value> {
        if self.kind != KIND_APPROVAL {
            return None;
        }
        self.data.as_ref()?.get(DATA_ARGS_SCHEMA)
    }

    /// An accepting answer to this (editable) approval that runs `args` instead of the
    /// proposed arguments: `{"id":..,"ok":true,"data":{"args":..}}`.
    pub fn approve_with(&self, args: Value) -> Answer {
        let mut data = Map::new();
        data.insert(DATA_ARGS.to_owned(), args);
        Answer::accept(&self.id, Value::Object(data))
    }

    /// An `authorization` request: the human logs in at `url`, out of band; the tool is then
    /// retried. The prompt is `Login required: <url>` (change it with [`Request::with_prompt`]).
    pub fn authorization(url: impl Into<String>) -> Self {
        let url = url.into();
        let mut req = Self::new(KIND_AUTHORIZATION, format!("Login required: {url}"));
        req.url = Some(url);
        req
    }

    /// A `question` request (what the built-in `question` tool makes).
    pub fn question(prompt: impl Into<String>) -> Self {
        Self::new(KIND_QUESTION, prompt)
    }

    /// A request of a custom kind (the vocabulary is open).
    pub fn custom(kind: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self::new(kind, prompt)
    }

    /// Replaces the generated id: **for tests only**.
    ///
    /// The generated id ([`new_request_id`]) is unique across processes and machines, and an
    /// answer resumes a run only when it echoes it. A fixed id (`"r1"`) is the same in every
    /// run, so one run's answer would match another run's request: production tools keep the
    /// generated id. Tests use a fixed id to pin exact JSON.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Replaces the prompt.
    #[must_use]
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = prompt.into();
        self
    }

    /// Sets the url a human is sent to.
    #[must_use]
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Sets the whole `data` object.
    #[must_use]
    pub fn with_data(mut self, data: Map<String, Value>) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// Sets one key of `data`, creating the object when absent.
    #[must_use]
    pub fn with_data_entry(mut self, key: impl Into<String>, value: Value) -> Self {
        self.data
            .get_or_insert_with(Box::default)
            .insert(key.into(), value);
        self
    }

    /// Sets `expiresAt` to an instant, rendered as RFC 3339 UTC with millisecond precision
    /// (`2026-01-01T00:00:00.500Z`; below a millisecond is truncated, and a whole second is
    /// written without a fraction: `2026-01-01T00:00:00Z`).
    ///
    /// An answer that arrives after it is refused on every path (`wait_for` and
    /// [`Client::resume`](crate::Client::resume), where it arrives when the loop gets it; a
    /// run store, where it arrives when the store records it, see
    /// [`Client::resume_claim`](crate::Client::resume_claim)): the tool does not run again and
    /// the model reads `declined/expired: <prompt>`.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    ///
    /// let at = UNIX_EPOCH + Duration::from_millis(1_767_225_600_500);
    /// let req = toolnexus::Request::approval("Deploy?").with_expires_at(at);
    /// assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00.500Z"));
    /// assert_eq!(req.expires_at_time(), Some(at));
    /// ```
    #[must_use]
    pub fn with_expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(format_rfc3339(at));
        self
    }

    /// Sets `expiresAt` to now plus `ttl`.
    #[must_use]
    pub fn expires_in(self, ttl: Duration) -> Self {
        self.with_expires_at(SystemTime::now() + ttl)
    }

    /// The request's `data` as a map (`None` when it has none), without cloning it out of
    /// its box.
    ///
    /// ```
    /// use toolnexus::{Request, json};
    ///
    /// let request = Request::input("Where to?").with_data_entry("flight", json!("AI-503"));
    /// assert_eq!(request.data().unwrap()["flight"], "AI-503");
    /// assert_eq!(request.data_entry("flight"), Some(&json!("AI-503")));
    /// assert_eq!(request.data_entry("seat"), None);
    /// assert!(Request::approval("Go?").data().is_none());
    /// ```
    pub fn data(&self) -> Option<&Map<String, Value>> {
        self.data.as_deref()
    }

    /// One entry of the request's `data` (`None` when it has no such entry).
    pub fn data_entry(&self, key: &str) -> Option<&Value> {
        self.data.as_deref().and_then(|d| d.get(key))
    }

    /// The parsed `expiresAt`, if present and valid RFC 3339 (any offset, any fraction of a
    /// second: `2026-01-01T01:00:00.25+01:00` reads as `2026-01-01T00:00:00.250Z`).
    pub fn expires_at_time(&self) -> Option<SystemTime> {
        let raw = self.expires_at.as_deref()?;
        OffsetDateTime::parse(raw, &Rfc3339)
            .ok()
            .map(SystemTime::from)
    }

    /// Whether the request has expired at `now`. A request without `expiresAt` never expires;
    /// one whose `expiresAt` cannot be parsed is treated as expired (it cannot be honoured).
    pub fn is_expired_at(&self, now: SystemTime) -> bool {
        match &self.expires_at {
            None => false,
            Some(_) => self.expires_at_time().is_none_or(|at| now > at),
        }
    }

    /// The human-readable `output` of a suspension carrying this request ([contract section 2](crate::contract)):
    /// `Input required: <prompt>`, `Login required: <url>`, `Approval required: <prompt>`, or
    /// the prompt itself for any other kind.
    pub fn display_output(&self) -> String {
        match self.kind.as_str() {
            KIND_INPUT => format!("Input required: {}", self.prompt),
            KIND_APPROVAL => format!("Approval required: {}", self.prompt),
            KIND_AUTHORIZATION => match &self.url {
                Some(url) => format!("Login required: {url}"),
                None => self.prompt.clone(),
            },
            _ => self.prompt.clone(),
        }
    }

    /// An accepting answer to this request, echoing its id.
    pub fn accept(&self, data: impl Serialize) -> Answer {
        Answer::accept(&self.id, data)
    }

    /// A declining answer to this request, echoing its id.
    pub fn decline(&self, reason: DeclineReason) -> Answer {
        Answer::decline(&self.id, reason)
    }
}

/// Formats an instant as RFC 3339 UTC with millisecond precision (`2026-01-01T00:00:00.500Z`),
/// truncating below the millisecond; a whole second has no fraction (`2026-01-01T00:00:00Z`,
/// the contract's pinned form); instants before 1970 or past 9999 are clamped.
pub(crate) fn format_rfc3339(at: SystemTime) -> String {
    let millis = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_millis()).unwrap_or(i128::MAX),
        Err(_) => 0,
    };
    let t = OffsetDateTime::from_unix_timestamp_nanos(millis.saturating_mul(1_000_000))
        .unwrap_or_else(|_| {
            OffsetDateTime::new_utc(
                time::Date::MAX,
                time::Time::from_hms_milli(23, 59, 59, 999).unwrap_or(time::Time::MIDNIGHT),
            )
        });
    let date_time = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
    );
    match t.millisecond() {
        0 => format!("{date_time}Z"),
        ms => format!("{date_time}.{ms:03}Z"),
    }
}

/// A fresh suspension id, unique across threads, processes and machines (CONTRACT section 2):
/// `sus-<unix epoch milliseconds>-<process-wide counter from 1>-<random suffix>`, the suffix
/// being 64 bits from the operating system's entropy source as 16 lowercase hex digits.
///
/// Two processes started in the same millisecond make different ids (their suffixes differ),
/// and an id cannot be guessed from another one.
///
/// ```
/// let a = toolnexus::request::new_request_id();
/// let b = toolnexus::request::new_request_id();
/// assert!(a.starts_with("sus-"));
/// assert_eq!(a.rsplit('-').next().unwrap().len(), 16);
/// assert_ne!(a, b);
/// ```
pub fn new_request_id() -> String {
    crate::id::unique("sus")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::Request;

    fn at_ms(ms: u64) -> std::time::SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn expires_at_keeps_milliseconds_and_truncates_below() {
        let req = Request::input("p").with_expires_at(at_ms(1_767_225_600_500));
        assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00.500Z"));
        let req = Request::input("p").with_expires_at(at_ms(1_767_225_600_000));
        assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00Z"));
        let req = Request::input("p")
            .with_expires_at(at_ms(1_767_225_600_007) + Duration::from_nanos(999_999));
        assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00.007Z"));
    }

    #[test]
    fn any_rfc3339_expiry_is_read() {
        let read = |raw: &str| {
            let mut req = Request::input("p");
            req.expires_at = Some(raw.to_owned());
            req.expires_at_time()
        };
        let base = 1_767_225_600_000;
        assert_eq!(read("2026-01-01T00:00:00Z"), Some(at_ms(base)));
        assert_eq!(read("2026-01-01T00:00:00.5Z"), Some(at_ms(base + 500)));
        assert_eq!(
            read("2026-01-01T01:00:00.25+01:00"),
            Some(at_ms(base + 250))
        );
        assert_eq!(
            read("2025-12-31T19:00:00.123-05:00"),
            Some(at_ms(base + 123))
        );
        assert_eq!(
            read("2026-01-01T00:00:00.123456789Z"),
            Some(at_ms(base + 123) + Duration::from_nanos(456_789))
        );
        assert_eq!(read("2026-01-01t00:00:00z"), Some(at_ms(base)));
        // RFC 3339 (section 5.6) lets a space stand for the `T`
        assert_eq!(read("2026-01-01 00:00:00Z"), Some(at_ms(base)));
        assert_eq!(read("2026-01-01T00:00:00"), None, "no offset: not RFC 3339");
        assert_eq!(read("tomorrow"), None);
    }

    #[test]
    fn an_unreadable_expiry_counts_as_expired_and_an_absent_one_never_expires() {
        let mut req = Request::input("p");
        assert!(!req.is_expired_at(at_ms(u64::MAX / 4)));
        req.expires_at = Some("tomorrow".to_owned());
        assert!(req.is_expired_at(UNIX_EPOCH));
        let req = Request::input("p").with_expires_at(at_ms(1_000));
        assert!(!req.is_expired_at(at_ms(1_000)));
        assert!(req.is_expired_at(at_ms(1_001)));
    }
}
