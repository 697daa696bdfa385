//! The types of a stored run: its state, its indexed columns, a worker's claim on it, and the
//! store's errors.

use std::fmt;
use std::time::SystemTime;

use serde_json::Value;

use crate::request::Answer;
use crate::run::{PendingRun, RunResult};

/// What went wrong in a [`RunStore`](super::RunStore). Messages are lowercase and name the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No run has that id, or no run ever made a request with that id (or the run that made it
    /// was deleted).
    #[error("no run found for `{key}`")]
    NotFound {
        /// The run id or request id looked up.
        key: String,
    },
    /// The request was answered already, whichever request of the run it was: the one the run
    /// waits on (another answer was recorded or claimed first, whoever won the race), an
    /// earlier one (the run went on and waits on a later request now), or the last one of a
    /// run that finished. A request no run made is [`NotFound`](Self::NotFound) instead.
    #[error(
        "request `{request_id}` of run `{run_id}` was already answered (the run is {state} now)"
    )]
    AlreadyAnswered {
        /// The run.
        run_id: String,
        /// The request the answer echoed.
        request_id: String,
        /// The run's state now (`answered`, `claimed`, `finished`, or `parked` on a later
        /// request).
        state: RunState,
    },
    /// The request expired before the answer arrived; the run's answer is `declined/expired`.
    #[error("the request of run `{run_id}` expired before the answer arrived")]
    Expired {
        /// The run.
        run_id: String,
    },
    /// The claim is no longer this worker's: its lease ran out and another worker took the run
    /// over, or the run was finished or deleted. Stop working on the run.
    #[error("the claim on run `{run_id}` was lost: another worker took it over or it ended")]
    LeaseLost {
        /// The run.
        run_id: String,
    },
    /// A run with that id, or a parked run waiting on that request id, is already stored.
    #[error("{0}")]
    Conflict(String),
    /// A stored row that cannot be read (an edited or damaged record). Other runs are
    /// unaffected.
    #[error("run `{run_id}` has an unreadable record: {message}")]
    Corrupt {
        /// The run.
        run_id: String,
        /// What could not be read.
        message: String,
    },
    /// A stored conversation whose transcript cannot be read. Other conversations are
    /// unaffected.
    #[error("conversation `{id}` has an unreadable transcript: {message}")]
    CorruptConversation {
        /// The conversation.
        id: String,
        /// What could not be read.
        message: String,
    },
    /// A kept [rule](crate::remember::Rule) whose row cannot be read (a damaged column, an
    /// unknown effect). Other rules are unaffected: a listing reports it
    /// ([`RulePage::damaged`](crate::remember::RulePage::damaged)).
    #[error("rule `{id}` has an unreadable row: {message}")]
    CorruptRule {
        /// The rule.
        id: String,
        /// What could not be read.
        message: String,
    },
    /// A record or result the store cannot keep (for example a pending result without its
    /// resume state).
    #[error("{0}")]
    Invalid(String),
    /// The caller may not do this: an answer asking to [remember](crate::remember) a decision
    /// for the runs of a principal other than the answerer (without the host's grant). Nothing
    /// was recorded.
    #[error("{0}")]
    NotAllowed(String),
    /// The store's database failed (connection, I/O, SQL).
    #[error("run store database error: {0}")]
    Backend(String),
}

/// `Result<T, StoreError>`.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// Where a stored run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunState {
    /// Halted, waiting for the answer to its request.
    Parked,
    /// Its answer was recorded ([`RunStore::submit`](super::RunStore::submit)); waiting for a
    /// worker to resume it.
    Answered,
    /// Answered and held by a worker's lease while it resumes.
    Claimed,
    /// Its request expired unanswered; waiting for a worker to resume it with
    /// `declined/expired`.
    Expired,
    /// Ended (done or incomplete); its [`RunResult`] is kept.
    Finished,
    /// Given up: every resume failed or crashed its worker, as many times as the worker
    /// allows ([`RunStore::fail`](super::RunStore::fail)); no worker resumes it again. Its
    /// history holds each failed attempt's error, and the reason it was given up.
    Failed,
    /// Its row could not be read when a worker came to claim it (a record or checkpoint
    /// that does not open under the store's seal keys, a forged, damaged or unknown-version
    /// record, a missing answer): taken out of the claimable set so it never blocks the other
    /// runs, with the reason in its history (event `damaged`), for an operator to look at.
    Damaged,
}

