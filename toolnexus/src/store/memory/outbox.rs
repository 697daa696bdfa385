//! The memory store's outbox: rows in a map beside the runs, written while the park holds the
//! runs' lock (its "transaction"); the runs' lock is always taken first.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::store::outbox::{
    Attempt, MemRows, Notification, NotificationState, Outbox, OutboxState,
};
use crate::store::{
    MemoryStore, StoreError, StoreResult, events_json, from_millis, millis, now_ms,
};
use crate::util::BoxFuture;

fn lock(state: &OutboxState) -> std::sync::MutexGuard<'_, MemRows> {
    // every change is one assignment: a poisoned map is still consistent
    state
        .rows
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl MemoryStore {
    /// Writes one notification per notifier this store was built with
    /// ([`with_notifiers`](Self::with_notifiers)) each time a run parks, in the park's
    /// transaction, for a [`Deliverer`](crate::notify::Deliverer) (or a
    /// [`Worker`](crate::worker::Worker) given notifiers) to deliver. Call it when building the
    /// store: the outbox belongs to this handle and the clones made after.
    ///
    /// ```
    /// use toolnexus::store::{MemoryStore, RunStore};
    ///
    /// let store = MemoryStore::new().with_notifiers(["webhook", "email"]).unwrap();
    /// assert_eq!(store.outbox().unwrap().notifier_names(), ["webhook", "email"]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] for a name that is not 1 to 64 ASCII letters, digits, `-` or
    /// `_`, or a name given twice.
    pub fn with_notifiers(
        mut self,
        names: impl IntoIterator<Item = impl Into<String>>,
    ) -> StoreResult<Self> {
        self.outbox = Arc::new(OutboxState::of(names)?);
        Ok(self)
    }

    /// The park's outbox rows; called with the runs' lock held.
    pub(crate) fn outbox_park(&self, run_id: &str, request_id: &str, now: i64) {
        if !self.outbox.names.is_empty() {
            lock(&self.outbox).insert(self.outbox.park_rows(run_id, request_id, now));
        }
    }
}

impl MemoryStore {
    /// The outbox rows of step `step` of an escalation; called with the runs' lock held.
    pub(crate) fn outbox_escalate(&self, run_id: &str, request_id: &str, step: u32, now: i64) {
        if !self.outbox.names.is_empty() {
            lock(&self.outbox).insert(self.outbox.escalation_rows(run_id, request_id, step, now));
        }
    }
}

impl Outbox for MemoryStore {
    fn notifier_names(&self) -> &[String] {
        &self.outbox.names
    }

    fn claim_notifications<'a>(
        &'a self,
        owner: &'a str,
        notifiers: &'a [String],
        limit: usize,
        lease: Duration,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>> {
        Box::pin(async move {
            let now = now_ms();
            let until = now + i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
            let mut rows = lock(&self.outbox);
            let mut due: Vec<&mut (Notification, Option<i64>)> = rows
                .rows
                .values_mut()
                .filter(|(n, lease)| {
                    n.state == NotificationState::Pending
                        && notifiers.contains(&n.notifier)
                        && millis(n.next_at) <= now
                        && lease.is_none_or(|l| l < now)
                })
                .collect();
            due.sort_by_key(|(n, _)| n.next_at);
            Ok(due
                .into_iter()
                .take(limit)
                .map(|(n, lease)| {
                    n.attempts += 1;
                    n.lease_owner = Some(owner.to_owned());
                    *lease = Some(until);
                    n.clone()
                })
                .collect())
        })
    }

    fn record_attempt<'a>(
        &'a self,
        n: &'a Notification,
        owner: &'a str,
        attempt: &'a Attempt,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let now = now_ms();
            let mut runs = self.rows();
            let mut rows = lock(&self.outbox);
            let lost = || StoreError::LeaseLost {
                run_id: n.run_id.clone(),
            };
            let (row, lease) = rows.rows.get_mut(&n.id).ok_or_else(lost)?;
            if row.lease_owner.as_deref() != Some(owner)
                || row.attempts != n.attempts
                || row.state != NotificationState::Pending
            {
                return Err(lost());
            }
            row.state = attempt.state();
            row.lease_owner = None;
            *lease = None;
            if let Some(at) = attempt.next_at() {
                row.next_at = at;
            }
            row.last_error = match attempt {
                Attempt::Delivered => None,
                Attempt::Retry { error, .. } | Attempt::GaveUp { error } => Some(error.clone()),
                Attempt::Skipped { why } => Some(why.clone()),
            };
            if let Some(run) = runs.by_id.get_mut(&n.run_id) {
                run.append(&events_json(&[attempt.event(n, now)]));
            }
            Ok(())
        })
    }

    fn notifications<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>> {
        Box::pin(async move {
            let mut found: Vec<Notification> = lock(&self.outbox)
                .rows
                .values()
                .filter(|(n, _)| n.run_id == run_id)
                .map(|(n, _)| n.clone())
                .collect();
            found.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            Ok(found)
        })
    }

    fn next_notification_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        Box::pin(async move {
            Ok(lock(&self.outbox)
                .rows
                .values()
                .filter(|(n, _)| n.state == NotificationState::Pending)
                .map(|(n, lease)| lease.map_or(n.next_at, |l| from_millis(l).max(n.next_at)))
                .min())
        })
    }

    fn wait_for_notifications(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.outbox.wake.wait(timeout))
    }
}
