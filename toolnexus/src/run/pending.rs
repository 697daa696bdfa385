//! [`PendingRun`]: the durable record of a halted run, resumable in another process.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{RecordError, RecordResult};
use crate::message::{Message, Usage};
use crate::request::Request;
use crate::result::ToolResult;

use super::result::{RunResult, RunStatus, ToolCallRecord};
use super::written::Written;
use crate::limits::{MAX_DEPTH, TextShape, deeper_than, depth, parse_checked};

/// The version of the [`PendingRun`] record this release writes and reads.
///
/// Version 2 (this release) added the run id, the fingerprint of the halted call, and dropped
/// the second copy of the halted call's arguments. A version-1 record is refused by
/// [`PendingRun::from_json`] (it carries no fingerprint, so it cannot be checked).
pub const PENDING_RUN_VERSION: u32 = 2;

/// Where a run halted inside its last turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Halted {
    /// The halted call's position among the last assistant message's tool calls.
    pub(crate) call_index: usize,
    /// The fingerprint of the halted call, taken when its request was made (see
    /// `fingerprint.rs`): its tool name and arguments come from the transcript and the
    /// call's record, and must still hash to this.
    pub(crate) fingerprint: String,
    /// The later calls of the halted turn, in order, each with the result it gave before the
    /// halt: a finished result enters the transcript on resume; a suspension keeps its
    /// request (and id) and surfaces, in call order, once the calls before it are resolved,
    /// without running again until its own answer arrives. `null` is a call to execute on
    /// resume.
    pub(crate) deferred: Vec<Option<Deferred>>,
    /// The name of the agent whose run this is ([`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name)),
    /// bound by the fingerprints; absent in records without one (and in records written
    /// before the name existed, which read as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// The conversation the run is a turn of ([`Client::ask`](crate::Client::ask)), bound by
    /// the fingerprints; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) conversation: Option<String>,
    /// Who the run is for ([`Client::for_principal`](crate::Client::for_principal)), bound by
    /// the fingerprints; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) principal: Option<String>,
    /// Whether the run parked with every request of its turn
    /// ([`ClientBuilder::questions_together`](crate::client::ClientBuilder::questions_together)):
    /// the later calls' suspensions wait for their answers beside the halted call's, and the
    /// run goes on once all are answered. Absent (false) in the family's one-at-a-time records.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) together: bool,
}

/// A later call of the halted turn: the result it gave before the halt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Deferred {
    pub(crate) args: Value,
    pub(crate) result: ToolResult,
    pub(crate) duration: Duration,
    /// For a suspension: the fingerprint of the call, taken when its request was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fingerprint: Option<String>,
}

