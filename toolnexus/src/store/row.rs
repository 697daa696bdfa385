//! The row codec every store shares: a stored run as indexed columns plus JSON text
//! ([`RawRow`]), what a park or finish writes ([`Columns`], [`Outcome`]), and how a row becomes
//! a [`RunInfo`], a [`StoredRun`] or a [`Claim`].

use std::time::SystemTime;

use serde_json::Value;

use super::{
    Claim, DamagedRun, Lease, RunEvent, RunEventKind, RunInfo, RunState, Seal, StoreError,
    StoreResult, StoredRun,
};
use super::{from_millis, millis};
use crate::ledger::{attempts_at_answer, attempts_since_answer};
use crate::request::Answer;
use crate::run::{PendingRun, RunResult, RunStatus};

/// The indexed columns of a record about to be parked.
#[derive(Debug)]
pub(crate) struct Columns {
    pub(crate) run_id: String,
    pub(crate) request_id: String,
    pub(crate) kind: String,
    pub(crate) prompt: String,
    pub(crate) expires_at: Option<i64>,
    pub(crate) record: String,
    /// The group that may answer (`data.approvers`).
    pub(crate) approvers: Option<String>,
    /// The escalation plan ([`escalation_plan`](crate::request::escalation_plan)).
    pub(crate) escalate: Option<String>,
}

impl Columns {
    /// The event of this park.
    pub(crate) fn requested(&self, now: i64) -> RunEvent {
        RunEvent::new(RunEventKind::Requested, now).request(&self.request_id)
    }

    pub(crate) fn of(run_id: String, record: &PendingRun, seal: &Seal) -> Self {
        let pending = record.pending();
        Self {
            run_id,
            request_id: pending.id.clone(),
            kind: pending.kind.clone(),
            prompt: pending.prompt.clone(),
            // an `expiresAt` that cannot be read is expired already (the request cannot be
            // honoured)
            expires_at: pending
                .expires_at
                .as_ref()
                .map(|_| pending.expires_at_time().map_or(i64::MIN, millis)),
            record: seal.record(record),
            approvers: pending.approvers().map(str::to_owned),
            escalate: crate::request::escalation_plan(pending),
        }
    }
}

/// The result of a finish: either the run parks again or it is done.
pub(crate) enum Outcome {
    Parked(Columns),
    /// The result's JSON and its status (`done`, `incomplete`).
    Finished(String, &'static str),
}

impl Outcome {
    pub(crate) fn of(run_id: &str, result: RunResult, seal: &Seal) -> StoreResult<Self> {
        if result.status == RunStatus::Pending {
            let record = PendingRun::try_from(result).map_err(|e| {
                StoreError::Invalid(format!("cannot park run `{run_id}` again: {e}"))
            })?;
            Ok(Self::Parked(Columns::of(run_id.to_owned(), &record, seal)))
        } else {
            let json = serde_json::to_string(&result).map_err(|e| {
                StoreError::Invalid(format!("cannot keep the result of run `{run_id}`: {e}"))
            })?;
            Ok(Self::Finished(json, result.status.as_str()))
        }
    }

    /// The history event of this outcome at `now`.
    pub(crate) fn event(&self, now: i64) -> RunEvent {
        match self {
            Self::Parked(cols) => cols.requested(now),
            Self::Finished(_, status) => RunEvent::new(RunEventKind::Finished, now).outcome(status),
        }
    }
}

/// A row as a store keeps it: indexed columns and JSON blobs.
#[derive(Clone, Debug)]
pub(crate) struct RawRow {
    pub(crate) run_id: String,
    pub(crate) request_id: String,
    pub(crate) kind: String,
    pub(crate) prompt: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: Option<i64>,
    pub(crate) state: String,
    pub(crate) lease_owner: Option<String>,
    pub(crate) lease_until: Option<i64>,
    pub(crate) version: i64,
    pub(crate) claims: i64,
    /// The run's [`RunEvent`]s as a JSON array.
    pub(crate) history: String,
    /// The group that may answer the current request now (its escalation moves it).
    pub(crate) approvers: Option<String>,
    /// The escalation steps still ahead, as a JSON array (`None`: the deadline declines).
    pub(crate) escalate: Option<String>,
    pub(crate) record: String,
    pub(crate) answer: Option<String>,
    pub(crate) checkpoint: Option<String>,
    pub(crate) result: Option<String>,
    /// The votes on the current request (a JSON array, sealed like the answer), when it
    /// needs several approvals and has some.
    pub(crate) votes: Option<String>,
    /// Why a column of the row could not be read as the schema says ([`RawRow::from_cells`]):
    /// the row is then known by its run id only, and every read of it is
    /// [`StoreError::Corrupt`].
    pub(crate) damage: Option<String>,
}

impl RawRow {
    /// This row as an operator sees it when it cannot be read (`error`).
    pub(crate) fn damaged_run(&self, error: &StoreError) -> DamagedRun {
        DamagedRun {
            run_id: self.run_id.clone(),
            state: self.state.clone(),
            reason: error.to_string(),
            at: None,
        }
    }

