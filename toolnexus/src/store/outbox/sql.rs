//! What the two SQL stores' outboxes share: the `notifications` table (schema version 6), the
//! statements that run the [decisions](super::decide) (the same text in both stores but for
//! how a parameter is named, and PostgreSQL's row locks), and how a row reads back.

use super::Notification;
use super::decide::{Claiming, Recording};
use crate::store::sql::SqlParam;

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

/// The columns every read of a notification takes, in [`read_notification!`]'s order.
macro_rules! columns {
    () => {
        "id, run_id, request_id, notifier, reason, created_at, state, attempts, next_at, \
         lease_owner, last_error"
    };
}

// The statements, written with SQLite's `?n` ([`numbered`](crate::store::sql::numbered) for
// PostgreSQL's `$n`).

/// Writes a notification ([`insert_params`]), leaving one of the same id as it is.
pub(crate) const INSERT: &str = "INSERT INTO notifications (id, run_id, request_id, notifier,
    reason, created_at, state, attempts, next_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?6) ON CONFLICT (id) DO NOTHING";

/// A [`Recording`] on the notification's row, its guard the `WHERE`
/// ([`Recording::params`]: 1 to 6).
pub(crate) const RECORD: &str = "UPDATE notifications SET state = ?1,
    next_at = COALESCE(?2, next_at), last_error = ?3, lease_owner = NULL, lease_until = NULL
    WHERE id = ?4 AND lease_owner = ?5 AND attempts = ?6 AND state = 'pending'";

/// The notifications of run `?1`, in listing order.
pub(crate) const OF_RUN: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM notifications WHERE run_id = ?1 ORDER BY created_at, id"
);

/// The earliest `due_at` of the pending notifications.
pub(crate) const NEXT_DUE: &str = "SELECT MIN(CASE WHEN lease_until > next_at
    THEN lease_until ELSE next_at END) FROM notifications WHERE state = 'pending'";

/// Appends events (`?1`) to the history of run `?2`.
#[cfg(feature = "sqlite")]
pub(crate) fn history() -> String {
    format!(
        "UPDATE runs SET {} WHERE run_id = ?2",
        crate::store::sql::append_history("?1")
    )
}

/// The statement of `claiming` (its notifier names one parameter each, so the text depends on
/// how many), `lock` following the pick (PostgreSQL's row locks, or empty), with its
/// parameters; it returns the claimed rows' columns.
pub(crate) fn claim(claiming: &Claiming<'_>, lock: &str) -> (String, Vec<SqlParam>) {
    let names: Vec<String> = (5..5 + claiming.notifiers.len())
        .map(|n| format!("?{n}"))
        .collect();
    let sql = format!(
        "UPDATE notifications SET attempts = attempts + 1, lease_owner = ?2, lease_until = ?3
         WHERE id IN (SELECT id FROM notifications
             WHERE state = 'pending' AND next_at <= ?1
               AND (lease_until IS NULL OR lease_until < ?1) AND notifier IN ({})
             ORDER BY next_at, id LIMIT ?4{lock})
         RETURNING {}",
        names.join(", "),
        columns!()
    );
    let mut params = vec![
        SqlParam::Int(claiming.now),
        SqlParam::Text(claiming.owner.to_owned()),
        SqlParam::Int(claiming.until),
        SqlParam::Int(i64::try_from(claiming.limit).unwrap_or(i64::MAX)),
    ];
    params.extend(claiming.notifiers.iter().cloned().map(SqlParam::Text));
    (sql, params)
}

/// The parameters of [`INSERT`] for `n`.
pub(crate) fn insert_params(n: &Notification) -> Vec<SqlParam> {
    let text = |s: &str| SqlParam::Text(s.to_owned());
    vec![
        text(&n.id),
        text(&n.run_id),
        text(&n.request_id),
        text(&n.notifier),
        text(n.reason.as_str()),
        SqlParam::Int(crate::store::millis(n.created_at)),
    ]
}

impl Recording<'_> {
    /// The parameters of [`RECORD`]: the state, `next_at` (or `NULL`: kept),
    /// the error; then the guard's id, owner and attempt.
    pub(crate) fn params(&self) -> Vec<SqlParam> {
        vec![
            SqlParam::Text(self.attempt.state().as_str().to_owned()),
            SqlParam::MaybeInt(self.next_at()),
            SqlParam::MaybeText(self.attempt.error().map(str::to_owned)),
            SqlParam::Text(self.claimed.id.clone()),
            SqlParam::Text(self.owner.to_owned()),
            SqlParam::Int(i64::from(self.claimed.attempts)),
        ]
    }
}

/// The notification of row `$r` (its notification columns), each column read with
/// `$r.$get(i)?` (rusqlite's `get`, tokio-postgres's `try_get`); a reason this release does
/// not know reads as `parked`.
macro_rules! read_notification {
    ($r:expr, $get:ident) => {{
        use $crate::store::outbox::{Notification, NotificationState, NotifyReason};
        let (reason, state): (String, String) = ($r.$get(4)?, $r.$get(6)?);
        let (created_at, attempts, next_at): (i64, i64, i64) =
            ($r.$get(5)?, $r.$get(7)?, $r.$get(8)?);
        Notification {
            id: $r.$get(0)?,
            run_id: $r.$get(1)?,
            request_id: $r.$get(2)?,
            notifier: $r.$get(3)?,
            reason: NotifyReason::parse(&reason).unwrap_or(NotifyReason::Parked),
            created_at: $crate::store::from_millis(created_at),
            state: NotificationState::parse(&state),
            attempts: u32::try_from(attempts).unwrap_or(0),
            next_at: $crate::store::from_millis(next_at),
            lease_owner: $r.$get(9)?,
            last_error: $r.$get(10)?,
        }
    }};
}
pub(crate) use read_notification;
