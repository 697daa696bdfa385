//! Tools, one module per concern: `#[tool]` argument decoding (`args`), return mapping
//! (`returns`), input schemas, names and descriptions (`schema`), `#[toolset]` and the context
//! parameter (`toolset`), declarative safety (`safety`), timeouts, cancellation and panics
//! (`guard`), clean expansion under strict user lints (`lints`), hand-built tools (`fn_tool`),
//! tool names (`names`) and `Toolkit` (`toolkit`).

mod args;
mod fn_tool;
mod guard;
pub mod lints;
mod names;
mod returns;
mod safety;
mod schema;
mod toolkit;
mod toolset;