impl RunState {
    /// The state's name, as stored: `parked`, `answered`, `claimed`, `expired`, `finished`,
    /// `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Parked => "parked",
            Self::Answered => "answered",
            Self::Claimed => "claimed",
            Self::Expired => "expired",
            Self::Finished => "finished",
            Self::Failed => "failed",
            Self::Damaged => "damaged",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "parked" => Self::Parked,
            "answered" => Self::Answered,
            "claimed" => Self::Claimed,
            "expired" => Self::Expired,
            "finished" => Self::Finished,
            "failed" => Self::Failed,
            "damaged" => Self::Damaged,
            _ => return None,
        })
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A worker's hold on a claimed run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The worker that holds it (the `owner` given to `claim` or `take_over`).
    pub owner: String,
    /// When it runs out unless renewed.
    pub until: SystemTime,
}

/// A run an operator should look at: its row cannot be read, or a worker found it unreadable
/// and marked it [`Damaged`](RunState::Damaged) ([`RunStore::list_damaged`](super::RunStore::list_damaged),
/// [`Page::damaged`](super::Page::damaged)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DamagedRun {
    /// The run's id.
    pub run_id: String,
    /// Its state as stored (`damaged`, or whatever an unreadable row holds).
    pub state: String,
    /// Why it cannot be used: the error a worker met (its `damaged` event), or what in the row
    /// cannot be read.
    pub reason: String,
    /// When a worker marked it damaged (`None` for a row found unreadable as it was read).
    pub at: Option<SystemTime>,
}

/// The indexed columns of a stored run: what listing and lookups read without decoding the
/// record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunInfo {
    /// The run's id (stable across halts of the same run).
    pub run_id: String,
    /// The id of the request the run waits (or last waited) on.
    pub request_id: String,
    /// That request's kind.
    pub kind: String,
    /// That request's prompt.
    pub prompt: String,
    /// When the run was parked on that request.
    pub created_at: SystemTime,
    /// When that request stops accepting answers.
    pub expires_at: Option<SystemTime>,
    /// Where the run is.
    pub state: RunState,
    /// The worker's lease, while claimed.
    pub lease: Option<Lease>,
    /// Bumped by every change of the row.
    pub version: u64,
    /// Which attempt at resuming the current answer the run is on, as a worker's
    /// [`max_attempts`](crate::worker::WorkerBuilder::max_attempts) counts them
    /// ([`Claim::attempt`]): the claims and takeovers since the current request was answered
    /// or expired, less the ones handed back ([released](RunEventKind::Released)) and a
    /// takeover that gave the run up without resuming it. `0` while the request waits for an
    /// answer (a run that halts again starts again from `0`); never more than the
    /// `max_attempts` of the workers that resumed it.
    pub attempts: u32,
    /// What happened to the run, oldest first: requested, answered (and by whom), claimed or
    /// taken over (by which worker), expired, released, finished (and how).
    pub history: Vec<RunEvent>,
}

impl RunInfo {
    /// The event that answered the run's current request, when one did.
    pub fn answer_event(&self) -> Option<&RunEvent> {
        self.history.iter().rev().find(|e| {
            matches!(e.event, RunEventKind::Answered | RunEventKind::Expired)
                && e.request.as_deref() == Some(self.request_id.as_str())
        })
    }

    /// Who answered the current request (`None` while it waits, or when it expired).
    pub fn answered_by(&self) -> Option<&str> {
        self.answer_event()
            .filter(|e| e.event == RunEventKind::Answered)
            .and_then(|e| e.by.as_deref())
    }

    /// When the current request was answered (or expired).
    pub fn answered_at(&self) -> Option<SystemTime> {
        self.answer_event().map(|e| e.at)
    }

    /// The worker that last claimed or took over the run.
    pub fn resumed_by(&self) -> Option<&str> {
        self.history
            .iter()
            .rev()
            .find(|e| matches!(e.event, RunEventKind::Claimed | RunEventKind::TakenOver))
            .and_then(|e| e.by.as_deref())
    }

    /// How the run ended (`done` or `incomplete`) once finished, or `failed` once given up.
    pub fn outcome(&self) -> Option<&str> {
        match self.history.last() {
            Some(e) if matches!(e.event, RunEventKind::Finished | RunEventKind::Failed) => {
                e.outcome.as_deref()
            }
            _ => None,
        }
    }

    /// The errors of the resumes that failed since the current request was answered (or
    /// expired), oldest first; the last is why a [`Failed`](RunState::Failed) run was given up.
    pub fn failures(&self) -> Vec<&str> {
        failures_since_answer(&self.history, &self.request_id)
            .filter_map(|e| e.error.as_deref())
            .collect()
    }
}

