//! The run's lifecycle, written once: one pure function per transition (park, answer (claim
//! or submit), expire, take over (and claim next), renew, checkpoint, finish, fail, release,
//! and marking a row damaged). Each takes what it needs of the row as read, the input, the
//! time and the store's seal, and returns a refusal ([`StoreError`]) or a [`Change`]: the
//! [`Guard`] the row must still meet, the fields it [sets](Set), the events it appends and
//! the [`Claim`] it hands out. Attempt counting, history events, refusals and sealing live
//! here; a store only applies a change (the memory store with [`Change::apply`], the SQL
//! stores in one statement whose `WHERE` is the guard).
//!
//! Nothing here reads a clock or a database: the tests beside it check each transition and
//! each refusal without one.

use super::{
    Claim, Columns, RawRow, RunEvent, RunEventKind, RunInfo, RunState, Seal, StoreError,
    StoreResult, events_json, first_history, from_millis,
};
use crate::request::{Answer, DeclineReason};
use crate::run::PendingRun;

mod claim;
mod escalate;
pub(crate) mod rules;
#[cfg(test)]
mod tests;
pub(crate) mod together;
pub(crate) mod votes;

pub(crate) use claim::{checkpoint, fail, finish, release, renew};
pub(crate) use escalate::{Due, Escalate, at_deadline};

/// A row a transaction inserts beside a park (issue 37's notification outbox goes here: a
/// driver inserts each in the park's own transaction). None yet: a driver matches on it, so
/// a new kind of side row cannot be left out by any driver.
#[derive(Debug)]
pub(crate) enum SideRow {}

/// A run to insert: a park.
#[derive(Debug)]
pub(crate) struct Insert {
    /// The new row (version 1, parked, its first request in its history).
    pub(crate) row: RawRow,
    /// The rows inserted in the same transaction (none yet; see [`SideRow`]).
    pub(crate) side: Vec<SideRow>,
}

impl Insert {
    /// The parked run's columns, made without reading its history back.
    pub(crate) fn info(&self) -> RunInfo {
        let row = &self.row;
        RunInfo {
            run_id: row.run_id.clone(),
            request_id: row.request_id.clone(),
            kind: row.kind.clone(),
            prompt: row.prompt.clone(),
            created_at: from_millis(row.created_at),
            expires_at: row.expires_at.map(from_millis),
            state: RunState::Parked,
            lease: None,
            version: 1,
            attempts: 0,
            approvers: row.approvers.clone(),
            history: vec![
                RunEvent::new(RunEventKind::Requested, row.created_at).request(&row.request_id),
            ],
        }
    }
}

/// What a change needs the row to still be when it is applied: checked in the same step as
/// the change (a SQL store's `WHERE`), so of concurrent changes to one run exactly one applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Guard {
    /// Parked, and its request not past `expiresAt` at `now` (an answer).
    Answerable { now: i64 },
    /// Parked, whatever its deadline (an expiry).
    Parked,
    /// Claimed under the claim with this token (the row's `claims`).
    Claimed { token: i64 },
    /// Unchanged since it was read: still at these `claims` (a takeover, a claim of an
    /// answered run).
    Claims(i64),
    /// Unchanged since it was read: still at this `version` (marking it damaged).
    Version(i64),
    /// [`Answerable`](Guard::Answerable) and unchanged since it was read: still at this
    /// `version` (a vote, counted against the votes as read).
    Votable { version: i64, now: i64 },
}

impl Guard {
    /// Whether `row` (as stored now) meets the guard.
    pub(crate) fn holds(&self, row: &RawRow) -> bool {
        let parked = row.state == RunState::Parked.as_str();
        match *self {
            Self::Answerable { now } => parked && row.expires_at.is_none_or(|at| at > now),
            Self::Parked => parked,
            Self::Claimed { token } => {
                row.state == RunState::Claimed.as_str() && row.claims == token
            }
            Self::Claims(claims) => row.claims == claims,
            Self::Version(version) => row.version == version,
            Self::Votable { version, now } => {
                row.version == version && Self::Answerable { now }.holds(row)
            }
        }
    }
}