    /// This row as [`RunStore::list_damaged`](super::RunStore::list_damaged) reports it: a row
    /// that cannot be read, or one a worker marked damaged (with the error it met); `None`
    /// for any other row.
    pub(crate) fn as_damaged(&self) -> Option<DamagedRun> {
        if let Err(e) = self.info() {
            return Some(self.damaged_run(&e));
        }
        if self.state != RunState::Damaged.as_str() {
            return None;
        }
        let events = self.events();
        let event = events
            .iter()
            .rev()
            .find(|e| e.event == RunEventKind::Damaged);
        Some(DamagedRun {
            run_id: self.run_id.clone(),
            state: self.state.clone(),
            reason: event
                .and_then(|e| e.error.clone())
                .unwrap_or_else(|| "marked damaged; its history does not say why".to_owned()),
            at: event.map(|e| e.at),
        })
    }

    /// [`StoreError::Corrupt`] when a column of the row could not be read.
    pub(crate) fn readable(&self) -> StoreResult<()> {
        match &self.damage {
            Some(why) => Err(self.corrupt(why.clone())),
            None => Ok(()),
        }
    }

    pub(crate) fn info(&self) -> StoreResult<RunInfo> {
        self.readable()?;
        let state = RunState::parse(&self.state)
            .ok_or_else(|| self.corrupt(format!("unknown state `{}`", self.state)))?;
        let lease = match (&self.lease_owner, self.lease_until) {
            (Some(owner), Some(until)) if state == RunState::Claimed => Some(Lease {
                owner: owner.clone(),
                until: from_millis(until),
            }),
            _ => None,
        };
        let history = self.events();
        Ok(RunInfo {
            run_id: self.run_id.clone(),
            request_id: self.request_id.clone(),
            kind: self.kind.clone(),
            prompt: self.prompt.clone(),
            created_at: from_millis(self.created_at),
            expires_at: self.expires_at.map(from_millis),
            state,
            lease,
            version: u64::try_from(self.version).unwrap_or(0),
            attempts: attempts_at_answer(&history, &self.request_id),
            approvers: self.approvers.clone(),
            history,
        })
    }

    /// The history, read leniently: it describes the run and never stops it, so a history
    /// that cannot be read is logged and shown empty.
    fn events(&self) -> Vec<RunEvent> {
        serde_json::from_str(&self.history).unwrap_or_else(|e| {
            tracing::warn!(run_id = %self.run_id, error = %e, "run store: unreadable run history");
            Vec::new()
        })
    }

    /// Appends events (a fragment from [`events_json`]) to the history.
    pub(crate) fn append(&mut self, fragment: &str) {
        if self.history.len() < 2 {
            "[]".clone_into(&mut self.history);
        }
        self.history.pop();
        if self.history != "[" {
            self.history.push(',');
        }
        self.history.push_str(fragment);
        self.history.push(']');
    }

    /// What the passed deadline of this row reads of it.
    pub(crate) fn due(&self) -> super::lifecycle::Due<'_> {
        super::lifecycle::Due {
            run_id: &self.run_id,
            request_id: &self.request_id,
            version: self.version,
            approvers: self.approvers.as_deref(),
            escalate: self.escalate.as_deref(),
        }
    }

