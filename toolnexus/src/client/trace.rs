//! What a run tells `tracing`: one span per run, per model call and per tool call, named and
//! attributed after OpenTelemetry's GenAI semantic conventions, plus `pending` and `halted`
//! events.
//!
//! | span | `gen_ai.operation.name` | attributes |
//! |---|---|---|
//! | `invoke_agent` | `invoke_agent` | `gen_ai.request.model`, `toolnexus.run.resumed`, then `toolnexus.run.status`, `toolnexus.run.turns`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` |
//! | `chat` | `chat` | `gen_ai.request.model`, then `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `toolnexus.tool_calls` |
//! | `execute_tool` | `execute_tool` | `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, then `toolnexus.tool.is_error`, `toolnexus.tool.pending` |
//!
//! Events (target `toolnexus`): `pending` with `toolnexus.request.id`,
//! `toolnexus.request.kind` and `gen_ai.tool.name`; `halted` with the request id. The
//! providers log retries as events of their own. No field ever carries tool arguments, tool
//! output, a request's prompt or data, an answer, or a key: those can hold what a user typed.

use tracing::Span;
use tracing::field::Empty;

use super::{RunResult, RunStatus};
use crate::model::{ModelTurn, ToolCall};
use crate::request::Request;
use crate::result::ToolResult;

/// The span of one run (a fresh run or a resume).
pub(super) fn run_span(model: &str, resumed: bool) -> Span {
    tracing::info_span!(
        target: "toolnexus",
        "invoke_agent",
        otel.name = "invoke_agent toolnexus",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.request.model = model,
        toolnexus.run.resumed = resumed,
        toolnexus.run.status = Empty,
        toolnexus.run.turns = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
    )
}

/// Records a run's outcome on its span.
pub(super) fn run_finished(span: &Span, result: &RunResult) {
    let status = match result.status {
        RunStatus::Done => "done",
        RunStatus::Pending => "pending",
        RunStatus::Incomplete => "incomplete",
    };
    span.record("toolnexus.run.status", status);
    span.record("toolnexus.run.turns", result.turns);
    span.record("gen_ai.usage.input_tokens", result.usage.prompt_tokens);
    span.record("gen_ai.usage.output_tokens", result.usage.completion_tokens);
}

/// The span of one model call.
pub(super) fn chat_span(model: &str) -> Span {
    tracing::info_span!(
        target: "toolnexus",
        "chat",
        otel.name = tracing::field::display(format_args!("chat {model}")),
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        toolnexus.tool_calls = Empty,
    )
}

/// Records what a model call returned on its span (usage and the number of tool calls).
pub(super) fn chat_finished(span: &Span, turn: &ModelTurn) {
    if let Some(usage) = turn.usage {
        span.record("gen_ai.usage.input_tokens", usage.prompt_tokens);
        span.record("gen_ai.usage.output_tokens", usage.completion_tokens);
    }
    span.record("toolnexus.tool_calls", turn.tool_calls.len());
}

/// The span of one tool execution (the first one, or the retry with an answer).
pub(super) fn tool_span(call: &ToolCall) -> Span {
    tracing::info_span!(
        target: "toolnexus",
        "execute_tool",
        otel.name = tracing::field::display(format_args!("execute_tool {}", call.name)),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        toolnexus.tool.is_error = Empty,
        toolnexus.tool.pending = Empty,
    )
}

/// Records a tool's outcome on its span: failure or not, suspended or not (never the output).
pub(super) fn tool_finished(span: &Span, result: &ToolResult) {
    let pending = result.is_pending();
    span.record("toolnexus.tool.is_error", result.is_error && !pending);
    span.record("toolnexus.tool.pending", pending);
}

/// A tool suspended on `request`: its id and kind, never its prompt or data.
pub(super) fn pending(call: &ToolCall, request: &Request) {
    tracing::event!(
        target: "toolnexus",
        tracing::Level::INFO,
        toolnexus.request.id = request.id.as_str(),
        toolnexus.request.kind = request.kind.as_str(),
        gen_ai.tool.name = call.name.as_str(),
        "pending"
    );
}

/// The run halted on `request` (no `wait_for`): a host must persist and deliver it.
pub(super) fn halted(request: &Request) {
    tracing::event!(
        target: "toolnexus",
        tracing::Level::INFO,
        toolnexus.request.id = request.id.as_str(),
        toolnexus.request.kind = request.kind.as_str(),
        "halted"
    );
}
