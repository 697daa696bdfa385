//! [`RunResult`]: what a run of the agent loop returns, and how it ended ([`RunStatus`], [`Limit`]),
//! each tool call recorded ([`ToolCallRecord`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{Message, Usage};
use crate::request::Request;
use crate::result::{ContentPart, Metadata};

use super::pending::Halted;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model answered without calling tools.
    Done,
    /// A tool suspended and no `wait_for` was configured: the run halted on
    /// [`RunResult::pending`] and can be resumed with an answer.
    Pending,
    /// A limit was reached first (see [`RunResult::limit`]).
    Incomplete,
}

impl RunStatus {
    /// `"done"`, `"pending"` or `"incomplete"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Pending => "pending",
            Self::Incomplete => "incomplete",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which limit ended an incomplete run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Limit {
    /// `max_turns` model round trips were made (`"maxTurns"`).
    #[serde(rename = "maxTurns")]
    MaxTurns,
}

/// One tool call of a run, as its tool answered it: `{name, args, output, isError,
/// metadata?, parts?}`.
///
/// The record of a call that halted the run is the suspension itself (its `metadata.pending`
/// is the request); a resume replaces it with the resolved result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCallRecord {
    /// The tool's name.
    pub name: String,
    /// The arguments it ran with (after a `before_tool` rewrite), or what the model sent when
    /// they could not be read.
    pub args: Value,
    /// What the model was given.
    pub output: String,
    /// Whether the result is a failure (or a suspension).
    pub is_error: bool,
    /// The result's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Metadata>>,
    /// The result's content parts (omitted when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ContentPart>,
}

/// The outcome of a run ([contract section 3](crate::contract)). Serializes to camelCase JSON:
/// `{"runId","text","messages","toolCalls","toolCallCount","turns","usage","model","status",
/// "limit"?,"pending"?}`.
///
/// ```
/// use toolnexus::{Client, Reply, RunStatus, ScriptedModel, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let client = Client::builder(ScriptedModel::new([Reply::text("hi")]))
///     .model_name("m")
///     .build()
///     .unwrap();
/// let result = client.run("hello", &Toolkit::new()).await.unwrap();
/// assert_eq!(result.status, RunStatus::Done);
/// assert!(result.run_id.starts_with("run-"));
/// let json = serde_json::to_string(&result).unwrap();
/// assert_eq!(
///     json.replace(&result.run_id, "run-1"),
///     r#"{"runId":"run-1","text":"hi","messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}],"toolCalls":[],"toolCallCount":0,"turns":1,"usage":{"promptTokens":0,"completionTokens":0,"totalTokens":0},"model":"m","status":"done"}"#
/// );
/// # });
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunResult {
    /// The run's id, unique per run (`run-<ms>-<counter>-<random>`): the same in every result
    /// of one run, across its halts and resumes (see [`PendingRun::run_id`](crate::PendingRun::run_id)).
    /// Empty in a result read from JSON written before run ids existed.
    #[serde(default)]
    pub run_id: String,
    /// The final text: the model's last answer, or the pending request's prompt when halted.
    pub text: String,
    /// The full transcript, system prompt first when one is configured.
    pub messages: Vec<Message>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// How many tool calls there were.
    pub tool_call_count: usize,
    /// Model round trips made.
    pub turns: u32,
    /// Token usage summed over the turns.
    pub usage: Usage,
    /// The model id.
    pub model: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The limit that was reached (only when `status` is incomplete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// The request the run halted on (only when `status` is pending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Box<Request>>,
    /// Every request the halted turn waits on, when it parked on several at once
    /// ([`ClientBuilder::questions_together`](crate::client::ClientBuilder::questions_together)):
    /// [`pending`](Self::pending) first, then the later calls' requests in call order. Empty
    /// (and absent from the JSON, `pendingAll`) when the run waits on one request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_all: Vec<Request>,
    /// What a resume needs beyond the transcript (kept out of the JSON; persist a
    /// [`PendingRun`](crate::PendingRun) instead).
    #[serde(skip)]
    pub(crate) halted: Option<Box<Halted>>,
    /// The decisions remembered rules made in this call of the loop, not yet in a store's
    /// history (a fresh run's, written when it parks).
    #[serde(skip)]
    pub(crate) decided: Vec<crate::ledger::RunEvent>,
}

impl PartialEq for RunResult {
    fn eq(&self, other: &Self) -> bool {
        self.run_id == other.run_id
            && self.text == other.text
            && self.messages == other.messages
            && self.tool_calls == other.tool_calls
            && self.tool_call_count == other.tool_call_count
            && self.turns == other.turns
            && self.usage == other.usage
            && self.model == other.model
            && self.status == other.status
            && self.limit == other.limit
            && self.pending == other.pending
            && self.pending_all == other.pending_all
    }
}

impl RunResult {
    /// A new run of `model` on the transcript `messages`, before its first turn: a fresh run
    /// id (`run-<ms>-<counter>-<random>`), nothing recorded yet.
    pub(crate) fn start(model: String, messages: Vec<Message>) -> Self {
        Self::incomplete(crate::id::unique("run"), model, messages)
    }

    /// Run `run_id` of `model` on the transcript `messages`, going on: status incomplete,
    /// no text, nothing recorded, pending or decided yet.
    pub(crate) fn incomplete(run_id: String, model: String, messages: Vec<Message>) -> Self {
        Self {
            run_id,
            text: String::new(),
            messages,
            tool_calls: Vec::new(),
            tool_call_count: 0,
            turns: 0,
            usage: Usage::default(),
            model,
            status: RunStatus::Incomplete,
            limit: None,
            pending: None,
            pending_all: Vec::new(),
            halted: None,
            decided: Vec::new(),
        }
    }

    /// Every request the run waits on: [`pending_all`](Self::pending_all) when it parked on
    /// several, else [`pending`](Self::pending) alone (none when it is not pending).
    pub fn requests(&self) -> Vec<&Request> {
        if self.pending_all.is_empty() {
            self.pending.as_deref().into_iter().collect()
        } else {
            self.pending_all.iter().collect()
        }
    }

    /// Whether the run halted on a request.
    pub fn is_pending(&self) -> bool {
        self.status == RunStatus::Pending
    }
}
