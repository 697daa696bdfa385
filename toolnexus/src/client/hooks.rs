//! Hooks: host code the loop calls around tool calls and model turns.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::model::{ModelRequest, ModelTurn, ToolCall};
use crate::result::ToolResult;
use crate::tool::BoxFuture;

/// What a `before_tool` hook decides about a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BeforeTool {
    /// Run the tool as called.
    Continue,
    /// Run the tool with these arguments instead.
    Rewrite(Map<String, Value>),
    /// Do not run the tool: this is its result. A suspension returned here is handled exactly
    /// like one from the tool; once answered, the real tool runs with the answer.
    Return(ToolResult),
}

pub(crate) type BeforeToolFn =
    Arc<dyn Fn(ToolCall) -> BoxFuture<'static, BeforeTool> + Send + Sync>;
pub(crate) type AfterToolFn = Arc<dyn Fn(&ToolCall, ToolResult) -> ToolResult + Send + Sync>;
pub(crate) type BeforeLlmFn = Arc<dyn Fn(ModelRequest) -> ModelRequest + Send + Sync>;
pub(crate) type AfterLlmFn = Arc<dyn Fn(&ModelTurn) + Send + Sync>;

#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) before_tool: Option<BeforeToolFn>,
    pub(crate) after_tool: Option<AfterToolFn>,
    pub(crate) before_llm: Option<BeforeLlmFn>,
    pub(crate) after_llm: Option<AfterLlmFn>,
}
