//! The outbox's decisions, written once and pure (no store, no clock): which notification is
//! due to a claim, what a claim does to it (one attempt more, leased), what recording an
//! attempt requires of the row (the guard) and sets, when a pending notification is due next,
//! and in which order a run's notifications list. The memory store applies them to its table
//! as they are; the SQL stores run the same rules as statements (`sql.rs`).

use std::cmp::Ordering;
use std::time::Duration;

use super::{Attempt, Notification, NotificationState};
use crate::store::{StoreError, events_json, lease_ms, millis};

/// A claim of the due notifications: `owner` takes up to `limit` of those for `notifiers`
/// that are due `now` (ms), leased until `until` (ms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Claiming<'c> {
    pub(crate) owner: &'c str,
    pub(crate) notifiers: &'c [String],
    pub(crate) limit: usize,
    pub(crate) now: i64,
    pub(crate) until: i64,
}

impl<'c> Claiming<'c> {
    /// A claim by `owner` at `now` (ms) for `lease`.
    pub(crate) fn new(
        owner: &'c str,
        notifiers: &'c [String],
        limit: usize,
        lease: Duration,
        now: i64,
    ) -> Self {
        let until = now.saturating_add(lease_ms(lease));
        Self {
            owner,
            notifiers,
            limit,
            now,
            until,
        }
    }

    /// Whether the claim can take nothing at all (no notifier named, or a limit of 0): the
    /// store is not asked.
    pub(crate) fn takes_none(&self) -> bool {
        self.notifiers.is_empty() || self.limit == 0
    }

    /// Whether `n`, leased until `lease` (ms) if at all, is due to this claim: pending, for
    /// one of its notifiers, its `next_at` passed, and not leased or its lease run out.
    pub(crate) fn takes(&self, n: &Notification, lease: Option<i64>) -> bool {
        n.state == NotificationState::Pending
            && self.notifiers.contains(&n.notifier)
            && millis(n.next_at) <= self.now
            && lease.is_none_or(|l| l < self.now)
    }

    /// `n` as this claim leaves it: one attempt more, leased to the owner until the claim's
    /// end (the new lease returned).
    pub(crate) fn take(&self, n: &mut Notification) -> i64 {
        n.attempts = n.attempts.saturating_add(1);
        n.lease_owner = Some(self.owner.to_owned());
        self.until
    }

    /// Claims in `rows` (a table of notifications with their leases) what this claim takes:
    /// the due ones, the oldest due first (then by id), at most `limit`; each row changed as
    /// [`take`](Self::take) says, and returned as it became.
    pub(crate) fn pick<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r mut (Notification, Option<i64>)>,
    ) -> Vec<Notification> {
        let mut due: Vec<&mut (Notification, Option<i64>)> = rows
            .into_iter()
            .filter(|(n, lease)| self.takes(n, *lease))
            .collect();
        due.sort_by(|(a, _), (b, _)| (a.next_at, &a.id).cmp(&(b.next_at, &b.id)));
        due.into_iter()
            .take(self.limit)
            .map(|(n, lease)| {
                *lease = Some(self.take(n));
                n.clone()
            })
            .collect()
    }
}

/// What recording one attempt writes, and what it requires of the row: the notification
/// as `owner` claimed it is still `owner`'s attempt, pending (the guard); then it becomes
/// as `attempt` ended (its state, due at its retry's time if any, its error), unleased, and
/// the run's history gains `event` (the attempt's `Notified` event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Recording<'r> {
    pub(crate) claimed: &'r Notification,
    pub(crate) owner: &'r str,
    pub(crate) attempt: &'r Attempt,
    pub(crate) event: String,
}

impl<'r> Recording<'r> {
    /// How the attempt at `claimed` (by `owner`) that ended as `attempt` is recorded at `now`
    /// (ms).
    pub(crate) fn of(
        claimed: &'r Notification,
        owner: &'r str,
        attempt: &'r Attempt,
        now: i64,
    ) -> Self {
        let event = events_json(&[attempt.event(claimed, now)]);
        Self {
            claimed,
            owner,
            attempt,
            event,
        }
    }

    /// When the notification is due next, in ms, when the attempt sets it (a retry).
    pub(crate) fn next_at(&self) -> Option<i64> {
        self.attempt.next_at().map(millis)
    }

    /// Whether `row`, as the store keeps it, is still the attempt this records.
    pub(crate) fn holds(&self, row: &Notification) -> bool {
        row.state == NotificationState::Pending
            && row.lease_owner.as_deref() == Some(self.owner)
            && row.attempts == self.claimed.attempts
    }

    /// `row` (leased until `lease`) as this recording leaves it, when it [holds](Self::holds);
    /// `false`, nothing changed, when not.
    pub(crate) fn apply(&self, row: &mut Notification, lease: &mut Option<i64>) -> bool {
        if !self.holds(row) {
            return false;
        }
        row.state = self.attempt.state();
        if let Some(at) = self.next_at() {
            row.next_at = crate::store::from_millis(at);
        }
        row.last_error = self.attempt.error().map(str::to_owned);
        row.lease_owner = None;
        *lease = None;
        true
    }

    /// The refusal when the row no longer holds this attempt (its lease ran out and another
    /// deliverer claimed it, or it was recorded already).
    pub(crate) fn lost(&self) -> StoreError {
        StoreError::LeaseLost {
            run_id: self.claimed.run_id.clone(),
        }
    }
}

/// When `n` (leased until `lease`) is due next, in ms: a pending one at its `next_at`, or at
/// its lease's end while that is later; `None` when it is not pending.
pub(crate) fn due_at(n: &Notification, lease: Option<i64>) -> Option<i64> {
    (n.state == NotificationState::Pending).then(|| {
        let next = millis(n.next_at);
        lease.map_or(next, |l| l.max(next))
    })
}

/// The order a run's notifications list in: oldest first, then by id.
pub(crate) fn listing_order(a: &Notification, b: &Notification) -> Ordering {
    (a.created_at, &a.id).cmp(&(b.created_at, &b.id))
}
