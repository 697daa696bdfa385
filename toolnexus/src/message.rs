//! The transcript a run keeps and a model reads: OpenAI-shaped [`Message`]s (with their
//! [`Role`]), the [`ToolCall`]s an assistant turn makes, and [`Usage`]. Plain data, below
//! everything that talks to a model (see [`model`](crate::model), which re-exports them).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::result::ContentPart;

/// Who said a [`Message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// The human (or host).
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// One entry of a transcript, OpenAI-shaped: `{"role", "content"?, "tool_calls"?,
/// "tool_call_id"?, "isError"?, "parts"?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text (absent on an assistant turn that only calls tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls of an assistant turn, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Whether a tool message is a failure (Anthropic's `is_error`; not sent to OpenAI).
    #[serde(
        default,
        rename = "isError",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_error: bool,
    /// The content parts of a tool result (images, files, audio), in order; each provider
    /// sends them as its own content blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ContentPart>,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }

    /// An assistant message calling tools (with optional text).
    pub fn assistant_tool_calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            role: Role::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
            is_error: false,
            parts: Vec::new(),
        }
    }

    /// A tool result answering the call `tool_call_id`.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
            is_error,
            parts: Vec::new(),
        }
    }

    /// The same message with content parts (what a tool result with
    /// [`parts`](crate::ToolResult::parts) becomes).
    #[must_use]
    pub fn with_parts(mut self, parts: Vec<ContentPart>) -> Self {
        self.parts = parts;
        self
    }

    fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            parts: Vec::new(),
        }
    }
}

/// A tool call requested by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id. An HTTP provider fills one the model left out as
    /// `call_<16 hex digits>_<index>` (the digits distinct for every reply of the process); the
    /// agent loop numbers one still empty `call_<turn>_<index>`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON object, or the raw string when the model sent text that is not
    /// valid JSON (the loop then tells the model what is wrong).
    pub arguments: Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// Token usage of one turn, or summed over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the prompt.
    pub prompt_tokens: u64,
    /// Tokens the model produced.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
}

impl Usage {
    /// Usage from prompt and completion counts (the total is their sum).
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(rhs.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(rhs.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(rhs.total_tokens);
    }
}