/// The lease a change leaves on the row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum LeaseSet {
    /// As it was.
    #[default]
    Keep,
    /// None (owner and end cleared).
    Clear,
    /// Held by `owner` until `until` (ms).
    Hold { owner: String, until: i64 },
    /// The same owner, until `until` (ms): a renewal, or a failed resume kept until its retry.
    Until(i64),
}

/// The fields a change sets; the others stay. Every change also counts one more `version`
/// and appends its events to the history.
#[derive(Debug, Default)]
pub(crate) struct Set {
    /// The new state.
    pub(crate) state: Option<RunState>,
    /// The lease.
    pub(crate) lease: LeaseSet,
    /// The answer, as the seal keeps it.
    pub(crate) answer: Option<String>,
    /// The checkpoint, as the seal keeps it.
    pub(crate) checkpoint: Option<String>,
    /// One more claim (`claims + 1`: the new claim's token).
    pub(crate) claimed: bool,
    /// The run parks again on a new request (its columns and record): its answer and
    /// checkpoint are cleared and its `created_at` becomes the change's time.
    pub(crate) request: Option<Columns>,
    /// The run's result, as JSON.
    pub(crate) result: Option<String>,
    /// The votes on the current request, as the seal keeps them ([`votes`]).
    pub(crate) votes: Option<String>,
    /// The next step of the request's escalation: its group, deadline and the steps left.
    pub(crate) escalate: Option<Escalate>,
}

/// A transition's decision: what the row must still be, what it becomes, what its history
/// gains and the claim it hands out.
#[derive(Debug)]
pub(crate) struct Change {
    /// The run it changes: by run id, or (an answer) by the request it waits on.
    pub(crate) key: Key,
    /// When (ms).
    pub(crate) at: i64,
    /// What the row must still be.
    pub(crate) guard: Guard,
    /// The fields it sets.
    pub(crate) set: Set,
    /// The events it appends, as a fragment of a JSON array ([`events_json`]).
    pub(crate) events: String,
    /// The claim it hands out (a claim, a takeover), once applied.
    pub(crate) claim: Option<Claim>,
}

/// Which row a change is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// The run with this id.
    Run(String),
    /// The run waiting on this request (an answer).
    Request(String),
}

impl Change {
    fn new(key: Key, at: i64, guard: Guard, events: &[RunEvent]) -> Self {
        Self {
            key,
            at,
            guard,
            set: Set::default(),
            events: events_json(events),
            claim: None,
        }
    }

    /// Applies the change to `row` when its guard holds (the memory store's statement);
    /// `false`, and the row untouched, when it does not.
    pub(crate) fn apply(&self, row: &mut RawRow) -> bool {
        if !self.guard.holds(row) {
            return false;
        }
        let set = &self.set;
        if let Some(state) = set.state {
            state.as_str().clone_into(&mut row.state);
        }
        match &set.lease {
            LeaseSet::Keep => {}
            LeaseSet::Clear => {
                row.lease_owner = None;
                row.lease_until = None;
            }
            LeaseSet::Hold { owner, until } => {
                row.lease_owner = Some(owner.clone());
                row.lease_until = Some(*until);
            }
            LeaseSet::Until(until) => row.lease_until = Some(*until),
        }
        if let Some(answer) = &set.answer {
            row.answer = Some(answer.clone());
        }
        if let Some(checkpoint) = &set.checkpoint {
            row.checkpoint = Some(checkpoint.clone());
        }
        if set.claimed {
            row.claims += 1;
        }
        if let Some(cols) = &set.request {
            row.request_id.clone_from(&cols.request_id);
            row.kind.clone_from(&cols.kind);
            row.prompt.clone_from(&cols.prompt);
            row.expires_at = cols.expires_at;
            row.record.clone_from(&cols.record);
            row.approvers.clone_from(&cols.approvers);
            row.escalate.clone_from(&cols.escalate);
            row.created_at = self.at;
            row.answer = None;
            row.checkpoint = None;
            row.votes = None;
        }
        if let Some(result) = &set.result {
            row.result = Some(result.clone());
        }
        if let Some(votes) = &set.votes {
            row.votes = Some(votes.clone());
        }
        if let Some(step) = &set.escalate {
            row.approvers = Some(step.approvers.clone());
            row.expires_at = Some(step.expires_at);
            row.escalate.clone_from(&step.rest);
        }
        row.version += 1;
        if !self.events.is_empty() {
            row.append(&self.events);
        }
        true
    }
}

