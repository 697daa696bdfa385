//! Answers: a claim's and a submit's checks and changes, the answered runs workers claim, and
//! the next deadline.

use std::sync::MutexGuard;
use std::time::SystemTime;

use super::{MemoryStore, Rows};
use crate::request::Answer;
use crate::store::{
    Claim, RawRow, RunEvent, RunEventKind, RunInfo, RunState, StoreError, StoreResult, events_json,
    expired_answer, from_millis, lease_ms, now_ms, past_refusal, refusal,
};

impl MemoryStore {
    /// The parked row an answer is for, after `claim`'s checks; a request past its
    /// `expiresAt` is marked expired on the way (and refused).
    pub(super) fn answerable(
        &self,
        rows: &mut MutexGuard<'_, Rows>,
        answer: &Answer,
        now: i64,
    ) -> StoreResult<RawRow> {
        let not_found = || StoreError::NotFound {
            key: answer.id.clone(),
        };
        let Some(run_id) = rows.by_request.get(&answer.id).cloned() else {
            // an earlier request of a run that went on, or none at all
            let past = rows.past_requests.get(&answer.id);
            return Err(match past.and_then(|run| rows.by_id.get(run)) {
                Some(run) => past_refusal(run, &answer.id),
                None => not_found(),
            });
        };
        let row = rows.by_id.get(&run_id).cloned().ok_or_else(not_found)?;
        let state = row.info()?.state;
        if state != RunState::Parked {
            return Err(refusal(&run_id, &answer.id, state));
        }
        if row.expires_at.is_some_and(|at| at <= now) {
            let mut expired = row;
            mark_expired(&mut expired, &self.seal, now);
            rows.insert(expired);
            self.changed();
            self.work();
            return Err(StoreError::Expired { run_id });
        }
        Ok(row)
    }

    pub(super) fn claim_now(&self, answer: &Answer, owner: &str) -> StoreResult<Claim> {
        let now = now_ms();
        let mut rows = self.rows();
        let row = self.answerable(&mut rows, answer, now)?;
        let until = now.saturating_add(lease_ms(self.lease()));
        let answered = RunEvent::new(RunEventKind::Answered, now)
            .request(&answer.id)
            .by(owner);
        let mut claimed = row;
        claimed.append(&events_json(&[
            answered,
            RunEvent::new(RunEventKind::Claimed, now).by(owner),
        ]));
        // decoded before the row changes: a corrupt record leaves the run parked
        let mut claim = claimed.claim(&self.seal, owner, until, answer.clone(), false, true)?;
        claim.answered_at = Some(from_millis(now));
        RunState::Claimed.as_str().clone_into(&mut claimed.state);
        claimed.lease_owner = Some(owner.to_owned());
        claimed.lease_until = Some(until);
        claimed.answer = Some(self.seal.answer(answer));
        claimed.claims += 1;
        claimed.version += 1;
        rows.insert(claimed);
        drop(rows);
        self.changed();
        Ok(claim)
    }

    pub(super) fn submit_now(&self, answer: &Answer, by: &str) -> StoreResult<RunInfo> {
        let now = now_ms();
        let mut rows = self.rows();
        let mut row = self.answerable(&mut rows, answer, now)?;
        // read before the row changes: a corrupt record leaves the run parked
        row.record(&self.seal)?;
        RunState::Answered.as_str().clone_into(&mut row.state);
        row.answer = Some(self.seal.answer(answer));
        row.append(
            &RunEvent::new(RunEventKind::Answered, now)
                .request(&answer.id)
                .by(by)
                .json(),
        );
        row.version += 1;
        let info = row.info()?;
        rows.insert(row);
        drop(rows);
        self.changed();
        self.work();
        Ok(info)
    }

    /// Claims an answered run for `owner`, oldest first.
    pub(super) fn claim_answered(&self, owner: &str) -> Option<Claim> {
        let now = now_ms();
        let mut rows = self.rows();
        let until = now.saturating_add(lease_ms(self.lease()));
        let (found, damaged) =
            self.first_readable(&mut rows, Rows::oldest_answered, owner, until, now);
        let Some((row, claim)) = found else {
            drop(rows);
            if damaged {
                self.changed();
            }
            return None;
        };
        let mut claimed = row;
        RunState::Claimed.as_str().clone_into(&mut claimed.state);
        claimed.lease_owner = Some(owner.to_owned());
        claimed.lease_until = Some(until);
        claimed.claims += 1;
        claimed.version += 1;
        claimed.append(&RunEvent::new(RunEventKind::Claimed, now).by(owner).json());
        rows.insert(claimed);
        drop(rows);
        self.changed();
        Some(Claim {
            taken_over: false,
            ..claim
        })
    }

    pub(super) fn next_due_now(&self) -> Option<SystemTime> {
        self.rows().next_due().map(from_millis)
    }
}

/// Marks a parked row expired at `now`: its answer becomes `declined/expired`.
pub(super) fn mark_expired(row: &mut RawRow, seal: &crate::store::Seal, now: i64) {
    RunState::Expired.as_str().clone_into(&mut row.state);
    row.answer = Some(expired_answer(seal, &row.request_id));
    row.append(
        &RunEvent::new(RunEventKind::Expired, now)
            .request(&row.request_id)
            .json(),
    );
    row.version += 1;
}
