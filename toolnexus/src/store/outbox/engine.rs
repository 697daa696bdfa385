//! [`Outbox`] written once over any [`OutboxDriver`]: the engine makes each decision
//! ([`decide`](super::decide)) and a driver (memory, SQLite, PostgreSQL) only runs the step
//! it is given, atomically.

use std::fmt;
use std::time::{Duration, SystemTime};

use super::decide::{Claiming, Recording};
use super::{Attempt, Notification, Outbox, OutboxState};
use crate::store::{StoreResult, from_millis, now_ms};
use crate::util::BoxFuture;

/// A step of a store, as a future.
pub(crate) type Step<'a, T> = BoxFuture<'a, StoreResult<T>>;

/// What a store gives its outbox: its notifier names and wake-up, and the table's four steps.
pub(crate) trait OutboxDriver: Send + Sync + fmt::Debug {
    /// The notifier names and the in-process wake-up of the deliverers.
    fn outbox_state(&self) -> &OutboxState;

    /// In one step: claims what `claiming` takes ([`Claiming::pick`]: due, oldest due first,
    /// at most its limit, each one attempt more and leased), concurrent claims never taking
    /// the same notification; the notifications as they became.
    fn claim_due<'a>(&'a self, claiming: &'a Claiming<'a>) -> Step<'a, Vec<Notification>>;

    /// In one step: applies `recording` to its row when the row still [holds](Recording::holds)
    /// the attempt, and appends its event to the run's history (when the run is still kept);
    /// `false`, nothing changed, when the row no longer holds it.
    fn record<'a>(&'a self, recording: &'a Recording<'a>) -> Step<'a, bool>;

    /// The notifications of run `run_id`, in [listing order](super::decide::listing_order).
    fn of_run<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<Notification>>;

    /// The earliest [`due_at`](super::decide::due_at) of the pending notifications, in ms.
    fn next_due_ms(&self) -> Step<'_, Option<i64>>;
}

/// `driver`'s outbox, when it was built with notifier names (`RunStore::outbox`).
pub(crate) fn outbox_of<D: OutboxDriver>(driver: &D) -> Option<&dyn Outbox> {
    (!driver.outbox_state().names.is_empty()).then_some(driver as &dyn Outbox)
}

impl<D: OutboxDriver> Outbox for D {
    fn notifier_names(&self) -> &[String] {
        &self.outbox_state().names
    }

    fn claim_notifications<'a>(
        &'a self,
        owner: &'a str,
        notifiers: &'a [String],
        limit: usize,
        lease: Duration,
    ) -> Step<'a, Vec<Notification>> {
        Box::pin(async move {
            let claiming = Claiming::new(owner, notifiers, limit, lease, now_ms());
            if claiming.takes_none() {
                return Ok(Vec::new());
            }
            self.claim_due(&claiming).await
        })
    }

    fn record_attempt<'a>(
        &'a self,
        n: &'a Notification,
        owner: &'a str,
        attempt: &'a Attempt,
    ) -> Step<'a, ()> {
        Box::pin(async move {
            let recording = Recording::of(n, owner, attempt, now_ms());
            if self.record(&recording).await? {
                Ok(())
            } else {
                Err(recording.lost())
            }
        })
    }

    fn notifications<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<Notification>> {
        self.of_run(run_id)
    }

    fn next_notification_due(&self) -> Step<'_, Option<SystemTime>> {
        Box::pin(async move { Ok(self.next_due_ms().await?.map(from_millis)) })
    }

    fn wait_for_notifications(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.outbox_state().wake.wait(timeout))
    }
}

/// A store's `with_notifiers` builder, its docs given (each store says who shares its names):
/// the names checked ([`OutboxState::of`]) and kept for this handle and the clones made after.
macro_rules! with_notifiers {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// [`StoreError::Invalid`](crate::store::StoreError::Invalid) for a name that is not 1
        /// to 64 ASCII letters, digits, `-` or `_`, or a name given twice.
        pub fn with_notifiers(
            mut self,
            names: impl IntoIterator<Item = impl Into<String>>,
        ) -> crate::store::StoreResult<Self> {
            self.outbox = std::sync::Arc::new(crate::store::outbox::OutboxState::of(names)?);
            Ok(self)
        }
    };
}
pub(crate) use with_notifiers;