/// Parks `record` at `now`: a new row, version 1, its first request in its history.
pub(crate) fn park(record: &PendingRun, seal: &Seal, now: i64) -> Insert {
    let cols = Columns::of(record.run_id().to_owned(), record, seal);
    let history = first_history(&cols.requested(now));
    Insert {
        row: RawRow {
            run_id: cols.run_id,
            request_id: cols.request_id,
            kind: cols.kind,
            prompt: cols.prompt,
            created_at: now,
            expires_at: cols.expires_at,
            state: RunState::Parked.as_str().to_owned(),
            lease_owner: None,
            lease_until: None,
            version: 1,
            claims: 0,
            history,
            approvers: cols.approvers,
            escalate: cols.escalate,
            record: cols.record,
            answer: None,
            checkpoint: None,
            result: None,
            votes: None,
            damage: None,
        },
        side: Vec::new(),
    }
}

/// The refusal of a park whose run is stored already (`run_exists`), or whose request id
/// names another run.
pub(crate) fn park_conflict(run_id: &str, request_id: &str, run_exists: bool) -> StoreError {
    if run_exists {
        StoreError::Conflict(format!(
            "run `{run_id}` is already stored: a parked run is parked once"
        ))
    } else {
        StoreError::Conflict(format!(
            "request `{request_id}` is already the request of another run: request ids name one run"
        ))
    }
}

/// What an answer does to a parked run.
#[derive(Clone, Debug)]
pub(crate) enum Answering {
    /// Claims it for a worker, `owner`, until `until` (ms).
    Claim { owner: String, until: i64 },
    /// Records it for a worker to claim later, answered by `by`.
    Submit { by: String },
}

/// An answer to the run waiting on `answer.id`, at `now`: the claim (the run claimed by the
/// answerer's worker) or the submit (recorded as answered). The guard is
/// [`Answerable`](Guard::Answerable); when it fails, [`refuse_answer`] says why.
pub(crate) fn answer(answer: &Answer, how: &Answering, seal: &Seal, now: i64) -> Change {
    let answered = RunEvent::new(RunEventKind::Answered, now).request(&answer.id);
    let mut change = match how {
        Answering::Claim { owner, until } => {
            let mut change = Change::new(
                Key::Request(answer.id.clone()),
                now,
                Guard::Answerable { now },
                &[
                    answered.by(owner),
                    RunEvent::new(RunEventKind::Claimed, now).by(owner),
                ],
            );
            change.set.state = Some(RunState::Claimed);
            change.set.lease = LeaseSet::Hold {
                owner: owner.clone(),
                until: *until,
            };
            change.set.claimed = true;
            change
        }
        Answering::Submit { by } => {
            let mut change = Change::new(
                Key::Request(answer.id.clone()),
                now,
                Guard::Answerable { now },
                &[answered.by(by)],
            );
            change.set.state = Some(RunState::Answered);
            change
        }
    };
    change.set.answer = Some(seal.answer(answer));
    change
}

