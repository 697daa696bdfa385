//! What the two SQL stores' outboxes share: the `notifications` table (schema version 6), the
//! statements that run the [decisions](super::decide) (the same text in both stores but for
//! how a parameter is named, and PostgreSQL's row locks), and how a row reads back.

use super::decide::{Claiming, Recording};
use super::{Notification, NotificationState, NotifyReason};
use crate::store::from_millis;
use crate::store::sql::{SqlParam, append_history};

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
pub(crate) const NOTIFICATION_COLUMNS: &str = "id, run_id, request_id, notifier, reason, \
     created_at, state, attempts, next_at, lease_owner, last_error";

/// The outbox's statements in one SQL store's dialect (`placeholder(n)` names parameter n).
#[derive(Debug)]
pub(crate) struct OutboxSql {
    placeholder: fn(usize) -> String,
    /// Writes a notification ([`insert_params`]), leaving one of the same id as it is.
    pub(crate) insert: String,
    /// A [`Recording`] on the notification's row, its guard the `WHERE`
    /// ([`Recording::params`]: 1 to 6).
    pub(crate) record: String,
    /// Appends events (parameter 1) to the history of run parameter 2.
    pub(crate) history: String,
    /// The notifications of run parameter 1, in listing order.
    pub(crate) of_run: String,
    /// The earliest `due_at` of the pending notifications.
    pub(crate) next_due: &'static str,
}

impl OutboxSql {
    /// The statements with parameters named by `placeholder`.
    pub(crate) fn new(placeholder: fn(usize) -> String) -> Self {
        let p = placeholder;
        Self {
            placeholder,
            insert: format!(
                "INSERT INTO notifications (id, run_id, request_id, notifier, reason, created_at,
                     state, attempts, next_at)
                 VALUES ({}, {}, {}, {}, {}, {}, 'pending', 0, {})
                 ON CONFLICT (id) DO NOTHING",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5),
                p(6),
                p(6)
            ),
            record: format!(
                "UPDATE notifications SET state = {}, next_at = COALESCE({}, next_at),
                     last_error = {}, lease_owner = NULL, lease_until = NULL
                 WHERE id = {} AND lease_owner = {} AND attempts = {} AND state = 'pending'",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5),
                p(6)
            ),
            history: format!(
                "UPDATE runs SET {} WHERE run_id = {}",
                append_history(&p(1)),
                p(2)
            ),
            of_run: format!(
                "SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE run_id = {}
                 ORDER BY created_at, id",
                p(1)
            ),
            next_due:
                "SELECT MIN(CASE WHEN lease_until > next_at THEN lease_until ELSE next_at END)
                 FROM notifications WHERE state = 'pending'",
        }
    }

    /// The statement of `claiming` (its notifier names one parameter each, so the text
    /// depends on how many), `lock` following the pick (PostgreSQL's row locks, or empty),
    /// with its parameters; it returns the claimed rows' [`NOTIFICATION_COLUMNS`].
    pub(crate) fn claim(&self, claiming: &Claiming, lock: &str) -> (String, Vec<SqlParam>) {
        let p = self.placeholder;
        let names: Vec<String> = (0..claiming.notifiers.len()).map(|i| p(5 + i)).collect();
        let sql = format!(
            "UPDATE notifications SET attempts = attempts + 1, lease_owner = {owner},
                 lease_until = {until}
             WHERE id IN (SELECT id FROM notifications
                 WHERE state = 'pending' AND next_at <= {now}
                   AND (lease_until IS NULL OR lease_until < {now})
                   AND notifier IN ({names})
                 ORDER BY next_at, id LIMIT {limit}{lock})
             RETURNING {NOTIFICATION_COLUMNS}",
            now = p(1),
            owner = p(2),
            until = p(3),
            limit = p(4),
            names = names.join(", "),
        );
        let mut params = vec![
            SqlParam::Int(claiming.now),
            SqlParam::Text(claiming.owner.clone()),
            SqlParam::Int(claiming.until),
            SqlParam::Int(i64::try_from(claiming.limit).unwrap_or(i64::MAX)),
        ];
        params.extend(claiming.notifiers.iter().cloned().map(SqlParam::Text));
        (sql, params)
    }
}

/// The parameters of [`OutboxSql::insert`] for `n`.
pub(crate) fn insert_params(n: &Notification) -> Vec<SqlParam> {
    vec![
        SqlParam::Text(n.id.clone()),
        SqlParam::Text(n.run_id.clone()),
        SqlParam::Text(n.request_id.clone()),
        SqlParam::Text(n.notifier.clone()),
        SqlParam::Text(n.reason.as_str().to_owned()),
        SqlParam::Int(crate::store::millis(n.created_at)),
    ]
}

impl Recording {
    /// The parameters of [`OutboxSql::record`]: the state, `next_at` (or `NULL`: kept),
    /// the error; then the guard's id, owner and attempt.
    pub(crate) fn params(&self) -> Vec<SqlParam> {
        vec![
            SqlParam::Text(self.state.as_str().to_owned()),
            SqlParam::MaybeInt(self.next_at),
            SqlParam::MaybeText(self.last_error.clone()),
            SqlParam::Text(self.id.clone()),
            SqlParam::Text(self.owner.clone()),
            SqlParam::Int(i64::from(self.attempts)),
        ]
    }
}

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

/// The notification of row `$r` (its [`NOTIFICATION_COLUMNS`]), each column read with
/// `$r.$get(i)?` (rusqlite's `get`, tokio-postgres's `try_get`).
macro_rules! read_notification {
    ($r:expr, $get:ident) => {
        $crate::store::outbox::sql::Columns {
            id: $r.$get(0)?,
            run_id: $r.$get(1)?,
            request_id: $r.$get(2)?,
            notifier: $r.$get(3)?,
            reason: $r.$get(4)?,
            created_at: $r.$get(5)?,
            state: $r.$get(6)?,
            attempts: $r.$get(7)?,
            next_at: $r.$get(8)?,
            lease_owner: $r.$get(9)?,
            last_error: $r.$get(10)?,
        }
        .read()
    };
}
pub(crate) use read_notification;
