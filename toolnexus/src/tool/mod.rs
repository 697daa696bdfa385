//! Tools: the [`Tool`] trait and everything that makes, names, feeds or decorates one.
//!
//! - [`Tool`], [`SharedTool`], [`IntoTool`], [`BoxFuture`]: the trait, and how a
//!   [`Toolkit`](crate::Toolkit) holds tools;
//! - [`ToolAnnotations`]: what a tool says about its effects (read-only, destructive, ...);
//! - [`validate_tool_name`], [`sanitize`]: tool names;
//! - [`deserialize_args`]: a call's arguments decoded as a Rust type;
//! - [`FnTool`], [`FnToolBuilder`]: a tool built by hand from a closure;
//! - [`wrap`], [`retried`], [`Wrapped`]: decorators;
//! - [`IntoToolResult`], [`Json`]: the return mapping, which lives with
//!   [`ToolResult`](crate::ToolResult) in [`result`](crate::result).

mod annotations;
mod args;
mod conform;
mod fn_tool;
mod name;
mod traits;
mod wrap;

pub use annotations::ToolAnnotations;
pub use args::deserialize_args;
pub(crate) use args::{error_path, parse_arguments};
pub(crate) use conform::conforms;
pub use fn_tool::{FnTool, FnToolBuilder};
pub use name::{MAX_TOOL_NAME_LEN, sanitize, validate_tool_name};
pub use traits::{BoxFuture, IntoTool, SOURCE_NATIVE, SharedTool, Tool};
pub use wrap::{Wrapped, retried, wrap};

pub use crate::result::{IntoToolResult, Json};