/// The claim an answer hands out of `row`, the row as the answer's change left it (its
/// history ends with the claim's events, its `claims` count it), claimed by `owner` until
/// `until` at `now`; [`StoreError::Corrupt`] when its record cannot be read (the change is
/// then not kept).
pub(crate) fn answer_claim(
    row: &RawRow,
    answer: &Answer,
    seal: &Seal,
    owner: &str,
    until: i64,
    now: i64,
) -> StoreResult<Claim> {
    // answered now, this claim the first resume since: nothing in the history to read
    let mut claim = row.claim(
        seal,
        owner,
        until,
        answer.clone(),
        false,
        (Some(from_millis(now)), 0, 0),
    )?;
    claim.token = u64::try_from(row.claims).unwrap_or(0);
    Ok(claim)
}

/// What an answer's change hands out of `row`, the row as the change left it, at `now`: the
/// claim of a claiming answer ([`answer_claim`]); nothing of a submit, whose record is read
/// all the same. [`StoreError::Corrupt`] when the record cannot be read: the change is then
/// not kept (the run stays parked).
pub(crate) fn answered(
    row: &RawRow,
    answer: &Answer,
    how: &Answering,
    seal: &Seal,
    now: i64,
) -> StoreResult<Option<Claim>> {
    match how {
        Answering::Claim { owner, until } => {
            answer_claim(row, answer, seal, owner, *until, now).map(Some)
        }
        Answering::Submit { .. } => row.record(seal).map(|_| None),
    }
}

/// Why an answer to `request_id` was refused, from the row that waits (or last waited) on it,
/// and the expiry to apply with the refusal when the run was parked but past `expiresAt` at
/// `now` with no escalation step left (a step left is the sweep's to take, [`at_deadline`]).
/// `current`: the row whose current request it is; `past`: a row that waited on it before its
/// current request; neither: [`StoreError::NotFound`].
pub(crate) fn refuse_answer(
    current: Option<&RawRow>,
    past: Option<&RawRow>,
    request_id: &str,
    seal: &Seal,
    now: i64,
) -> (StoreError, Option<Change>) {
    let Some(row) = current else {
        return (
            match past {
                Some(run) => past_refusal(run, request_id),
                None => StoreError::NotFound {
                    key: request_id.to_owned(),
                },
            },
            None,
        );
    };
    let state = match row.info() {
        Ok(info) => info.state,
        Err(corrupt) => return (corrupt, None),
    };
    if state != RunState::Parked {
        return (refusal(&row.run_id, request_id, state), None);
    }
    // parked but past `expiresAt`: the answer becomes declined/expired, unless the request
    // escalates: then the sweep hands it on (with the step's notifications), not this refusal
    let escalates = at_deadline(&row.due(), seal, now).set.escalate.is_some();
    (
        StoreError::Expired {
            run_id: row.run_id.clone(),
        },
        (!escalates).then(|| expire(row, seal, now)),
    )
}

/// Why an answer to the request a run waits on (or last waited on) failed, from the run's
/// current state.
pub(crate) fn refusal(run_id: &str, request_id: &str, state: RunState) -> StoreError {
    match state {
        RunState::Expired => StoreError::Expired {
            run_id: run_id.to_owned(),
        },
        other => StoreError::AlreadyAnswered {
            run_id: run_id.to_owned(),
            request_id: request_id.to_owned(),
            state: other,
        },
    }
}

/// Why an answer to an earlier request of `run` failed (a request the run no longer waits
/// on: it was answered, or it expired, and the run went on): `Expired` when the run's history
/// says it expired, else `AlreadyAnswered`.
pub(crate) fn past_refusal(run: &RawRow, request_id: &str) -> StoreError {
    let info: RunInfo = match run.info() {
        Ok(info) => info,
        Err(corrupt) => return corrupt,
    };
    let expired = info
        .history
        .iter()
        .any(|e| e.event == RunEventKind::Expired && e.request.as_deref() == Some(request_id));
    if expired {
        StoreError::Expired {
            run_id: info.run_id,
        }
    } else {
        StoreError::AlreadyAnswered {
            run_id: info.run_id,
            request_id: request_id.to_owned(),
            state: info.state,
        }
    }
}

