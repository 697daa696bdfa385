//! What the two SQL stores' outboxes share: the `notifications` table (schema version 6), the
//! statements that run the [decisions](super::decide) (the same text in both stores but for
//! how a parameter is named, and PostgreSQL's row locks), and how a row reads back.

use super::decide::{Claiming, Recording};
use super::{Notification, NotificationState, NotifyReason};
use crate::store::from_millis;
use crate::store::sql::{SqlCols, SqlParam, SqlSide};

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

/// The columns every read of a notification takes, in [`read_notification`]'s order.
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

/// The notification of row `r` (its notification columns); why the first column that does
/// not read fails. A reason this release does not know reads as `parked`, a state as `pending`.
fn read_notification(r: &dyn SqlCols) -> Result<Notification, String> {
    Ok(Notification {
        id: r.text(0)?,
        run_id: r.text(1)?,
        request_id: r.text(2)?,
        notifier: r.text(3)?,
        reason: NotifyReason::parse(&r.text(4)?).unwrap_or(NotifyReason::Parked),
        created_at: from_millis(r.int(5)?),
        state: NotificationState::parse(&r.text(6)?).unwrap_or(NotificationState::Pending),
        attempts: u32::try_from(r.int(7)?).unwrap_or(0),
        next_at: from_millis(r.int(8)?),
        lease_owner: r.maybe_text(9)?,
        last_error: r.maybe_text(10)?,
    })
}

/// The [`OutboxDriver`](super::OutboxDriver) methods both SQL stores answer alike: their
/// `outbox` field, and the [`steps`] through their [`SqlSide`], `$lock` following a claim's
/// pick (PostgreSQL's row locks, or empty).
macro_rules! sql_outbox_steps {
    ($lock:literal) => {
        fn outbox_state(&self) -> &$crate::store::outbox::OutboxState {
            &self.outbox
        }

        fn claim_due<'a>(
            &'a self,
            claiming: &'a $crate::store::outbox::decide::Claiming<'a>,
        ) -> $crate::store::outbox::Step<'a, Vec<$crate::store::outbox::Notification>> {
            Box::pin($crate::store::outbox::sql::steps::claim_due(
                self, claiming, $lock,
            ))
        }

        fn of_run<'a>(
            &'a self,
            run_id: &'a str,
        ) -> $crate::store::outbox::Step<'a, Vec<$crate::store::outbox::Notification>> {
            Box::pin($crate::store::outbox::sql::steps::of_run(self, run_id))
        }

        fn next_due_ms(&self) -> $crate::store::outbox::Step<'_, Option<i64>> {
            Box::pin($crate::store::outbox::sql::steps::next_due_ms(self))
        }
    };
}
pub(crate) use sql_outbox_steps;

/// The steps of [`OutboxDriver`](super::OutboxDriver) a SQL store takes alike, one statement
/// each through its [`SqlSide`] (`record`, with the run's history in the same step, is the
/// store's own).
pub(crate) mod steps {
    use super::{Claiming, NEXT_DUE, Notification, OF_RUN, SqlParam, SqlSide, read_notification};
    use crate::store::sql::{first, numbered};
    use crate::store::{StoreError, StoreResult};

    /// [`claim_due`](crate::store::outbox::OutboxDriver::claim_due), `lock` following the
    /// pick (PostgreSQL's row locks, or empty).
    pub(crate) async fn claim_due<D: SqlSide>(
        d: &D,
        claiming: &Claiming<'_>,
        lock: &str,
    ) -> StoreResult<Vec<Notification>> {
        let (text, params) = super::claim(claiming, lock);
        notifications(d, &text, params).await
    }

    /// [`of_run`](crate::store::outbox::OutboxDriver::of_run).
    pub(crate) async fn of_run<D: SqlSide>(d: &D, run_id: &str) -> StoreResult<Vec<Notification>> {
        notifications(d, OF_RUN, vec![SqlParam::Text(run_id.to_owned())]).await
    }

    /// [`next_due_ms`](crate::store::outbox::OutboxDriver::next_due_ms).
    pub(crate) async fn next_due_ms<D: SqlSide>(d: &D) -> StoreResult<Option<i64>> {
        Ok(first(d, NEXT_DUE, Vec::new(), |r| r.maybe_int(0))
            .await?
            .flatten())
    }

    /// The notifications `text` (with `?n` parameters) returns for `params`.
    async fn notifications<D: SqlSide>(
        d: &D,
        text: &str,
        params: Vec<SqlParam>,
    ) -> StoreResult<Vec<Notification>> {
        let sql = numbered(text, d.side_sql().placeholder);
        let rows = d.select(sql, params, read_notification).await?;
        rows.into_iter()
            .collect::<Result<_, _>>()
            .map_err(StoreError::Backend)
    }
}
