//! What a store keeps, as words both the stores and the rest of the crate use without
//! depending on `store`: the store's errors, the states of a stored run and the events of its
//! history, and the time they are kept in (milliseconds since the Unix epoch). `store`
//! re-exports the public ones (`toolnexus::store::StoreError`, `RunEvent`, ...); `run` and
//! `remember` use them from here.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (negative before it).
pub(crate) fn millis(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

pub(crate) fn from_millis(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

pub(crate) fn now_ms() -> i64 {
    millis(SystemTime::now())
}

pub(crate) fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

/// What went wrong in a [`RunStore`](crate::store::RunStore). Messages are lowercase and name the run.
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
    /// The answer was recorded as one vote of a request that needs several approvals
    /// ([`Request::with_approvals`](crate::Request::with_approvals)), and the run waits for
    /// the others: what [`RunStore::claim`](crate::store::RunStore::claim) returns, having
    /// no claim to hand out yet. Nothing was lost: the vote is kept.
    #[error(
        "run `{run_id}`: the approval was recorded ({given} of {required}); it waits for {} more",
        required.saturating_sub(*given)
    )]
    Voted {
        /// The run.
        run_id: String,
        /// The approvals given so far for the arguments voted on, this one included.
        given: u32,
        /// How many the request needs.
        required: u32,
    },
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
    /// Its answer was recorded ([`RunStore::submit`](crate::store::RunStore::submit)); waiting for a
    /// worker to resume it.
    Answered,
    /// Answered and held by a worker's lease while it resumes.
    Claimed,
    /// Its request expired unanswered; waiting for a worker to resume it with
    /// `declined/expired`.
    Expired,
    /// Ended (done or incomplete); its [`RunResult`](crate::run::RunResult) is kept.
    Finished,
    /// Given up: every resume failed or crashed its worker, as many times as the worker
    /// allows ([`RunStore::fail`](crate::store::RunStore::fail)); no worker resumes it again. Its
    /// history holds each failed attempt's error, and the reason it was given up.
    Failed,
    /// Its row could not be read when a worker came to claim it (a record or checkpoint
    /// that does not open under the store's seal keys, a forged, damaged or unknown-version
    /// record, a missing answer): taken out of the claimable set so it never blocks the other
    /// runs, with the reason in its history (event `damaged`), for an operator to look at.
    Damaged,
}

crate::util::names! {
    RunState {
        Parked => "parked",
        Answered => "answered",
        Claimed => "claimed",
        Expired => "expired",
        Finished => "finished",
        Failed => "failed",
        Damaged => "damaged",
    }
    /// The state's name, as stored: `parked`, `answered`, `claimed`, `expired`, `finished`,
    /// `failed`, `damaged`.
    pub fn as_str;
    pub(crate) fn parse;
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to a stored run: one entry of [`RunInfo::history`](crate::store::RunInfo::history).
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
    /// crashed its worker counts ([`Claim::attempt`](crate::store::Claim::attempt)). How many attempts were made once a
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
    /// The group the request was with before it escalated (escalated; `None`: no group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The group the request escalated to (escalated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The request's new deadline (escalated), kept to the millisecond.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "event_deadline"
    )]
    pub deadline: Option<SystemTime>,
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
            at: from_millis(at_ms),
            request: None,
            by: None,
            outcome: None,
            error: None,
            attempt: None,
            from: None,
            to: None,
            deadline: None,
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

    pub(crate) fn attempt(mut self, attempt: u32) -> Self {
        self.attempt = Some(attempt);
        self
    }

    /// An escalation's groups and new deadline (ms).
    pub(crate) fn escalation(mut self, from: Option<&str>, to: &str, deadline: i64) -> Self {
        self.from = from.map(str::to_owned);
        self.to = Some(to.to_owned());
        self.deadline = Some(from_millis(deadline));
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
    /// A person accepted a request that needs several approvals (`request`; `by`: who). See
    /// [`Vote`](crate::store::Vote).
    // numbered after `Other`, whose number (11) stays what it was
    Voted = 12,
    /// The request's deadline passed and it went on to the next step of its escalation
    /// (`request`; `from`, `to`: the groups; `deadline`: the new one) instead of expiring.
    Escalated = 13,
    /// An event a newer release wrote.
    #[serde(other)]
    Other = 11,
}

mod event_deadline {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(
        at: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => s.serialize_i64(super::millis(*at)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Option::<i64>::deserialize(d).map(|ms| ms.map(super::from_millis))
    }
}

mod event_time {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(super::millis(*at))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        i64::deserialize(d).map(super::from_millis)
    }
}
