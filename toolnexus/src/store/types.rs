//! The types of a stored run: its state, its indexed columns, a worker's claim on it, and the
//! store's errors.

use std::time::SystemTime;

use serde_json::Value;

use crate::ledger::failures_since_answer;
pub use crate::ledger::{RunEvent, RunEventKind, RunState, StoreError, StoreResult};
use crate::request::Answer;
use crate::run::{PendingRun, RunResult};

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
    /// The group that may answer the current request now (`data.approvers`, or the group an
    /// [escalation](crate::Request::escalate_to) moved it to; `None`: anyone the host lets
    /// answer).
    pub approvers: Option<String>,
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
    /// The votes given so far for its current request, oldest first, when that request
    /// needs several approvals ([`Request::with_approvals`](crate::Request::with_approvals));
    /// empty otherwise.
    pub votes: Vec<super::Vote>,
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
    /// The answers to the run's other requests, when it parked with every request of its turn
    /// ([`PendingRun::is_together`]), in call order (a request left unanswered when the run
    /// expired reads as declined, `expired`); empty otherwise.
    pub other_answers: Vec<Answer>,
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
    /// The deadline of the run's current step when it was claimed (the row's `expires_at`): an
    /// [escalation](crate::Request::escalate_to) moves it past the record's `expiresAt`, and
    /// the resume judges the answer's lateness by it.
    pub(crate) deadline: Option<SystemTime>,
    /// What the store's check of `record` found when it read it (the record crossed the
    /// store's trust boundary once, checked there): a resume of the claim does not check it
    /// again while `record` is the one checked.
    pub(crate) checked: Option<Checked>,
    /// When and by whom each request of a together run's turn had its answer recorded, in
    /// call order (the pending request's first); empty for any other run. Each answer counts
    /// from then, not from when the turn completed ([`answered_at`](Self::answered_at)).
    pub(crate) turn: Vec<Recorded>,
}

/// When and by whom the store recorded the answer to one request of a together turn (both
/// `None` while it has none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub(crate) at: Option<SystemTime>,
    pub(crate) by: Option<String>,
}

/// A record's check, as the store made it when it read the record: the index of its halted
/// turn's assistant message, and the fingerprint of the record it was found in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checked {
    assistant_at: usize,
    fingerprint: String,
}

impl Checked {
    pub(crate) fn of(record: &PendingRun, assistant_at: usize) -> Self {
        Self {
            assistant_at,
            fingerprint: record.fingerprint().to_owned(),
        }
    }

    /// The check's finding for `record`, when `record` is (by its fingerprint and size) the
    /// record it was made of; `None`: check `record` again.
    pub(crate) fn of_record(&self, record: &PendingRun) -> Option<usize> {
        (record.fingerprint() == self.fingerprint && self.assistant_at < record.messages().len())
            .then_some(self.assistant_at)
    }
}

impl Claim {
    /// Which attempt at resuming the current answer this claim is: 1 for the first, plus
    /// every earlier one that [failed](Self::failures) or [crashed](Self::crashes) its worker.
    /// A worker gives the run up once this would pass its
    /// [`max_attempts`](crate::worker::WorkerBuilder::max_attempts).
    pub fn attempt(&self) -> u32 {
        self.failures.saturating_add(self.crashes).saturating_add(1)
    }

    /// When the answer to the `k`-th request of the run's turn (call order; 0: the pending
    /// request's) was recorded: its own time in a together run, else
    /// [`answered_at`](Self::answered_at).
    pub(crate) fn answered_at_of(&self, k: usize) -> Option<SystemTime> {
        self.turn
            .get(k)
            .and_then(|recorded| recorded.at)
            .or(self.answered_at)
    }
}