/// What happened to a stored run: one entry of [`RunInfo::history`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RunEvent {
    /// What happened.
    pub event: RunEventKind,
    /// When (kept to the millisecond).
    #[serde(with = "event_time")]
    pub at: SystemTime,
    /// The request it concerns (requested, answered, expired).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// Who: the answerer (answered) or the worker (claimed, taken over, released).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// How the run ended (finished): `done` or `incomplete`; `failed` when a failed resume
    /// gave it up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Why a resume failed (failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Which attempt at resuming the current answer this takeover is (taken over): the
    /// first claim of an answer is attempt 1, and every earlier attempt that failed or
    /// crashed its worker counts ([`Claim::attempt`]). How many attempts were made once a
    /// resume failed (failed): the failed one included; for a run given up without resuming
    /// it (its earlier attempts reached the worker's
    /// [`max_attempts`](crate::worker::WorkerBuilder::max_attempts)), the ones before, so
    /// the takeover that gave it up is no attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The remembered rule that decided the request (decided), by id; `outcome` says
    /// `allowed` or `denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// The events of `history` since its request `request_id` was answered or expired (none
/// when it was not).
fn since_answer<'a>(history: &'a [RunEvent], request_id: &str) -> &'a [RunEvent] {
    let answered = history
        .iter()
        .rposition(|e| {
            matches!(e.event, RunEventKind::Answered | RunEventKind::Expired)
                && e.request.as_deref() == Some(request_id)
        })
        .map_or(history.len(), |i| i + 1);
    &history[answered..]
}

/// The failed resumes of `history` since its request `request_id` was answered or expired.
pub(crate) fn failures_since_answer<'a>(
    history: &'a [RunEvent],
    request_id: &str,
) -> impl Iterator<Item = &'a RunEvent> {
    since_answer(history, request_id)
        .iter()
        .filter(|e| e.event == RunEventKind::Failed)
}

/// How the earlier attempts at resuming the current answer of `history` (its request
/// `request_id`) ended without an outcome: `(failures, crashes)`. Each attempt begins with a
/// claim (claimed, taken over); one handed back ([released](RunEventKind::Released)) does not
/// count; one that [failed](RunEventKind::Failed) is a failure; any other ended with its
/// worker gone before its lease ran out (the process died, or stalled past its lease): a
/// crash. `history` ends before the claim being made.
pub(crate) fn attempts_since_answer(history: &[RunEvent], request_id: &str) -> (u32, u32) {
    let (mut begun, mut released, mut failed) = (0u32, 0u32, 0u32);
    for e in since_answer(history, request_id) {
        match e.event {
            RunEventKind::Claimed | RunEventKind::TakenOver => begun += 1,
            RunEventKind::Released => released += 1,
            RunEventKind::Failed => failed += 1,
            _ => {}
        }
    }
    let crashes = begun.saturating_sub(released).saturating_sub(failed);
    (failed, crashes)
}

/// Which attempt at resuming the current answer of `history` (its request `request_id`) the
/// run is on ([`RunInfo::attempts`]): the claims (claimed, taken over) since the answer, less
/// the releases; a [failed](RunEventKind::Failed) event that says how many attempts were made
/// then (its `attempt`) is taken at its word (a run given up without resuming it says one
/// fewer than its claims).
pub(crate) fn attempts_at_answer(history: &[RunEvent], request_id: &str) -> u32 {
    let mut attempts = 0u32;
    for e in since_answer(history, request_id) {
        match e.event {
            RunEventKind::Claimed | RunEventKind::TakenOver => attempts += 1,
            RunEventKind::Released => attempts = attempts.saturating_sub(1),
            RunEventKind::Failed => {
                if let Some(made) = e.attempt {
                    attempts = made.min(attempts);
                }
            }
            _ => {}
        }
    }
    attempts
}

impl RunEvent {
    pub(crate) fn new(event: RunEventKind, at_ms: i64) -> Self {
        Self {
            event,
            at: super::from_millis(at_ms),
            request: None,
            by: None,
            outcome: None,
            error: None,
            attempt: None,
            rule: None,
        }
    }

    pub(crate) fn request(mut self, id: &str) -> Self {
        self.request = Some(id.to_owned());
        self
    }

    pub(crate) fn by(mut self, who: &str) -> Self {
        self.by = Some(who.to_owned());
        self
    }

    pub(crate) fn outcome(mut self, outcome: &str) -> Self {
        self.outcome = Some(outcome.to_owned());
        self
    }

    pub(crate) fn error(mut self, error: &str) -> Self {
        self.error = Some(error.to_owned());
        self
    }

