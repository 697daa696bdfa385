//! [`Reply`]: one assistant reply of an in-process or scripted model, and what an in-process
//! model's function may return ([`IntoReply`]).

use serde_json::Value;
use std::fmt;

use crate::model::{ModelTurn, ToolCall, Usage};

/// One assistant reply of an in-process (or scripted) model: text, or tool calls
/// (`{id?, name, arguments}`), plus optional usage.
///
/// Arguments may be a JSON object or a JSON string (as OpenAI sends them); a string that is
/// not a JSON object reaches the loop as is, and the model is told what is wrong. A call
/// without an id of its own is left without one here; the agent loop numbers it
/// `call_<turn>_<index>` (the run's turn, counted from 1, and the call's position in the
/// reply, from 0), unique within a run.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Reply, Usage};
///
/// let reply = Reply::tool_call("book_flight", json!({"flight": "AI-503"}))
///     .with_call_id("c7", "weather", r#"{"city":"Oslo"}"#)
///     .with_usage(Usage::new(10, 2));
/// let turn = reply.into_turn();
/// assert_eq!(turn.tool_calls[0].id, "");
/// assert_eq!(turn.tool_calls[0].name, "book_flight");
/// assert_eq!(turn.tool_calls[1].id, "c7");
/// assert_eq!(turn.tool_calls[1].arguments, json!({"city": "Oslo"}));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct Reply {
    text: Option<String>,
    calls: Vec<(Option<String>, String, Value)>,
    usage: Option<Usage>,
}

impl Reply {
    /// A text answer (ends the run).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A reply calling one tool; `arguments` is a JSON object or a JSON string.
    pub fn tool_call(name: impl Into<String>, arguments: impl Into<Value>) -> Self {
        Self::default().with_call(name, arguments)
    }

    /// Adds a tool call (the loop gives it the id `call_<turn>_<index>`).
    pub fn with_call(mut self, name: impl Into<String>, arguments: impl Into<Value>) -> Self {
        self.calls.push((None, name.into(), arguments.into()));
        self
    }

    /// Adds a tool call with its own id.
    pub fn with_call_id(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Value>,
    ) -> Self {
        self.calls
            .push((Some(id.into()), name.into(), arguments.into()));
        self
    }

    /// Sets the text that goes with tool calls (or replaces the answer).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Sets the usage this reply reports.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The model turn this reply stands for: ids not given left empty (the loop numbers them),
    /// argument strings that hold a JSON object parsed.
    pub fn into_turn(self) -> ModelTurn {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(id, name, arguments)| {
                ToolCall::new(id.unwrap_or_default(), name, normalize_arguments(arguments))
            })
            .collect();
        let mut turn = ModelTurn::tool_calls(tool_calls);
        turn.text = self.text;
        turn.usage = self.usage;
        turn
    }
}

impl From<ModelTurn> for Reply {
    fn from(turn: ModelTurn) -> Self {
        Self {
            text: turn.text,
            calls: turn
                .tool_calls
                .into_iter()
                .map(|c| (Some(c.id), c.name, c.arguments))
                .collect(),
            usage: turn.usage,
        }
    }
}

/// A JSON string holding an object becomes the object; anything else stays as it was (the
/// loop reports what is wrong with it to the model).
fn normalize_arguments(arguments: Value) -> Value {
    match arguments {
        Value::String(s) => match crate::json_text::from_peer_str(&s) {
            Ok(obj @ Value::Object(_)) => obj,
            _ => Value::String(s),
        },
        other => other,
    }
}

/// What an in-process model's function may return: a [`Reply`], or a `Result` of one whose
/// error is the model's failure (final, never retried).
pub trait IntoReply {
    /// The reply, or the failure's text.
    ///
    /// # Errors
    ///
    /// The model's failure, as text.
    fn into_reply(self) -> Result<Reply, String>;
}

impl IntoReply for Reply {
    fn into_reply(self) -> Result<Reply, String> {
        Ok(self)
    }
}

impl IntoReply for ModelTurn {
    fn into_reply(self) -> Result<Reply, String> {
        Ok(self.into())
    }
}

impl<R: IntoReply, E: fmt::Display> IntoReply for Result<R, E> {
    fn into_reply(self) -> Result<Reply, String> {
        self.map_err(|e| e.to_string())?.into_reply()
    }
}
