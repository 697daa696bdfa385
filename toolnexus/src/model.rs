//! The model abstraction the agent loop talks to: OpenAI-shaped [`Message`]s in, one assistant
//! [`ModelTurn`] out. In-process models and the HTTP providers implement [`Model`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::util::BoxFuture;

pub use crate::message::{Message, Role, ToolCall, Usage};

/// A tool as a model is shown it: name, description, parameters schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments (root `"type":"object"`, no `$schema`/`title`).
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool spec.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// What the loop asks a model for one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The model id, sent verbatim.
    pub model: String,
    /// The transcript, OpenAI-shaped; the system prompt, when configured, is its first message.
    pub messages: Vec<Message>,
    /// The tools the model may call, in toolkit order.
    pub tools: Vec<ToolSpec>,
}

impl ModelRequest {
    /// A request.
    pub fn new(model: impl Into<String>, messages: Vec<Message>, tools: Vec<ToolSpec>) -> Self {
        Self {
            model: model.into(),
            messages,
            tools,
        }
    }
}

/// The model's reply for one turn: text, tool calls, or both, plus usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelTurn {
    /// The text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tool calls, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used by this turn, when the model reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl ModelTurn {
    /// A text-only turn.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A turn calling tools.
    pub fn tool_calls(tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::default()
        }
    }

    /// The same turn with usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Receives text deltas while a model streams.
pub type DeltaSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// A language model the agent loop can call: an HTTP provider or an in-process function.
pub trait Model: Send + Sync {
    /// One turn. With `stream` set, the model streams and calls it with each text delta as
    /// it arrives (a model that cannot stream returns [`Error::StreamingUnsupported`]).
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>>;

    /// The model id this model was built for, if any: what a [`Client`](crate::Client) sends
    /// when no [`model_name`](crate::client::ClientBuilder::model_name) is given. An
    /// [`HttpProvider`] built with `.model(..)` returns it; the default is `None`.
    ///
    #[cfg_attr(feature = "http", doc = "[`HttpProvider`]: crate::HttpProvider")]
    #[cfg_attr(
        not(feature = "http"),
        doc = "[`HttpProvider`]: https://docs.rs/toolnexus/latest/toolnexus/providers/struct.HttpProvider.html"
    )]
    fn default_model(&self) -> Option<&str> {
        None
    }
}

/// A shared model is a model, so a host can keep a handle (say, to a
/// [`ScriptedModel`](crate::ScriptedModel)) while a [`Client`](crate::Client) uses it.
impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>> {
        (**self).complete(request, stream)
    }

    fn default_model(&self) -> Option<&str> {
        (**self).default_model()
    }
}
