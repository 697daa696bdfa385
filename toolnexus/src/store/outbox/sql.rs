//! What the two SQL stores' outboxes share: the `notifications` table (schema version 6) and
//! how a row reads back.

use std::time::SystemTime;

use super::{Notification, NotificationState, NotifyReason};
use crate::store::from_millis;

/// Version 6: the notification outbox, one row per request, reason and notifier, written in
/// the park's transaction; `notifications_due` holds the pending ones only, so a delivered
/// notification leaves it. The same SQL in both stores but for the integer type.
macro_rules! outbox_schema {
    ($int:tt) => {
        concat!(
            "CREATE TABLE IF NOT EXISTS notifications (
                id          TEXT PRIMARY KEY,
                run_id      TEXT NOT NULL,
                request_id  TEXT NOT NULL,
                notifier    TEXT NOT NULL,
                reason      TEXT NOT NULL,
                created_at  ",
            stringify!($int),
            " NOT NULL,
                state       TEXT NOT NULL,
                attempts    ",
            stringify!($int),
            " NOT NULL,
                next_at     ",
            stringify!($int),
            " NOT NULL,
                lease_owner TEXT,
                lease_until ",
            stringify!($int),
            ",
                last_error  TEXT
            );
            CREATE INDEX IF NOT EXISTS notifications_due ON notifications (next_at) WHERE state = 'pending';
            CREATE INDEX IF NOT EXISTS notifications_by_run ON notifications (run_id, created_at);"
        )
    };
}
pub(crate) use outbox_schema;

/// The columns every read of a notification takes, in [`Columns::read`]'s order.
pub(crate) const NOTIFICATION_COLUMNS: &str = "id, run_id, request_id, notifier, reason, \
     created_at, state, attempts, next_at, lease_owner, last_error";

/// A notification row's columns as read, in [`NOTIFICATION_COLUMNS`] order.
pub(crate) struct Columns {
    pub(crate) id: String,
    pub(crate) run_id: String,
    pub(crate) request_id: String,
    pub(crate) notifier: String,
    pub(crate) reason: String,
    pub(crate) created_at: i64,
    pub(crate) state: String,
    pub(crate) attempts: i64,
    pub(crate) next_at: i64,
    pub(crate) lease_owner: Option<String>,
    pub(crate) last_error: Option<String>,
}

impl Columns {
    pub(crate) fn read(self) -> Notification {
        Notification {
            id: self.id,
            run_id: self.run_id,
            request_id: self.request_id,
            notifier: self.notifier,
            reason: NotifyReason::parse(&self.reason).unwrap_or(NotifyReason::Parked),
            created_at: from_millis(self.created_at),
            state: NotificationState::parse(&self.state),
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            next_at: from_millis(self.next_at),
            last_error: self.last_error,
            lease_owner: self.lease_owner,
        }
    }
}

/// The row a deliverer's `record_attempt` writes: `(state, next_at ms or None, last_error)`.
pub(crate) fn attempt_columns(
    attempt: &super::Attempt,
) -> (&'static str, Option<i64>, Option<String>) {
    let next = attempt
        .next_at()
        .map(|at: SystemTime| crate::store::millis(at));
    let error = attempt.error().map(str::to_owned);
    (attempt.state().as_str(), next, error)
}
