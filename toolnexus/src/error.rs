//! [`Error`]: the host's problems. A tool's own failure or suspension is never an `Error`; it is
//! a [`ToolResult`](crate::ToolResult) handed back to the model.

/// The error type of toolnexus: misconfiguration, transport, a broken `wait_for`, a
/// mismatched answer. Messages are lowercase and say what to change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool name outside `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidToolName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Two tools of one toolkit share a name.
    #[error("duplicate tool name `{name}`: every tool of a toolkit needs its own name")]
    DuplicateTool {
        /// The name registered twice.
        name: String,
    },
    /// A tool's input schema is not a JSON Schema object with root `"type":"object"`.
    #[error("invalid input schema for tool `{tool}`: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// A tool's schema cannot be lowered to what a provider accepts.
    #[error("tool `{tool}` cannot be sent to {target}: {construct}")]
    SchemaLowering {
        /// The tool.
        tool: String,
        /// The provider dialect (`openai strict`, `gemini`).
        target: &'static str,
        /// The construct that cannot survive the lowering, and where it is.
        construct: String,
    },
    /// A builder was finished without a required part.
    #[error("{0}")]
    Config(String),
}

/// `Result<T, toolnexus::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
