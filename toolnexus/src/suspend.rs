//! [`Suspension`]: a parked [`Request`] as a value a tool can return, including as an `Err`.

use std::fmt;

use crate::request::Request;
use crate::result::ToolResult;
use crate::tool::IntoToolResult;

/// A tool's request to stop and ask a human, as a value: what `suspend!` produces.
///
/// It converts into the suspended [`ToolResult`], and it is an [`Error`](std::error::Error),
/// so it can travel through `Err(..)` and `?` inside a tool's own error type (anywhere in the
/// `source()` chain of a boxed error) and still be recognised as a suspension, not a failure.
///
/// ```
/// use toolnexus::{IntoToolResult, Request, Suspension};
///
/// let s = Suspension::new(Request::input("Which city?").with_id("r1"));
/// assert_eq!(s.to_string(), "Input required: Which city?");
/// let r = s.into_tool_result();
/// assert_eq!(r.pending().unwrap().id, "r1");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Suspension(Request);

impl Suspension {
    /// Wraps a request.
    pub fn new(request: Request) -> Self {
        Self(request)
    }

    /// The request.
    pub fn request(&self) -> &Request {
        &self.0
    }

    /// Unwraps the request.
    pub fn into_request(self) -> Request {
        self.0
    }
}

impl fmt::Display for Suspension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.display_output())
    }
}

impl std::error::Error for Suspension {}

impl From<Request> for Suspension {
    fn from(request: Request) -> Self {
        Self(request)
    }
}

impl From<Suspension> for ToolResult {
    fn from(s: Suspension) -> Self {
        ToolResult::suspended(s.0)
    }
}

impl IntoToolResult for Suspension {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::suspended(self.0)
    }
}
