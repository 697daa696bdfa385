//! The memory store as a driver of the [lifecycle](crate::store::lifecycle): a change applied
//! to its row under the lock (the answers, the workers' claims, expiry, the claim's own
//! changes), and the next deadline.

use std::time::SystemTime;

use super::{MemoryStore, Rows};
use crate::request::Answer;
use crate::store::lifecycle::{self, Answering, Change, Key};
use crate::store::{Claim, RawRow, StoreError, StoreResult, from_millis, lease_ms, now_ms};

impl Rows {
    /// Applies `change` to its row and keeps the indexes in step: the row as it became, or
    /// `None` when there is no such row or the change's guard no longer holds.
    pub(super) fn apply(&mut self, change: &Change) -> Option<RawRow> {
        let run_id = match &change.key {
            Key::Run(id) => id,
            Key::Request(id) => self.by_request.get(id)?,
        };
        let mut row = self.by_id.get(run_id)?.clone();
        if !change.apply(&mut row) {
            return None;
        }
        self.insert(row.clone());
        Some(row)
    }
}

impl MemoryStore {
    /// An answer's effect on the run waiting on it (a claim, with the claim handed out; a
    /// submit), or why it is refused: a request past its `expiresAt` is marked expired on the
    /// way.
    pub(super) fn answer_now(
        &self,
        answer: &Answer,
        how: &Answering,
    ) -> StoreResult<(RawRow, Option<Claim>)> {
        let now = now_ms();
        let change = lifecycle::answer(answer, how, &self.seal, now);
        let mut rows = self.rows();
        let current = rows
            .by_request
            .get(&answer.id)
            .and_then(|id| rows.by_id.get(id));
        let Some(row) = current.filter(|row| change.guard.holds(row)) else {
            let past = rows
                .past_requests
                .get(&answer.id)
                .and_then(|id| rows.by_id.get(id));
            let (refused, expiry) =
                lifecycle::refuse_answer(current, past, &answer.id, &self.seal, now);
            if let Some(expiry) = expiry {
                rows.apply(&expiry);
                drop(rows);
                self.changed();
                self.work();
            }
            return Err(refused);
        };
        let mut after = row.clone();
        change.apply(&mut after);
        // read before the row is kept: a corrupt record leaves the run parked
        let claim = lifecycle::answered(&after, answer, how, &self.seal, now)?;
        rows.insert(after.clone());
        drop(rows);
        self.changed();
        if claim.is_none() {
            self.work();
        }
        Ok((after, claim))
    }

    /// Claims for `owner` the first row `oldest` names (the oldest candidate left in an index)
    /// that can be read; every unreadable row met first is marked
    /// [`damaged`](crate::store::RunState::Damaged), so it leaves the index and the next is
    /// tried.
    pub(super) fn claim_first(
        &self,
        oldest: impl Fn(&Rows, i64) -> Option<String>,
        owner: &str,
    ) -> Option<Claim> {
        let now = now_ms();
        let until = now.saturating_add(lease_ms(self.lease()));
        let mut rows = self.rows();
        let mut claim = None;
        let mut changed = false;
        while let Some(id) = oldest(&rows, now) {
            let Some(row) = rows.by_id.get(&id) else {
                // an index names only stored rows; never loop on one that would not
                break;
            };
            changed = true;
            match lifecycle::take_over(row, &self.seal, owner, until, now) {
                Ok(mut change) => {
                    claim = change.claim.take();
                    rows.apply(&change);
                    break;
                }
                Err(damaged) => {
                    rows.apply(&damaged);
                }
            }
        }
        drop(rows);
        if changed {
            self.changed();
        }
        claim
    }

    /// Applies a change of `claim` (guarded by the claim still holding its run) after
    /// `check` (on the rows as they are, the row as read) allows it; the row as it became.
    pub(super) fn apply_claim(
        &self,
        claim: &Claim,
        change: &Change,
        check: impl FnOnce(&Rows, &RawRow) -> StoreResult<()>,
    ) -> StoreResult<RawRow> {
        let lost = || StoreError::LeaseLost {
            run_id: claim.run_id.clone(),
        };
        let mut rows = self.rows();
        let row = rows.by_id.get(&claim.run_id).ok_or_else(lost)?;
        if !change.guard.holds(row) {
            return Err(lost());
        }
        check(&rows, row)?;
        let row = rows.apply(change).ok_or_else(lost)?;
        drop(rows);
        self.changed();
        Ok(row)
    }

    pub(super) fn next_due_now(&self) -> Option<SystemTime> {
        self.rows().next_due().map(from_millis)
    }
}