    pub(crate) fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            run_id: self.run_id.clone(),
            message,
        }
    }

    pub(crate) fn record(&self, seal: &Seal) -> StoreResult<PendingRun> {
        self.checked_record(seal).map(|(record, _)| record)
    }

    /// [`record`](Self::record), with what its check found: the index of the halted turn's
    /// assistant message.
    pub(crate) fn checked_record(&self, seal: &Seal) -> StoreResult<(PendingRun, usize)> {
        self.readable()?;
        seal.open_record(&self.run_id, &self.request_id, &self.record)
    }

    pub(crate) fn answer(&self, seal: &Seal) -> StoreResult<Option<Answer>> {
        self.answer
            .as_deref()
            .map(|a| seal.open_answer(&self.run_id, &self.request_id, a))
            .transpose()
    }

    pub(crate) fn checkpoint(&self, seal: &Seal) -> StoreResult<Option<Value>> {
        self.checkpoint
            .as_deref()
            .map(|c| seal.open_checkpoint(&self.run_id, c))
            .transpose()
    }

    pub(crate) fn decode(&self, seal: &Seal) -> StoreResult<StoredRun> {
        let result = self
            .result
            .as_deref()
            .map(|r| serde_json::from_str(r).map_err(|e| self.corrupt(format!("result: {e}"))))
            .transpose()?;
        Ok(StoredRun {
            info: self.info()?,
            record: self.record(seal)?,
            answer: self.answer(seal)?,
            checkpoint: self.checkpoint(seal)?,
            result,
            votes: self.votes(seal)?,
        })
    }

    /// The votes on the current request, opened under `seal`.
    pub(crate) fn votes(&self, seal: &Seal) -> StoreResult<Vec<super::Vote>> {
        match self.votes.as_deref() {
            None => Ok(Vec::new()),
            Some(text) => super::votes::parse_votes(
                &self.run_id,
                seal.open_votes(&self.run_id, &self.request_id, text)?,
            ),
        }
    }

    /// When the row's current request was answered or expired, and how many resumes of it
    /// failed and crashed their worker since (see [`attempts_since_answer`]). `logged`: the
    /// history already ends with the event of the claim being made, which is left out.
    pub(crate) fn answered_at(&self, logged: bool) -> (Option<SystemTime>, u32, u32) {
        // cheap enough: a claim reads the history once
        let mut events = self.events();
        if logged {
            events.pop();
        }
        let at = events
            .iter()
            .rev()
            .find(|e| {
                matches!(e.event, RunEventKind::Answered | RunEventKind::Expired)
                    && e.request.as_deref() == Some(self.request_id.as_str())
            })
            .map(|e| e.at);
        let (failures, crashes) = attempts_since_answer(&events, &self.request_id);
        (at, failures, crashes)
    }

    /// The claim this row becomes once claimed by `owner` until `until`, with when the current
    /// request was answered and the failed and crashed resumes since (`since`: known to the
    /// caller, or read from the history with [`answered_at`](Self::answered_at)).
    pub(crate) fn claim(
        &self,
        seal: &Seal,
        owner: &str,
        until: i64,
        answer: Answer,
        taken_over: bool,
        (answered_at, failures, crashes): (Option<SystemTime>, u32, u32),
    ) -> StoreResult<Claim> {
        let (record, assistant_at) = self.checked_record(seal)?;
        Ok(Claim {
            checked: Some(super::types::Checked::of(&record, assistant_at)),
            run_id: self.run_id.clone(),
            record,
            answer,
            other_answers: Vec::new(),
            checkpoint: self.checkpoint(seal)?,
            lease: Lease {
                owner: owner.to_owned(),
                until: from_millis(until),
            },
            taken_over,
            token: u64::try_from(self.claims + 1).unwrap_or(0),
            answered_at,
            failures,
            crashes,
            gives_up: false,
            deadline: self.expires_at.map(from_millis),
            turn: Vec::new(),
        })
    }
}

/// Refuses an answer a store must not keep: `data` nested deeper than
/// [`MAX_DEPTH`](crate::limits::MAX_DEPTH) or serializing to more than
/// [`MAX_ANSWER_DATA_BYTES`](crate::limits::MAX_ANSWER_DATA_BYTES). Checked before anything
/// copies or writes the answer.
pub(crate) fn check_answer(answer: &Answer) -> StoreResult<()> {
    use crate::limits::{MAX_ANSWER_DATA_BYTES, MAX_DEPTH, too_deep};
    /// Counts bytes, and stops the serializer once past the cap.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > MAX_ANSWER_DATA_BYTES {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let Some(data) = &answer.data else {
        return Ok(());
    };
    if too_deep(data) {
        return Err(StoreError::Invalid(format!(
            "the answer to `{}` is refused: its data nests deeper than {MAX_DEPTH} levels",
            crate::limits::excerpt(&answer.id)
        )));
    }
    let mut count = Count(0);
    if serde_json::to_writer(&mut count, data).is_err() {
        return Err(StoreError::Invalid(format!(
            "the answer to `{}` is refused: its data is larger than {MAX_ANSWER_DATA_BYTES} bytes as JSON (`toolnexus::limits::MAX_ANSWER_DATA_BYTES`)",
            crate::limits::excerpt(&answer.id)
        )));
    }
    Ok(())
}

/// Refuses what [`RunStore::submit`](super::RunStore::submit) must not keep: an answer
/// [`check_answer`] refuses, or an `answered_by` longer than
/// [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES) (it would be kept whole in the run's
/// history). Checked before anything is read or written.
pub(crate) fn check_submit(answer: &Answer, answered_by: &str) -> StoreResult<()> {
    check_answer(answer)?;
    crate::limits::check_name("`answered_by`", answered_by).map_err(|why| {
        StoreError::Invalid(format!(
            "the answer to `{}` is refused: {why}",
            crate::limits::excerpt(&answer.id)
        ))
    })
}

pub(crate) fn token_i64(claim: &Claim) -> i64 {
    i64::try_from(claim.token).unwrap_or(i64::MAX)
}

/// Events as a fragment of a JSON array (`{..},{..}`), to append to a history.
pub(crate) fn events_json(events: &[RunEvent]) -> String {
    events
        .iter()
        .map(RunEvent::json)
        .collect::<Vec<_>>()
        .join(",")
}

/// A new run's history: its first request.
pub(crate) fn first_history(event: &RunEvent) -> String {
    format!("[{}]", event.json())
}