/// The durable record of a halted run: everything a fresh [`Client`](crate::Client), in
/// another process, needs to resume it with an [`Answer`](crate::Answer) and the same toolkit.
///
/// JSON with a `version` key ([`PENDING_RUN_VERSION`]); it holds the run id, the transcript,
/// the tool-call records, usage and turns so far, the model id, the pending request, and
/// which calls of the halted turn are resolved, plus the fingerprint of the halted call.
///
/// # One source of truth, checked on load
///
/// The halted call's tool name comes from the transcript (the last assistant turn's tool
/// call) and the arguments it runs with on resume from its [`ToolCallRecord`]; the record
/// keeps no other copy. [`PendingRun::from_json`] (and [`Client::resume`](crate::Client::resume))
/// check the whole record against itself: every assistant turn's tool calls have exactly one
/// result each, no result names an unknown call, `pending` is the halted call's own request,
/// the halted call (and each later call of its turn that suspended too) still matches the
/// [fingerprint](PendingRun::fingerprint) taken when its request was made, versions and
/// indices are in range. Any disagreement is an
/// [`RecordError::Invalid`] naming the field and both values, and nothing runs.
///
/// These checks catch a corrupted or carelessly edited record. They cannot stop someone who
/// edits a record *consistently* (the fingerprint is a plain hash): a record that leaves the
/// process should be [sealed](PendingRun::seal) with a key, so that any edit at all is refused.
///
/// # Single use
///
/// A record is a promise to run the halted call at most once more. [`Client::resume`](crate::Client::resume)
/// consumes it (it takes the record by value); a copy kept elsewhere (a file, a row, a
/// cookie) is still a valid record, so a host keeps it single-use by deleting or marking it
/// *before* resuming, atomically: for instance `DELETE ... WHERE run_id = ? AND pending_id = ?`
/// and resume only when one row went away, or a compare-and-swap on a key-value store. The
/// pair ([`run_id`](PendingRun::run_id), `pending().id`) names exactly one record: the run id
/// stays the same across the halts of one run, and each halt waits on another request. Two
/// resumes of one record are visible as two results with the same run id continuing from the
/// same request.
///
/// ```
/// use toolnexus::{Client, FnTool, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let ask = FnTool::builder("ask").description("Asks.")
///     .handler(|_, ctx| async move {
///         match ctx.answer_data::<String>() {
///             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
///             _ => ToolResult::suspended(Request::input("Your name?")),
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
/// assert_eq!(record.run_id(), halted.run_id);
/// let answer = record.pending().accept("Ada");
/// let model = ScriptedModel::new(script.into_iter().skip(1));
/// let client = Client::builder(model).model_name("m").build().unwrap();
/// let finished = client.resume(record, answer, &toolkit).await.unwrap();
/// assert_eq!(finished.text, "done");
/// assert_eq!(finished.tool_calls[0].output, "hello Ada");
/// assert_eq!(finished.run_id, halted.run_id, "the same run, continued");
/// # });
/// ```
// `Debug` is written out (`written.rs`): the kept JSON is not shown
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PendingRun {
    pub(crate) version: u32,
    pub(crate) run_id: String,
    pub(crate) model: String,
    pub(crate) pending: Request,
    pub(crate) messages: Vec<Message>,
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    pub(crate) usage: Usage,
    pub(crate) turns: u32,
    pub(crate) halted: Halted,
    /// The record's JSON as the conversion that made and checked it wrote it (`written.rs`).
    #[serde(skip)]
    pub(crate) written: Written,
}

impl PendingRun {
    /// The request the run waits on; the answer must echo its id.
    pub fn pending(&self) -> &Request {
        &self.pending
    }

    /// Every request the run waits on: the [pending](Self::pending) one, then, when the run
    /// parked with every request of its turn
    /// ([`ClientBuilder::questions_together`](crate::client::ClientBuilder::questions_together)),
    /// the later calls' requests in call order (each bound by its own fingerprint, taken when
    /// it was made).
    pub fn requests(&self) -> Vec<&Request> {
        let later = self
            .halted
            .deferred
            .iter()
            .flatten()
            .filter(|_| self.halted.together)
            .filter_map(|d| d.result.pending());
        std::iter::once(&self.pending).chain(later).collect()
    }

    /// The call that suspended on request `id` of a together turn, a later call of the halted
    /// turn: its tool name (from the transcript) and the arguments it runs with.
    #[cfg(feature = "inbox")]
    pub(crate) fn later_call(&self, id: &str) -> Option<(&str, &Value)> {
        let k = self.halted.deferred.iter().position(|d| {
            d.as_ref()
                .and_then(|d| d.result.pending())
                .is_some_and(|r| r.id == id)
        })?;
        let assistant = self
            .messages
            .iter()
            .rev()
            .find(|m| !m.tool_calls.is_empty())?;
        let call = assistant.tool_calls.get(self.halted.call_index + 1 + k)?;
        let args = &self.halted.deferred[k].as_ref()?.args;
        Some((call.name.as_str(), args))
    }

    /// Whether the run parked with every request of its turn, waiting for all of their
    /// answers ([`requests`](Self::requests) holds more than one).
    pub fn is_together(&self) -> bool {
        self.halted.together
    }

    /// The run's id: unique per run (`run-<ms>-<counter>-<random>`, made like request ids),
    /// the same across the halts and resumes of one run, and the
    /// [`RunResult::run_id`] of every result the run returns.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The fingerprint of the halted call, taken when its request was made: SHA-256
    /// (lowercase hex) of the canonical JSON of `{"args": <the arguments the tool ran with>,
    /// "arguments": <the arguments as the model sent them>, "requestId": <the pending request's
    /// id>, "runId": <the run's id>, "tool": <its name>}` (keys sorted at every level, no
    /// whitespace). It binds the run and the request too, so a record whose run id or request
    /// id was rewritten (say, to move it into another run's row) is refused on load. A host
    /// may store it beside the request it delivers and compare it when the answer comes back.
    pub fn fingerprint(&self) -> &str {
        &self.halted.fingerprint
    }

