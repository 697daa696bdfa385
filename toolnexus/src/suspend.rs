//! [`Suspension`]: a parked [`Request`] as a value a tool can return, including as an `Err`;
//! [`SuspendError`]: why a request could not be parked; the trust boundary check; and the loop
//! rule for an answer (`resolve`), which the agent loop and the MCP server both follow.

use std::fmt;
use std::future::Future;
use std::time::SystemTime;

use crate::boundary::BoundaryError;
use crate::request::{Answer, AnswerDataError, DeclineReason, Request};
use crate::result::IntoToolResult;
use crate::result::ToolResult;

/// A tool's request to stop and ask a human, as a value: what `suspend!` produces.
///
/// It converts into the suspended [`ToolResult`], and it is an [`Error`](std::error::Error),
/// so it can travel through `Err(..)` and `?` inside a tool's own error type (anywhere in the
/// `source()` chain of a boxed error) and still be recognised as a suspension, not a failure.
///
/// ```
/// use toolnexus::{IntoToolResult, Request, Suspension};
///
/// let s = Suspension::new(Request::input("Which city?"));
/// assert_eq!(format!("{s}"), "Input required: Which city?");
/// let r = s.into_tool_result();
/// assert!(r.pending().unwrap().id.starts_with("sus-"));
/// ```
///
/// # A suspension that could not be built
///
/// Some mistakes can only be seen at run time: `data` that does not serialize to a JSON
/// object, a `schema = T` whose schema is not a flat form, a request whose form (or, for
/// `input` and `question`, prompt) collects a credential, or (for `ask!`) a declined answer or answer data
/// of the wrong shape. None of them panics: the `Suspension` then holds a [`SuspendError`]
/// instead of a request, and converts into a plain **failure** (`isError: true`, no
/// `pending`) whose output is the error's message, so the model reads what went wrong.
///
/// ```
/// use toolnexus::{IntoToolResult, Request, Suspension};
///
/// let s = Suspension::new(Request::input("Your password?").with_data_entry(
///     "schema",
///     serde_json::json!({"type": "object", "properties": {"password": {"type": "string"}}}),
/// ));
/// assert!(s.request().is_none());
/// let r = s.into_tool_result();
/// assert!(r.is_failure());
/// assert!(r.output.contains("use an `authorization` request with a `url` instead"));
/// ```
///
/// # Not text
///
/// A suspension is not a `String`: in a tool returning `String`, `.to_string()` would make
/// the approval a plain success whose output is the prompt, and the request would be lost. So
/// `suspension.to_string()` is a compile error (the method is shadowed); return the
/// suspension instead (change the return type to [`ToolResult`] or `Result<String,
/// Suspension>`), and format it with `{}` where text is really meant, such as a log line.
///
/// ```compile_fail
/// fn delete(path: &str) -> String {
///     toolnexus::suspend!(approval format!("Delete {path}?")).to_string()
/// }
/// ```
///
/// (Boxed: a `Result<T, Suspension>` stays small.)
#[derive(Clone, Debug, PartialEq)]
pub struct Suspension(Box<Inner>);

#[derive(Clone, Debug, PartialEq)]
enum Inner {
    Parked(Request),
    Failed(SuspendError),
}

impl Suspension {
    /// Wraps a request, checking the trust boundary ([`Request::check_trust_boundary`]): a
    /// request that violates it makes a failed suspension.
    pub fn new(request: Request) -> Self {
        match request.check_trust_boundary() {
            Ok(()) => Self(Box::new(Inner::Parked(request))),
            Err(e) => Self(Box::new(Inner::Failed(e.into()))),
        }
    }

    /// A suspension that could not be built; it converts into a failure saying why.
    pub fn failed(error: SuspendError) -> Self {
        Self(Box::new(Inner::Failed(error)))
    }

    /// The request, unless the suspension could not be built.
    pub fn request(&self) -> Option<&Request> {
        match &*self.0 {
            Inner::Parked(r) => Some(r),
            Inner::Failed(_) => None,
        }
    }

    /// Unwraps the request, unless the suspension could not be built.
    pub fn into_request(self) -> Option<Request> {
        match *self.0 {
            Inner::Parked(r) => Some(r),
            Inner::Failed(_) => None,
        }
    }

    /// Why the suspension could not be built, if it could not.
    pub fn error(&self) -> Option<&SuspendError> {
        match &*self.0 {
            Inner::Parked(_) => None,
            Inner::Failed(e) => Some(e),
        }
    }
}

/// Shadows [`ToString::to_string`] so that `suspension.to_string()` does not compile: see
/// [`Suspension`]'s "Not text". Never implemented.
#[diagnostic::on_unimplemented(
    message = "a `Suspension` is not text: `.to_string()` would turn the request into a plain success",
    label = "`.to_string()` on a suspension",
    note = "return the suspension itself: make the function return `ToolResult` or `Result<_, Suspension>` (with `Err(suspend!(..))` or `?`); format it with `{{}}` where text is really meant"
)]
pub trait SuspensionIsNotText: Sized {
    #[doc(hidden)]
    fn never(suspension: &Suspension) -> Self;
}

impl Suspension {
    /// Does not compile: a suspension is not text (see "Not text" above).
    #[doc(hidden)]
    pub fn to_string<T: SuspensionIsNotText>(&self) -> T {
        T::never(self)
    }
}

