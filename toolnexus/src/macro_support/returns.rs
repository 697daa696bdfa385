//! The macro half of the return mapping: which [`IntoToolResult`] path a `#[tool]` function's
//! concrete return type takes, picked at compile time by autoref specialization on a
//! [`Probe`]. Generated code reaches everything here as `::toolnexus::__private::*`.

use std::error::Error as StdError;
use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;

use crate::result::{
    IntoToolResult, Json, ToolResult, error_into_tool_result, suspension_in_chain,
};

/// Stands for the return type `T` while method resolution picks how to map it.
pub struct Probe<T>(PhantomData<T>);

impl<T> fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Probe")
    }
}

/// A probe for the type of `value`.
pub fn probe<T>(_value: &T) -> Probe<T> {
    Probe(PhantomData)
}

macro_rules! kinds {
    ($( $(#[$doc:meta])* $trait:ident, $tag:ident, [$($refs:tt)*], <$($g:ident),*> $probe:ty where [$($bounds:tt)*] ;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $tag;

        #[doc = concat!("Selects [`", stringify!($tag), "`].")]
        pub trait $trait {
            /// The mapping for this return type.
            fn __toolnexus_kind(&self) -> $tag {
                $tag
            }
        }

        impl<$($g),*> $trait for $($refs)* Probe<$probe> where $($bounds)* {}
    )*};
}

kinds! {
    /// `&str` of any lifetime: the output as-is.
    StrKind, StrTag, [&&&&&&], <> &str where [];
    /// `Result<T: IntoToolResult, E: Error>`: an error whose `source()` chain holds a
    /// suspension is that suspension.
    ResultErrorKind, ResultErrorTag, [&&&&&], <T, E> Result<T, E> where [T: IntoToolResult, E: StdError + 'static];
    /// `Result<T: Serialize, E: Error>`.
    ResultErrorJsonKind, ResultErrorJsonTag, [&&&&], <T, E> Result<T, E> where [T: Serialize, E: StdError + 'static];
    /// Anything `IntoToolResult`.
    IntoKind, IntoTag, [&&&], <T> T where [T: IntoToolResult];
    /// `Result<T: Serialize, E: Display>`.
    ResultJsonKind, ResultJsonTag, [&&], <T, E> Result<T, E> where [T: Serialize, E: fmt::Display + 'static];
    /// Any `Serialize` value: compact JSON.
    JsonKind, JsonTag, [&], <T> T where [T: Serialize];
    /// Anything else: a compile error on the return type.
    UnsupportedKind, UnsupportedTag, [], <T> T where [];
}

impl StrTag {
    /// Maps the value.
    pub fn convert(self, value: &str) -> ToolResult {
        ToolResult::success(value)
    }
}

impl ResultErrorTag {
    /// Maps the value.
    pub fn convert<T: IntoToolResult, E: StdError + 'static>(
        self,
        value: Result<T, E>,
    ) -> ToolResult {
        match value {
            Ok(v) => v.into_tool_result(),
            Err(e) => error_result(e),
        }
    }
}

impl ResultErrorJsonTag {
    /// Maps the value.
    pub fn convert<T: Serialize, E: StdError + 'static>(self, value: Result<T, E>) -> ToolResult {
        match value {
            Ok(v) => Json(v).into_tool_result(),
            Err(e) => error_result(e),
        }
    }
}

impl IntoTag {
    /// Maps the value.
    pub fn convert<T: IntoToolResult>(self, value: T) -> ToolResult {
        value.into_tool_result()
    }
}

impl ResultJsonTag {
    /// Maps the value.
    pub fn convert<T: Serialize, E: fmt::Display + 'static>(
        self,
        value: Result<T, E>,
    ) -> ToolResult {
        match value {
            Ok(v) => Json(v).into_tool_result(),
            Err(e) => error_into_tool_result(e),
        }
    }
}

impl JsonTag {
    /// Maps the value.
    pub fn convert<T: Serialize>(self, value: T) -> ToolResult {
        Json(value).into_tool_result()
    }
}

impl UnsupportedTag {
    /// Never compiles: `T` is not a tool return type.
    pub fn convert<T: ToolReturn>(self, value: T) -> ToolResult {
        value.unreachable()
    }
}

/// Implemented by no type: the bound that reports an unsupported return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "not a tool return type",
    note = "return a `String` or `&str`, `()`, a `ToolResult`, a `Suspension`, any `Serialize` value (sent as compact JSON), or a `Result` of those whose error implements `Display`"
)]
pub trait ToolReturn {
    /// Not callable.
    fn unreachable(self) -> ToolResult;
}

/// An error value: a suspension in its `source()` chain stays a suspension.
fn error_result<E: StdError + 'static>(e: E) -> ToolResult {
    if let Some(r) = suspension_in_chain(&e) {
        return r;
    }
    error_into_tool_result(e)
}