/// The answer an expired run is resumed with, as `seal` keeps it.
pub(crate) fn expired_answer(seal: &Seal, request_id: &str) -> String {
    seal.answer(&Answer::decline(request_id, DeclineReason::Expired))
}

/// Expires the parked `row` at `now`: its answer becomes `declined/expired`, for a worker
/// that takes it over.
pub(crate) fn expire(row: &RawRow, seal: &Seal, now: i64) -> Change {
    expire_request(&row.run_id, &row.request_id, seal, now)
}

/// [`expire`] of the run `run_id` waiting on `request_id` (what a SQL store reads of it).
pub(crate) fn expire_request(run_id: &str, request_id: &str, seal: &Seal, now: i64) -> Change {
    let mut change = Change::new(
        Key::Run(run_id.to_owned()),
        now,
        Guard::Parked,
        &[RunEvent::new(RunEventKind::Expired, now).request(request_id)],
    );
    change.set.state = Some(RunState::Expired);
    change.set.answer = Some(expired_answer(seal, request_id));
    change
}

/// A worker's claim of `row` (as read: expired, answered, or claimed with a lapsed lease) for
/// `owner` until `until` at `now`: a takeover of an expired or lapsed run (its attempt counted
/// in its history), a plain claim of an answered one. A row whose record, answer or
/// checkpoint cannot be read is marked [damaged](RunState::Damaged) instead (the `Err`), so it
/// leaves the claimable set and no worker is offered it again.
pub(crate) fn take_over(
    row: &RawRow,
    seal: &Seal,
    owner: &str,
    until: i64,
    now: i64,
) -> Result<Change, Change> {
    let mut claim = match takeover_claim(row, seal, owner, until, false) {
        Ok(claim) => claim,
        Err(e) => return Err(damage(row, &e, owner, now)),
    };
    let event = if row.state == RunState::Claimed.as_str() {
        RunEvent::new(RunEventKind::TakenOver, now)
            .by(owner)
            .attempt(claim.attempt())
    } else {
        if row.state == RunState::Answered.as_str() {
            claim.taken_over = false;
        }
        RunEvent::new(RunEventKind::Claimed, now).by(owner)
    };
    let mut change = Change::new(
        Key::Run(row.run_id.clone()),
        now,
        Guard::Claims(row.claims),
        &[event],
    );
    change.set.state = Some(RunState::Claimed);
    change.set.lease = LeaseSet::Hold {
        owner: owner.to_owned(),
        until,
    };
    change.set.claimed = true;
    change.claim = Some(claim);
    Ok(change)
}

/// The claim a takeover (or a worker's claim of an answered run) makes of `row`; an error
/// when its row cannot be read. `logged`: the row's history already ends with this claim's
/// own event.
pub(crate) fn takeover_claim(
    row: &RawRow,
    seal: &Seal,
    owner: &str,
    until: i64,
    logged: bool,
) -> StoreResult<Claim> {
    row.readable()?;
    let answer = row.answer(seal)?.ok_or_else(|| StoreError::Corrupt {
        run_id: row.run_id.clone(),
        message: "a claimed, answered or expired run has no answer".to_owned(),
    })?;
    row.claim(seal, owner, until, answer, true, row.answered_at(logged))
}

/// Marks `row`, found unreadable (`error`) by `owner` at `now`, damaged (logged), unless it
/// changed since it was read.
pub(crate) fn damage(row: &RawRow, error: &StoreError, owner: &str, now: i64) -> Change {
    tracing::warn!(run_id = %row.run_id, error = %error, "run store: a run that cannot be read is marked damaged");
    let mut change = Change::new(
        Key::Run(row.run_id.clone()),
        now,
        Guard::Version(row.version),
        &[RunEvent::new(RunEventKind::Damaged, now)
            .by(owner)
            .error(&error.to_string())],
    );
    change.set.state = Some(RunState::Damaged);
    change.set.lease = LeaseSet::Clear;
    change
}
