//! The PostgreSQL store's outbox: the [outbox engine](crate::store::outbox) over the
//! `notifications` table (schema version 6), each step one statement of the shared text
//! (`outbox/sql.rs`); a park's notifications are written by the park's own statement (a common
//! table expression), so a park stays one round trip.

use std::sync::LazyLock;

use super::answers::{pg_params, placeholder};
use super::{PostgresStore, pg};
use crate::store::StoreResult;
use crate::store::outbox::decide::Recording;
use crate::store::outbox::sql::{self, insert_params};
use crate::store::outbox::{Notification, OutboxDriver, OutboxState, Step, with_notifiers};
use crate::store::sql::{SqlParam, numbered};

/// The statement `record` runs: the notification's row and its run's history (`$7`: the
/// events) in one statement, counting the rows recorded (the run may be gone: its history
/// then has no row to change).
static RECORD: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH n AS ({} RETURNING run_id),
              h AS (UPDATE runs SET {} WHERE run_id = (SELECT run_id FROM n) RETURNING 1)
         SELECT count(*) FROM n",
        numbered(sql::RECORD, placeholder),
        crate::store::sql::append_history("$7")
    )
});

impl PostgresStore {
    with_notifiers! {
        /// Writes one notification per notifier named here each time a run parks, in the
        /// park's transaction, for a [`Deliverer`](crate::notify::Deliverer) (or a
        /// [`Worker`](crate::worker::Worker) given notifiers) to deliver: see
        /// [`outbox`](crate::store::outbox). Give every process that parks runs in the
        /// database the same names.
    }
}

/// The notifications a park of `request_id` writes, as two parallel arrays (ids, notifiers)
/// for `unnest`; `None` without notifiers.
pub(super) fn park_arrays(state: &OutboxState, request_id: &str) -> Option<[Vec<String>; 2]> {
    let rows = state.park_rows("", request_id, 0);
    (!rows.is_empty()).then(|| {
        let (ids, names) = rows.into_iter().map(|n| (n.id, n.notifier)).unzip();
        [ids, names]
    })
}

/// Inserts `rows` (an escalation's notifications) in `tx`, leaving any already written (the
/// same id) as it is.
pub(super) async fn insert_rows(
    tx: &tokio_postgres::Transaction<'_>,
    rows: Vec<Notification>,
) -> StoreResult<()> {
    for n in rows {
        tx.execute(
            &numbered(sql::INSERT, placeholder),
            &pg_params(&insert_params(&n)),
        )
        .await
        .map_err(|e| pg(&e))?;
    }
    Ok(())
}

/// The park's `insert` (its values `$1`..`$10`: run id, request id, .., created at `$5`), with
/// the notifications of `$11` (ids) and `$12` (notifiers) written by the same statement.
pub(super) fn park_sql(insert: &str) -> String {
    format!(
        "WITH run AS ({insert} RETURNING run_id)
         INSERT INTO notifications (id, run_id, request_id, notifier, reason, created_at, state,
             attempts, next_at)
         SELECT n.id, $1, $2, n.notifier, 'parked', $5, 'pending', 0, $5
         FROM run, unnest($11::text[], $12::text[]) AS n(id, notifier)"
    )
}

/// The common table expression a finish that parks the run again (its claim `$1`, `$2`; new
/// request `$3`) adds for its notifications: ids `$first`, notifiers `$first + 1`, made at
/// `$first + 2` (ms).
pub(super) fn finish_cte(first: usize) -> String {
    let (ids, names, at) = (first, first + 1, first + 2);
    format!(
        "o AS (INSERT INTO notifications (id, run_id, request_id, notifier, reason, created_at,
             state, attempts, next_at)
         SELECT n.id, $1, $3, n.notifier, 'parked', ${at}::bigint, 'pending', 0, ${at}::bigint
         FROM unnest(${ids}::text[], ${names}::text[]) AS n(id, notifier)
         WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND state = 'claimed' AND claims = $2)
         ON CONFLICT (id) DO NOTHING), "
    )
}

impl OutboxDriver for PostgresStore {
    sql::sql_outbox_steps!(" FOR UPDATE SKIP LOCKED");

    fn record<'a>(&'a self, recording: &'a Recording<'a>) -> Step<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let mut params = recording.params();
            params.push(SqlParam::Text(recording.event.clone()));
            let stmt = client.prepare_cached(&RECORD).await.map_err(|e| pg(&e))?;
            let row = client
                .query_one(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))?;
            Ok(row.try_get::<_, i64>(0).map_err(|e| pg(&e))? > 0)
        })
    }
}