    /// The name of the agent whose run this is, as its client was built with
    /// ([`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name)); `None` when it has
    /// none. Bound by the [fingerprint](PendingRun::fingerprint): what an answer page shows
    /// as who is asking.
    pub fn agent(&self) -> Option<&str> {
        self.halted.agent.as_deref()
    }

    /// The id of the conversation the run is a turn of ([`Client::ask`](crate::Client::ask));
    /// `None` for a run started on its own. Bound by the [fingerprint](PendingRun::fingerprint).
    pub fn conversation(&self) -> Option<&str> {
        self.halted.conversation.as_deref()
    }

    /// Who the run is for ([`Client::for_principal`](crate::Client::for_principal)): whose
    /// [remembered decisions](crate::remember) hold for it, wherever it is resumed; `None` for
    /// a run started for nobody. Bound by the [fingerprint](PendingRun::fingerprint).
    pub fn principal(&self) -> Option<&str> {
        self.halted.principal.as_deref()
    }

    /// The model id of the run.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The transcript so far (the halted call's result is the request's prompt).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tool calls so far; the last one is the halted call's suspension, and its `args`
    /// are what the tool runs with on resume.
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
        if let Some(json) = self.written.json() {
            return json.to_owned();
        }
        // every field is plain data with string keys: serialization cannot fail
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a record written by [`PendingRun::to_json`] and checks it against itself (see
    /// [the type's docs](PendingRun#one-source-of-truth-checked-on-load)).
    ///
    /// # Errors
    ///
    /// [`RecordError::Invalid`] when the text is not a record, is a record of another version (a
    /// version-1 record, which cannot be checked), is a sealed record (read it with
    /// [`PendingRun::open`]), or disagrees with itself; the message names the field and both
    /// values.
    pub fn from_json(json: &str) -> RecordResult<Self> {
        Self::from_json_checked(json).map(|(record, _)| record)
    }

    /// [`from_json`](Self::from_json), with what its check found: the index of the halted
    /// turn's assistant message (see [`check`](Self::check)), so a resume of the record read
    /// here does not check it again.
    pub(crate) fn from_json_checked(json: &str) -> RecordResult<(Self, usize)> {
        // the usual record straight into the type; any other text again below, for its error
        if let Some(record) = read_direct(json) {
            let at = record.check()?;
            return Ok((record, at));
        }
        let value = read_value(json)?;
        if value.get("mac").is_some() && value.get("record").is_some() {
            return Err(RecordError::Invalid(
                "this record is sealed: read it with `PendingRun::open` and the key set".to_owned(),
            ));
        }
        match value.get("version").map(Value::as_u64) {
            Some(Some(v)) if v == u64::from(PENDING_RUN_VERSION) => {}
            Some(Some(1)) => {
                return Err(RecordError::Invalid(
                    "record version 1 was written by an earlier release and carries no fingerprint of its halted call, so it cannot be checked: start the run again".to_owned(),
                ));
            }
            Some(Some(v)) => {
                return Err(RecordError::Invalid(format!(
                    "record version {v} is not supported: this release reads version {PENDING_RUN_VERSION}"
                )));
            }
            Some(None) => {
                return Err(RecordError::Invalid(format!(
                    "`version` is {}, not a number",
                    super::verify::show(&value["version"])
                )));
            }
            None => {
                return Err(RecordError::Invalid(
                    "the record has no `version`: it was not written by `PendingRun::to_json`"
                        .to_owned(),
                ));
            }
        }
        let record: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            RecordError::Invalid(format!(
                "not a pending-run record: at `{}`: {}",
                e.path(),
                e.inner()
            ))
        })?;
        let at = record.check()?;
        Ok((record, at))
    }

    /// Checks the record against itself; returns the index of the halted turn's assistant
    /// message.
    pub(crate) fn check(&self) -> RecordResult<usize> {
        super::verify::check(self)
    }

    pub(crate) fn into_parts(self) -> (RunResult, Halted) {
        let result = RunResult {
            run_id: self.run_id,
            text: self.pending.prompt.clone(),
            tool_call_count: self.tool_calls.len(),
            messages: self.messages,
            tool_calls: self.tool_calls,
            turns: self.turns,
            usage: self.usage,
            model: self.model,
            status: RunStatus::Pending,
            limit: None,
            pending_all: together_requests(&self.pending, &self.halted),
            pending: Some(Box::new(self.pending)),
            halted: None,
            decided: Vec::new(),
        };
        (result, self.halted)
    }
}

