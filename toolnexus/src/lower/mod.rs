//! Schema lowerings: a tool's JSON Schema rewritten into the subset a provider accepts.
//!
//! - [`openai_strict_schema`]: OpenAI's strict function calling (`"strict": true`);
//! - [`gemini_schema`]: Gemini's function-declaration `parameters` (an OpenAPI 3.0 subset).
//!
//! A construct the target cannot express is an [`Error::SchemaLowering`] naming the tool, the
//! construct and where it is (a JSON pointer into the tool's schema, its own field), never a
//! schema the provider rejects or silently misreads.
//!
//! Both walk a schema with the same state and `$ref` resolution (`shared.rs`); each lowering
//! has its own file, and JSON pointer escaping is apart (`pointer.rs`).
//!
//! [`Error::SchemaLowering`]: crate::Error::SchemaLowering

mod gemini;
mod openai_strict;
mod pointer;
mod shared;

pub use gemini::gemini_schema;
pub use openai_strict::openai_strict_schema;