impl fmt::Display for Suspension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Inner::Parked(r) => f.write_str(&r.display_output()),
            Inner::Failed(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Suspension {}

impl From<Request> for Suspension {
    fn from(request: Request) -> Self {
        Self::new(request)
    }
}

impl From<SuspendError> for Suspension {
    fn from(error: SuspendError) -> Self {
        Self::failed(error)
    }
}

impl From<Suspension> for ToolResult {
    fn from(s: Suspension) -> Self {
        s.into_tool_result()
    }
}

impl IntoToolResult for Suspension {
    /// The suspended result, or (for a suspension that could not be built) a failure whose
    /// output is the [`SuspendError`]'s message.
    fn into_tool_result(self) -> ToolResult {
        match *self.0 {
            Inner::Parked(r) => ToolResult::suspended(r),
            Inner::Failed(e) => ToolResult::error(e.to_string()),
        }
    }
}

/// Why a [`Suspension`] could not be built (or, for `ask!`, why the answer could not be used).
/// Its message is what the model reads in the failure the suspension turns into.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SuspendError {
    /// `data = ..` did not serialize to a JSON object.
    #[error("invalid suspension: `data` must serialize to a JSON object, found {found}")]
    DataNotObject {
        /// What it serialized to (`a string`, `an array`, ...).
        found: &'static str,
    },
    /// `data = ..` could not be serialized at all.
    #[error("invalid suspension: `data` could not be serialized: {0}")]
    DataNotSerializable(String),
    /// Both `data` with a `schema` key and `schema = ..` were given.
    #[error(
        "invalid suspension: `data` already has a `schema` key; remove it or remove `schema = ..`"
    )]
    SchemaConflict,
    /// `schema = T` named a type whose schema is not a flat form.
    #[error("invalid suspension: the answer schema of `{ty}` is not a flat form: {reason}")]
    SchemaNotRestricted {
        /// The type's schema name.
        ty: String,
        /// Which field is not flat, and why.
        reason: String,
    },
    /// A request that carries a form (or an `input` or `question` request) collects a
    /// credential (the trust boundary,
    /// [`check_request`](crate::boundary::check_request)).
    #[error(transparent)]
    CredentialField(#[from] BoundaryError),
    /// `ask!` found an answer that did not accept the request.
    #[error("{reason}: {prompt}")]
    Declined {
        /// Why (declined, cancelled, expired).
        reason: DeclineReason,
        /// The prompt that was not answered.
        prompt: String,
    },
    /// `ask!` found accepted answer data of the wrong shape.
    #[error(transparent)]
    AnswerData(#[from] AnswerDataError),
}

impl Request {
    /// Checks the trust boundary of [contract section 2](crate::contract): an `input` or
    /// `question` request, or a request of any kind that carries a form, must never collect a
    /// credential. The same as
    /// [`boundary::check_request(self)`](crate::boundary::check_request), which says what is
    /// read and how.
    ///
    /// Enforced wherever a request becomes a suspension: [`Suspension::new`],
    /// [`ToolResult::suspended`], [`Toolkit::execute`](crate::Toolkit::execute) (for a result
    /// built field by field) and the loop (for a `before_tool` hook's result) turn a violating
    /// request into a failure carrying this error.
    ///
    /// # Errors
    ///
    /// [`BoundaryError`] naming the first offending place.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let ok = Request::input("Which city?")
    ///     .with_data_entry("schema", json!({"type": "object", "properties": {"city": {"type": "string"}}}));
    /// assert!(ok.check_trust_boundary().is_ok());
    ///
    /// let bad = Request::input("Log in")
    ///     .with_data_entry("schema", json!({"type": "object", "properties": {"apiKey": {"type": "string"}}}));
    /// assert_eq!(
    ///     bad.check_trust_boundary().unwrap_err().to_string(),
    ///     "invalid suspension: `data.schema.properties.apiKey` of the `input` request has the name `apiKey`, which reads as the credential word `apikey`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
    /// );
    /// ```
    pub fn check_trust_boundary(&self) -> Result<(), BoundaryError> {
        crate::boundary::check_request(self)
    }
}

/// The loop rule for one answered suspension ([contract section 3](crate::contract)): an
/// answer with `ok: false`, or one that arrived (`arrived`) after the request's `expiresAt`,
/// reads as `declined/expired: <prompt>` and runs nothing; otherwise `retry` runs the same tool
/// once more with the answer in its context, and a second suspension reads as
/// `unresolved: <prompt>`. The agent loop and the MCP server both resolve answers here.
///
/// `arrived` is when the answer counts as given: the moment it reaches the loop (`wait_for`,
/// [`Client::resume`](crate::Client::resume), an MCP elicitation), or the time a run store
/// recorded it (a claimed run: the store refused it had it come late, and an answer recorded
/// in time stays valid however late a worker resumes it).
pub(crate) async fn resolve<F, Fut>(
    request: &Request,
    answer: Answer,
    arrived: SystemTime,
    retry: F,
) -> ToolResult
where
    F: FnOnce(Answer) -> Fut,
    Fut: Future<Output = ToolResult>,
{
    if !answer.ok || request.is_expired_at(arrived) {
        return ToolResult::error(format!("declined/expired: {}", request.prompt));
    }
    let retried = retry(answer).await;
    if retried.is_pending() {
        ToolResult::error(format!("unresolved: {}", request.prompt))
    } else {
        retried
    }
}
