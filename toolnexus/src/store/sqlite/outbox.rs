//! The SQLite store's [`Outbox`]: the `notifications` table (schema version 6), written in the
//! park's `IMMEDIATE` transaction.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, TransactionBehavior, params};

use super::SqliteStore;
use crate::store::outbox::sql::{Columns, NOTIFICATION_COLUMNS, attempt_columns};
use crate::store::outbox::{Attempt, Notification, Outbox, OutboxState};
use crate::store::sql::{append_history, backend};
use crate::store::{StoreError, StoreResult, events_json, from_millis, now_ms};
use crate::util::BoxFuture;

impl SqliteStore {
    /// Writes one notification per notifier named here each time a run parks, in the park's
    /// transaction, for a [`Deliverer`](crate::notify::Deliverer) (or a
    /// [`Worker`](crate::worker::Worker) given notifiers) to deliver: see
    /// [`outbox`](crate::store::outbox). Give every process that parks runs in the file the
    /// same names.
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
}

/// Writes the notifications of a park of `request_id` (run `run_id`, at `now` ms) inside the
/// park's transaction (`conn`); nothing without notifiers.
pub(super) fn outbox_park(
    conn: &Connection,
    state: &OutboxState,
    run_id: &str,
    request_id: &str,
    now: i64,
) -> StoreResult<()> {
    if state.names.is_empty() {
        return Ok(());
    }
    insert_rows(conn, state.park_rows(run_id, request_id, now), now)
}

/// Writes the notifications of step `step` of the escalation of `request_id` (run `run_id`,
/// at `now` ms) inside the escalation's transaction; nothing without notifiers.
pub(super) fn outbox_escalate(
    conn: &Connection,
    state: &OutboxState,
    run_id: &str,
    request_id: &str,
    step: u32,
    now: i64,
) -> StoreResult<()> {
    if state.names.is_empty() {
        return Ok(());
    }
    insert_rows(
        conn,
        state.escalation_rows(run_id, request_id, step, now),
        now,
    )
}

/// Inserts `rows` made at `now` (ms), leaving any already written (the same id) as it is.
fn insert_rows(conn: &Connection, rows: Vec<Notification>, now: i64) -> StoreResult<()> {
    let mut insert = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO notifications (id, run_id, request_id, notifier, reason,
                 created_at, state, attempts, next_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?6)",
        )
        .map_err(backend)?;
    for n in rows {
        insert
            .execute(params![
                n.id,
                n.run_id,
                n.request_id,
                n.notifier,
                n.reason.as_str(),
                now
            ])
            .map_err(backend)?;
    }
    Ok(())
}

fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Notification> {
    Ok(Columns {
        id: r.get(0)?,
        run_id: r.get(1)?,
        request_id: r.get(2)?,
        notifier: r.get(3)?,
        reason: r.get(4)?,
        created_at: r.get(5)?,
        state: r.get(6)?,
        attempts: r.get(7)?,
        next_at: r.get(8)?,
        lease_owner: r.get(9)?,
        last_error: r.get(10)?,
    }
    .read())
}

impl Outbox for SqliteStore {
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
        let owner = owner.to_owned();
        let names = serde_json::to_string(notifiers).unwrap_or_default();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(self.call(move |conn| {
            let now = now_ms();
            let until = crate::store::outbox::lease_until(lease);
            conn.prepare_cached(&format!(
                "UPDATE notifications SET attempts = attempts + 1, lease_owner = ?2,
                     lease_until = ?3
                 WHERE id IN (SELECT id FROM notifications
                     WHERE state = 'pending' AND next_at <= ?1
                       AND (lease_until IS NULL OR lease_until < ?1)
                       AND notifier IN (SELECT value FROM json_each(?5))
                     ORDER BY next_at LIMIT ?4)
                 RETURNING {NOTIFICATION_COLUMNS}"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(params![now, owner, until, limit, names], read)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)
        }))
    }

    fn record_attempt<'a>(
        &'a self,
        n: &'a Notification,
        owner: &'a str,
        attempt: &'a Attempt,
    ) -> BoxFuture<'a, StoreResult<()>> {
        let (n, owner, attempt) = (n.clone(), owner.to_owned(), attempt.clone());
        Box::pin(self.call(move |conn| {
            let now = now_ms();
            let (state, next_at, error) = attempt_columns(&attempt);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let changed = tx
                .prepare_cached(
                    "UPDATE notifications SET state = ?1, next_at = COALESCE(?2, next_at),
                         last_error = ?3, lease_owner = NULL, lease_until = NULL
                     WHERE id = ?4 AND lease_owner = ?5 AND attempts = ?6 AND state = 'pending'",
                )
                .and_then(|mut stmt| {
                    stmt.execute(params![state, next_at, error, n.id, owner, n.attempts])
                })
                .map_err(backend)?;
            if changed == 0 {
                return Err(StoreError::LeaseLost {
                    run_id: n.run_id.clone(),
                });
            }
            tx.prepare_cached(&format!(
                "UPDATE runs SET {} WHERE run_id = ?2",
                append_history("?1")
            ))
            .and_then(|mut stmt| {
                stmt.execute(params![events_json(&[attempt.event(&n, now)]), n.run_id])
            })
            .map_err(backend)?;
            tx.commit().map_err(backend)
        }))
    }

    fn notifications<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE run_id = ?1
                 ORDER BY created_at, id"
            ))
            .and_then(|mut stmt| {
                stmt.query_map([&run_id], read)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)
        }))
    }

    fn next_notification_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        Box::pin(self.call(|conn| {
            conn.query_row(
                "SELECT MIN(MAX(next_at, COALESCE(lease_until, 0))) FROM notifications
                 WHERE state = 'pending'",
                [],
                |r| r.get::<_, Option<i64>>(0),
            )
            .map(|at| at.map(from_millis))
            .map_err(backend)
        }))
    }

    fn wait_for_notifications(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.outbox.wake.wait(timeout))
    }
}
