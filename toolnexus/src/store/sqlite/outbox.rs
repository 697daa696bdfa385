//! The SQLite store's outbox: the [outbox engine](crate::store::outbox) over the
//! `notifications` table (schema version 6), each step one statement of the shared text
//! (`outbox/sql.rs`); a park's notifications are written in the park's `IMMEDIATE` transaction.

use rusqlite::{Connection, params_from_iter};

use super::SqliteStore;
use super::connection::Immediate;
use crate::store::StoreResult;
use crate::store::outbox::decide::Recording;
use crate::store::outbox::sql::{self, insert_params};
use crate::store::outbox::{Notification, OutboxDriver, OutboxState, Step, with_notifiers};
use crate::store::sql::backend;

impl SqliteStore {
    with_notifiers! {
        /// Writes one notification per notifier named here each time a run parks, in the
        /// park's transaction, for a [`Deliverer`](crate::notify::Deliverer) (or a
        /// [`Worker`](crate::worker::Worker) given notifiers) to deliver: see
        /// [`outbox`](crate::store::outbox). Give every process that parks runs in the file
        /// the same names.
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
    insert_rows(conn, state.park_rows(run_id, request_id, now))
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
    insert_rows(conn, state.escalation_rows(run_id, request_id, step, now))
}

/// Inserts `rows`, leaving any already written (the same id) as it is.
fn insert_rows(conn: &Connection, rows: Vec<Notification>) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut insert = conn.prepare_cached(sql::INSERT).map_err(backend)?;
    for n in rows {
        insert
            .execute(params_from_iter(insert_params(&n)))
            .map_err(backend)?;
    }
    Ok(())
}

impl OutboxDriver for SqliteStore {
    sql::sql_outbox_steps!("");

    fn record<'a>(&'a self, recording: &'a Recording<'a>) -> Step<'a, bool> {
        let (params, event, run_id) = (
            recording.params(),
            recording.event.clone(),
            recording.claimed.run_id.clone(),
        );
        Box::pin(self.call(move |conn| {
            let tx = Immediate::begin(conn)?;
            let changed = tx
                .prepare_cached(sql::RECORD)
                .and_then(|mut stmt| stmt.execute(params_from_iter(&params)))
                .map_err(backend)?;
            if changed == 0 {
                return Ok(false);
            }
            tx.prepare_cached(&sql::history())
                .and_then(|mut stmt| stmt.execute([&event, &run_id]))
                .map_err(backend)?;
            tx.commit()?;
            Ok(true)
        }))
    }
}