/// Every request a together record's turn waits on, the halted call's first, then the later
/// calls' suspensions in call order; empty for a record that waits on one request.
pub(crate) fn together_requests(pending: &Request, halted: &Halted) -> Vec<Request> {
    if !halted.together {
        return Vec::new();
    }
    let later = halted
        .deferred
        .iter()
        .flatten()
        .filter_map(|d| d.result.pending().cloned());
    let all: Vec<Request> = std::iter::once(pending.clone()).chain(later).collect();
    if all.len() > 1 { all } else { Vec::new() }
}

/// The levels a record adds around the values it holds (the deepest: a deferred call's
/// result metadata, `record.halted.deferred[k].result.metadata.<key>`).
const RECORD_LEVELS: usize = 8;

/// Refuses JSON text nested deeper than a record holds (plus `envelope` levels around it),
/// scanning the text once, without recursion, before anything parses it.
pub(crate) fn check_depth(json: &str, envelope: usize) -> RecordResult<()> {
    let limit = MAX_DEPTH + RECORD_LEVELS + envelope;
    match deeper_than(json, limit) {
        None => Ok(()),
        Some(at) => Err(RecordError::Invalid(format!(
            "the record nests more than {limit} levels deep (at byte {at}): a record holds values nested at most {MAX_DEPTH} levels, the deepest the loop accepts"
        ))),
    }
}

/// A record of this version read straight from `json` (depth checked first), or `None`.
///
/// A record whose numbers are all integers (most are: counts, token usage, ids), nested
/// within serde_json's limit, is read by serde_json in one pass straight into the type; it
/// reads such text to exactly the values the crate's own reader gives. Any other record (a
/// float, a deep value), or text serde_json refuses (a repeated field, say), goes through the
/// crate's reader, which reads every number exactly and any depth.
fn read_direct(json: &str) -> Option<PendingRun> {
    let shape = TextShape::of(json);
    if shape.depth > MAX_DEPTH + RECORD_LEVELS {
        return None;
    }
    let direct = if shape.serde_json_exact() {
        serde_json::from_str(json).ok()
    } else {
        None
    };
    let record: PendingRun = match direct {
        Some(record) => record,
        None => parse_checked(json).ok()?,
    };
    (record.version == PENDING_RUN_VERSION).then_some(record)
}

/// Parses `json` into a value: its depth is checked first, so the parser's own recursion
/// limit (which would refuse records the loop made) is lifted safely.
fn read_value(json: &str) -> RecordResult<Value> {
    check_depth(json, 0)?;
    parse_checked(json).map_err(|e| RecordError::Invalid(format!("not a pending-run record: {e}")))
}

/// Refuses a record that holds a value nested deeper than [`MAX_DEPTH`] (it could be
/// written but not read back).
fn check_holds(mut record: PendingRun) -> RecordResult<PendingRun> {
    let json = record.to_json();
    if check_depth(&json, 0).is_ok() {
        // a record that would be refused on load is refused now, while the run is at hand
        record.check()?;
        // the record is stored as these bytes: kept, not written again
        record.written = Written::kept(json);
        return Ok(record);
    }
    let metadata = record
        .tool_calls
        .iter()
        .filter_map(|c| serde_json::to_value(&c.metadata).ok());
    let deepest = record
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| depth(&c.arguments, usize::MAX)))
        .chain(record.tool_calls.iter().map(|c| depth(&c.args, usize::MAX)))
        .chain(metadata.map(|m| depth(&m, usize::MAX).saturating_sub(1)))
        .max()
        .unwrap_or_default();
    Err(RecordError::Invalid(format!(
        "the run holds a value nested {deepest} levels deep, and a record holds values nested at most {MAX_DEPTH} levels: a tool's metadata or a `before_tool` rewrite went deeper than the loop accepts arguments"
    )))
}

const NO_RESUME_STATE: &str = "this result carries no resume state (was it read back from JSON?): persist a `PendingRun` made from the result the client returned";

impl TryFrom<&RunResult> for PendingRun {
    type Error = RecordError;

