//! The memory store's outbox: the [outbox engine](crate::store::outbox) over an in-memory
//! table ([`MemRows`]) beside the runs, written while the park holds the runs' lock (its
//! "transaction"); the runs' lock is always taken first.

use crate::store::MemoryStore;
use crate::store::outbox::decide::{Claiming, Recording};
use crate::store::outbox::{
    MemRows, Notification, OutboxDriver, OutboxState, Step, with_notifiers,
};

fn lock(state: &OutboxState) -> std::sync::MutexGuard<'_, MemRows> {
    super::lock(&state.rows)
}

impl MemoryStore {
    with_notifiers! {
        /// Writes one notification per notifier this store was built with each time a run
        /// parks, in the park's transaction, for a [`Deliverer`](crate::notify::Deliverer)
        /// (or a [`Worker`](crate::worker::Worker) given notifiers) to deliver. Call it when
        /// building the store: the outbox belongs to this handle and the clones made after.
        ///
        /// ```
        /// use toolnexus::store::{MemoryStore, RunStore};
        ///
        /// let store = MemoryStore::new().with_notifiers(["webhook", "email"]).unwrap();
        /// assert_eq!(store.outbox().unwrap().notifier_names(), ["webhook", "email"]);
        /// ```
    }

    /// Writes `rows` (a park's or an escalation's notifications); called with the runs' lock
    /// held.
    fn outbox_insert(&self, rows: Vec<Notification>) {
        if !rows.is_empty() {
            lock(&self.outbox).insert(rows);
        }
    }

    /// The park's outbox rows; called with the runs' lock held.
    pub(crate) fn outbox_park(&self, run_id: &str, request_id: &str, now: i64) {
        self.outbox_insert(self.outbox.park_rows(run_id, request_id, now));
    }

    /// The outbox rows of step `step` of an escalation; called with the runs' lock held.
    pub(crate) fn outbox_escalate(&self, run_id: &str, request_id: &str, step: u32, now: i64) {
        self.outbox_insert(self.outbox.escalation_rows(run_id, request_id, step, now));
    }
}

impl OutboxDriver for MemoryStore {
    fn outbox_state(&self) -> &OutboxState {
        &self.outbox
    }

    fn claim_due<'a>(&'a self, claiming: &'a Claiming<'a>) -> Step<'a, Vec<Notification>> {
        Box::pin(async move { Ok(lock(&self.outbox).claim(claiming)) })
    }

    fn record<'a>(&'a self, recording: &'a Recording<'a>) -> Step<'a, bool> {
        Box::pin(async move {
            let mut runs = self.rows();
            if !lock(&self.outbox).record(recording) {
                return Ok(false);
            }
            if let Some(run) = runs.by_id.get_mut(&recording.claimed.run_id) {
                run.append(&recording.event);
            }
            Ok(true)
        })
    }

    fn of_run<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<Notification>> {
        Box::pin(async move { Ok(lock(&self.outbox).of_run(run_id)) })
    }

    fn next_due_ms(&self) -> Step<'_, Option<i64>> {
        Box::pin(async move { Ok(lock(&self.outbox).next_due()) })
    }
}
