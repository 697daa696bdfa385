//! [`Event`]s a run emits as it goes, and [`Metric`]s of its model and tool calls.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Usage;
use crate::request::Request;

use crate::run::RunResult;

/// What happens during a run, in order ([contract section 3](crate::contract)). JSON form:
/// `{"type":"text","delta"}`, `{"type":"tool_call","id","name","args"}`,
/// `{"type":"tool_result","id","name","output","isError"}`, `{"type":"usage","usage"}`,
/// `{"type":"pending","request"}`, `{"type":"done","result"}`; and this port's
/// `{"type":"decided","id","name","request","rule","allowed"}` (a
/// [remembered rule](crate::remember) answered an approval).
///
/// ```
/// use toolnexus::{Event, Request};
///
/// // a fixed id pins the bytes here; a real request keeps its generated, unique id
/// let e = Event::Pending { request: Request::input("Which city?").with_id("r1") };
/// assert_eq!(
///     serde_json::to_string(&e).unwrap(),
///     r#"{"type":"pending","request":{"id":"r1","kind":"input","prompt":"Which city?"}}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Text from the model: each streamed delta, or a whole answer when not streaming.
    Text {
        /// The text.
        delta: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as the model sent them.
        args: Value,
    },
    /// A tool call's result entered the transcript (never emitted for a halted call).
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// What the model is given.
        output: String,
        /// Whether it is a failure.
        #[serde(rename = "isError")]
        is_error: bool,
    },
    /// A running tool logged a message ([`Context::log`](crate::Context::log)): JSON
    /// `{"type":"tool_log","id","name","level","message"}`. Emitted to the client's `on_event`
    /// as it happens (not to a `stream` sink).
    ToolLog {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// How severe it is.
        level: crate::context::LogLevel,
        /// What it says.
        message: String,
    },
    /// A running tool reported its progress ([`Context::progress`](crate::Context::progress)):
    /// JSON `{"type":"tool_progress","id","name","progress","total"?,"message"?}`. Emitted to
    /// the client's `on_event` as it happens (not to a `stream` sink).
    ToolProgress {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The work done so far.
        progress: f64,
        /// The work in all, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// What is being done.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Token usage of one model turn.
    Usage {
        /// The turn's usage.
        usage: Usage,
    },
    /// A tool suspended on `request` (emitted before anything waits on it).
    Pending {
        /// The request.
        request: Request,
    },
    /// A [remembered rule](crate::remember) answered a call's approval request without
    /// asking anyone (no [`Event::Pending`] is emitted for it): JSON
    /// `{"type":"decided","id","name","request","rule","allowed"}`.
    Decided {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The approval request the call made.
        request: Request,
        /// The rule's id.
        rule: String,
        /// Whether the rule approved the call (`false`: it declined it).
        allowed: bool,
    },
    /// The run ended (done, pending or incomplete).
    Done {
        /// The result.
        result: Box<RunResult>,
    },
}

/// A measurement of one model turn or one tool call, for a metrics sink.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Metric {
    /// One model round trip.
    Llm {
        /// The model id.
        model: String,
        /// The turn's number, from 1.
        turn: u32,
        /// How long the model took.
        duration: Duration,
        /// The usage it reported.
        usage: Option<Usage>,
        /// How many tool calls it asked for.
        tool_calls: usize,
    },
    /// One tool call (a suspension reports `is_error: false, pending: true`; the resolved
    /// result after the answer is reported again, with `pending: false`).
    Tool {
        /// The tool.
        name: String,
        /// The call's id.
        call_id: String,
        /// How long the call took.
        duration: Duration,
        /// Whether it failed (never true for a suspension).
        is_error: bool,
        /// Whether it suspended.
        pending: bool,
    },
}