    /// The durable record of a pending run.
    ///
    /// # Errors
    ///
    /// [`RecordError::NotPending`] when the run is not pending; [`RecordError::Invalid`] when the result was
    /// read back from JSON (which does not carry the resume state: persist the `PendingRun`),
    /// or when it holds a value nested deeper than [`MAX_DEPTH`], or does not pass the
    /// checks of [`PendingRun::from_json`] (say, a run continued from a `history` whose tool
    /// calls lack results): a record that could be written but not read back.
    fn try_from(run: &RunResult) -> RecordResult<Self> {
        if run.status != RunStatus::Pending {
            return Err(RecordError::NotPending { status: run.status });
        }
        let (Some(pending), Some(halted)) = (&run.pending, &run.halted) else {
            return Err(RecordError::Invalid(NO_RESUME_STATE.to_owned()));
        };
        check_holds(Self {
            version: PENDING_RUN_VERSION,
            run_id: run.run_id.clone(),
            model: run.model.clone(),
            pending: Request::clone(pending),
            messages: run.messages.clone(),
            tool_calls: run.tool_calls.clone(),
            usage: run.usage,
            turns: run.turns,
            halted: (**halted).clone(),
            written: Written::default(),
        })
    }
}

impl TryFrom<RunResult> for PendingRun {
    type Error = RecordError;

    /// As the `&RunResult` conversion, without cloning.
    ///
    /// # Errors
    ///
    /// As the `&RunResult` conversion.
    fn try_from(run: RunResult) -> RecordResult<Self> {
        if run.status != RunStatus::Pending {
            return Err(RecordError::NotPending { status: run.status });
        }
        let (Some(pending), Some(halted)) = (run.pending, run.halted) else {
            return Err(RecordError::Invalid(NO_RESUME_STATE.to_owned()));
        };
        check_holds(Self {
            version: PENDING_RUN_VERSION,
            run_id: run.run_id,
            model: run.model,
            pending: *pending,
            messages: run.messages,
            tool_calls: run.tool_calls,
            usage: run.usage,
            turns: run.turns,
            halted: *halted,
            written: Written::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{MAX_DEPTH, check_depth};
    use crate::limits::{depth, parse_checked};

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn the_limit_covers_the_providers_parser_limit() {
        // serde_json's default recursion limit (128), which the providers parse replies with,
        // admits 127 nested levels
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH - 1)).is_ok());
        let err = serde_json::from_str::<Value>(&nested(MAX_DEPTH)).unwrap_err();
        assert!(
            err.to_string().starts_with("recursion limit exceeded"),
            "{err}"
        );
        // a record's values may nest to the limit and further levels surround them
        let deep = nested(MAX_DEPTH + 8);
        assert_eq!(
            depth(&parse_checked::<Value>(&deep).unwrap(), usize::MAX),
            MAX_DEPTH + 8
        );
    }

    #[test]
    fn depth_counts_containers_without_recursion() {
        assert_eq!(depth(&json!(1), usize::MAX), 0);
        assert_eq!(depth(&json!({}), usize::MAX), 1);
        assert_eq!(depth(&json!({"a": [1, {"b": []}], "c": {}}), usize::MAX), 4);
        let mut deep = json!(0);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(depth(&deep, usize::MAX), 100_000);
        // dropping it recursively would overflow the stack: take it apart from the top
        let mut stack = vec![deep];
        while let Some(mut v) = stack.pop() {
            if let Value::Array(items) = &mut v {
                stack.append(items);
            }
        }
    }

    #[test]
    fn the_text_scan_skips_strings_and_names_where_it_stops() {
        let limit = MAX_DEPTH + 8;
        assert!(check_depth(&nested(limit), 0).is_ok());
        assert!(check_depth(&nested(limit + 1), 1).is_ok());
        assert_eq!(
            check_depth(&nested(limit + 1), 0).unwrap_err().to_string(),
            format!(
                "invalid persisted run: the record nests more than {limit} levels deep (at byte {limit}): a record holds values nested at most 128 levels, the deepest the loop accepts"
            )
        );
        let brackets_in_strings = format!("[\"{}\\\"{}\"]", "[".repeat(500), "{".repeat(500));
        assert!(check_depth(&brackets_in_strings, 0).is_ok());
    }
}