    /// The event of a remembered rule's decision on `request` (see
    /// [`RunEventKind::Decided`]), now.
    pub(crate) fn decided(request: &str, rule: &crate::remember::Rule) -> Self {
        let outcome = match rule.effect {
            crate::remember::Effect::Allow => "allowed",
            crate::remember::Effect::Deny => "denied",
        };
        let mut event = Self::new(RunEventKind::Decided, super::now_ms())
            .request(request)
            .outcome(outcome);
        event.rule = Some(rule.id.clone());
        event
    }

    pub(crate) fn attempt(mut self, attempt: u32) -> Self {
        self.attempt = Some(attempt);
        self
    }

    /// The event as stored: one JSON object.
    pub(crate) fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The kinds of [`RunEvent`], stored in snake case (`taken_over`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEventKind {
    /// The run parked on a request.
    Requested,
    /// An answer to the request was recorded (`by`: who gave it).
    Answered,
    /// The request expired unanswered; the run's answer is `declined/expired`.
    Expired,
    /// A worker claimed the run to resume it (`by`: the worker).
    Claimed,
    /// A worker took the run over after the last worker's lease ran out (`attempt`: which
    /// attempt at the current answer this is).
    TakenOver,
    /// A worker that was shutting down handed the run back unfinished.
    Released,
    /// The resumed run ended (`outcome`).
    Finished,
    /// A resume failed (`error`; `by`: the worker). The run is retried later, or, with
    /// `outcome` `failed`, given up.
    Failed,
    /// A worker found the row unreadable and took it out of the claimable set (`error`: why;
    /// `by`: the worker). The run is [`Damaged`](RunState::Damaged).
    Damaged,
    /// A remembered rule answered an approval request without asking anyone (`request`: the
    /// request the call made; `rule`: the rule's id; `outcome`: `allowed` or `denied`).
    /// See [`remember`](crate::remember).
    Decided,
    /// A deliverer made an attempt at a notification of the request (`request`; `by`: the
    /// notifier; `attempt`: which attempt; `outcome`: `delivered`, `retry`, `given_up` or
    /// `skipped`; `error`: why it failed). See [`outbox`](crate::store::outbox).
    Notified,
    /// An event a newer release wrote.
    #[serde(other)]
    Other,
}

mod event_time {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(crate::store::row::millis(*at))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        i64::deserialize(d).map(crate::store::from_millis)
    }
}

/// A stored run, decoded.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StoredRun {
    /// The indexed columns.
    pub info: RunInfo,
    /// The run's last parked record.
    pub record: PendingRun,
    /// The answer it was claimed with (or `declined/expired` once expired).
    pub answer: Option<Answer>,
    /// The last checkpoint a worker saved while resuming it.
    pub checkpoint: Option<Value>,
    /// How it ended, once finished.
    pub result: Option<RunResult>,
}

/// A worker's claim on a run: the record and answer to resume it with, and the lease.
///
/// Hand it back to [`RunStore::checkpoint`](super::RunStore::checkpoint), [`RunStore::renew`](super::RunStore::renew) and [`RunStore::finish`](super::RunStore::finish);
/// each checks that the lease is still this claim's.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Claim {
    /// The run.
    pub run_id: String,
    /// The parked record to resume.
    pub record: PendingRun,
    /// The answer to resume it with.
    pub answer: Answer,
    /// The last checkpoint of an earlier worker, when this claim took the run over.
    pub checkpoint: Option<Value>,
    /// The lease this claim holds.
    pub lease: Lease,
    /// Whether the run was taken over from a worker whose lease ran out (or, for an expired
    /// request, from nobody).
    pub taken_over: bool,
    /// The fencing token: how many claims the run has had, this one included.
    pub token: u64,
    /// When the answer was recorded (or the request expired), when the store knows.
    pub answered_at: Option<SystemTime>,
    /// How many resumes of this answer failed before this claim
    /// ([`RunStore::fail`](super::RunStore::fail)).
    pub failures: u32,
    /// How many resumes of this answer crashed their worker before this claim: claimed, then
    /// taken over once the lease ran out with no outcome recorded (the worker process died,
    /// or stalled past its lease). A resume handed back ([`RunStore::release`](super::RunStore::release))
    /// is not one.
    pub crashes: u32,
    /// Set by a worker that gives the run up without resuming it (its earlier attempts
    /// reached `max_attempts`): the failure it records counts no attempt of its own.
    pub(crate) gives_up: bool,
}

impl Claim {
    /// Which attempt at resuming the current answer this claim is: 1 for the first, plus
    /// every earlier one that [failed](Self::failures) or [crashed](Self::crashes) its worker.
    /// A worker gives the run up once this would pass its
    /// [`max_attempts`](crate::worker::WorkerBuilder::max_attempts).
    pub fn attempt(&self) -> u32 {
        self.failures.saturating_add(self.crashes).saturating_add(1)
    }
}
