//! [`PendingRun`]: the durable record of a halted run, resumable in another process.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Message, Role, Usage};
use crate::request::Request;
use crate::result::ToolResult;

use super::result::{RunResult, RunStatus, ToolCallRecord};

/// The version of the [`PendingRun`] record this release writes and reads.
pub const PENDING_RUN_VERSION: u32 = 1;

/// Where a run halted inside its last turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Halted {
    /// The halted call's position among the last assistant message's tool calls.
    pub(crate) call_index: usize,
    /// The arguments the halted call ran with (the retry uses them).
    pub(crate) args: Value,
    /// The later calls of the halted turn, in order: a finished result to enter the
    /// transcript on resume, or `null` for a call to execute on resume (one that suspended
    /// too, so its request is asked afresh).
    pub(crate) deferred: Vec<Option<Deferred>>,
}

/// A later call of the halted turn that finished before the halt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Deferred {
    pub(crate) args: Value,
    pub(crate) result: ToolResult,
    pub(crate) duration: Duration,
}

/// The durable record of a halted run: everything a fresh [`Client`](crate::Client), in
/// another process, needs to resume it with an [`Answer`](crate::Answer) and the same toolkit.
///
/// JSON with a `version` key ([`PENDING_RUN_VERSION`]) so a later release can tell an old
/// record from a new one; it holds the transcript, the tool-call records, usage and turns so
/// far, the model id, the pending request, and which calls of the halted turn are resolved.
///
/// ```
/// use toolnexus::{Client, FnTool, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let ask = FnTool::builder("ask").description("Asks.")
///     .handler(|_, ctx| async move {
///         match ctx.answer_data::<String>() {
///             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
///             _ => ToolResult::suspended(Request::input("Your name?").with_id("r1")),
///         }
///     })
///     .build().unwrap();
/// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
/// let script = [Reply::tool_call("ask", serde_json::json!({})), Reply::text("done")];
///
/// // process 1: halt, persist
/// let client = Client::builder(ScriptedModel::new(script.clone())).model_name("m").build().unwrap();
/// let halted = client.run("greet me", &toolkit).await.unwrap();
/// let json = PendingRun::try_from(&halted).unwrap().to_json();
///
/// // process 2: load, resume with the answer
/// let record = PendingRun::from_json(&json).unwrap();
/// let answer = record.pending().accept("Ada");
/// let model = ScriptedModel::new(script.into_iter().skip(1));
/// let client = Client::builder(model).model_name("m").build().unwrap();
/// let finished = client.resume(&record, answer, &toolkit).await.unwrap();
/// assert_eq!(finished.text, "done");
/// assert_eq!(finished.tool_calls[0].output, "hello Ada");
/// # });
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingRun {
    version: u32,
    model: String,
    pending: Request,
    messages: Vec<Message>,
    tool_calls: Vec<ToolCallRecord>,
    usage: Usage,
    turns: u32,
    halted: Halted,
}

impl PendingRun {
    /// The request the run waits on; the answer must echo its id.
    pub fn pending(&self) -> &Request {
        &self.pending
    }

    /// The model id of the run.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The transcript so far (the halted call's result is the request's prompt).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tool calls so far; the last one is the halted call's suspension.
    pub fn tool_calls(&self) -> &[ToolCallRecord] {
        &self.tool_calls
    }

    /// Usage summed over the turns so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Model round trips so far.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// The record's version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The record as JSON.
    pub fn to_json(&self) -> String {
        // every field is plain data with string keys: serialization cannot fail
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a record written by [`PendingRun::to_json`].
    ///
    /// # Errors
    ///
    /// [`Error::Persist`] when the text is not a record, or is a record of another version.
    pub fn from_json(json: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct Version {
            version: Option<u32>,
        }
        let version: Version = serde_json::from_str(json)
            .map_err(|e| Error::Persist(format!("not a pending-run record: {e}")))?;
        check_version(version.version)?;
        let record: Self = serde_json::from_str(json)
            .map_err(|e| Error::Persist(format!("not a pending-run record: {e}")))?;
        record.check()?;
        Ok(record)
    }

    /// Checks the record's inner consistency; returns the index of the halted turn's
    /// assistant message.
    pub(crate) fn check(&self) -> Result<usize> {
        check_version(Some(self.version))?;
        let bad = |what: &str| Err(Error::Persist(what.to_owned()));
        let Some(at) = self
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
        else {
            return bad("the transcript has no assistant turn to resume");
        };
        let calls = &self.messages[at].tool_calls;
        let results = &self.messages[at + 1..];
        let halted = &self.halted;
        if halted.call_index >= calls.len()
            || results.len() != halted.call_index + 1
            || results.iter().any(|m| m.role != Role::Tool)
            || halted.deferred.len() != calls.len() - halted.call_index - 1
        {
            return bad(
                "the halted turn's tool calls and results do not line up with the halted call",
            );
        }
        if results.last().and_then(|m| m.tool_call_id.as_deref())
            != Some(calls[halted.call_index].id.as_str())
        {
            return bad("the transcript's last tool result is not the halted call's");
        }
        if self.tool_calls.is_empty() {
            return bad("the record has no tool call for the halted call");
        }
        Ok(at)
    }

    pub(crate) fn into_parts(self) -> (RunResult, Halted) {
        let result = RunResult {
            text: self.pending.prompt.clone(),
            tool_call_count: self.tool_calls.len(),
            messages: self.messages,
            tool_calls: self.tool_calls,
            turns: self.turns,
            usage: self.usage,
            model: self.model,
            status: RunStatus::Pending,
            limit: None,
            pending: Some(self.pending),
            halted: None,
        };
        (result, self.halted)
    }
}

fn check_version(version: Option<u32>) -> Result<()> {
    match version {
        Some(PENDING_RUN_VERSION) => Ok(()),
        Some(v) => Err(Error::Persist(format!(
            "record version {v} is not supported: this release reads version {PENDING_RUN_VERSION}"
        ))),
        None => Err(Error::Persist(
            "the record has no `version`: it was not written by `PendingRun::to_json`".to_owned(),
        )),
    }
}

impl TryFrom<&RunResult> for PendingRun {
    type Error = Error;

    /// The durable record of a pending run.
    ///
    /// # Errors
    ///
    /// [`Error::NotPending`] when the run is not pending; [`Error::Persist`] when the result was
    /// read back from JSON (which does not carry the resume state: persist the `PendingRun`).
    fn try_from(run: &RunResult) -> Result<Self> {
        if run.status != RunStatus::Pending {
            return Err(Error::NotPending { status: run.status });
        }
        let (Some(pending), Some(halted)) = (&run.pending, &run.halted) else {
            return Err(Error::Persist(
                "this result carries no resume state (was it read back from JSON?): persist a `PendingRun` made from the result the client returned".to_owned(),
            ));
        };
        Ok(Self {
            version: PENDING_RUN_VERSION,
            model: run.model.clone(),
            pending: pending.clone(),
            messages: run.messages.clone(),
            tool_calls: run.tool_calls.clone(),
            usage: run.usage,
            turns: run.turns,
            halted: (**halted).clone(),
        })
    }
}

impl TryFrom<RunResult> for PendingRun {
    type Error = Error;

    /// As the `&RunResult` conversion, without cloning.
    ///
    /// # Errors
    ///
    /// As the `&RunResult` conversion.
    fn try_from(run: RunResult) -> Result<Self> {
        if run.status != RunStatus::Pending {
            return Err(Error::NotPending { status: run.status });
        }
        let (Some(pending), Some(halted)) = (run.pending, run.halted) else {
            return Err(Error::Persist(
                "this result carries no resume state (was it read back from JSON?): persist a `PendingRun` made from the result the client returned".to_owned(),
            ));
        };
        Ok(Self {
            version: PENDING_RUN_VERSION,
            model: run.model,
            pending,
            messages: run.messages,
            tool_calls: run.tool_calls,
            usage: run.usage,
            turns: run.turns,
            halted: *halted,
        })
    }
}
