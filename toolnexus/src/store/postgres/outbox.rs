//! The PostgreSQL store's [`Outbox`]: the `notifications` table (schema version 6), written by
//! the park's own statement (a common table expression), so a park stays one round trip.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio_postgres::Row;

use super::{PostgresStore, pg};
use crate::store::outbox::lease_until;
use crate::store::outbox::sql::{Columns, NOTIFICATION_COLUMNS, attempt_columns};
use crate::store::outbox::{Attempt, Notification, NotifyReason, Outbox, OutboxState};
use crate::store::sql::append_history;
use crate::store::{StoreError, StoreResult, events_json, from_millis, now_ms};
use crate::util::BoxFuture;

impl PostgresStore {
    /// Writes one notification per notifier named here each time a run parks, in the park's
    /// transaction, for a [`Deliverer`](crate::notify::Deliverer) (or a
    /// [`Worker`](crate::worker::Worker) given notifiers) to deliver: see
    /// [`outbox`](crate::store::outbox). Give every process that parks runs in the database
    /// the same names.
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

/// The notifications a park of `request_id` writes, as two parallel arrays (ids, notifiers)
/// for `unnest`; `None` without notifiers.
pub(super) fn park_arrays(state: &OutboxState, request_id: &str) -> Option<[Vec<String>; 2]> {
    (!state.names.is_empty()).then(|| {
        let ids = state
            .names
            .iter()
            .map(|name| Notification::id_for(request_id, NotifyReason::Parked, name))
            .collect();
        [ids, state.names.clone()]
    })
}

/// Inserts `rows` (an escalation's notifications) in `tx`, leaving any already written (the
/// same id) as it is.
pub(super) async fn insert_rows(
    tx: &tokio_postgres::Transaction<'_>,
    rows: Vec<Notification>,
) -> StoreResult<()> {
    for n in rows {
        let at = crate::store::millis(n.created_at);
        tx.execute(
            "INSERT INTO notifications (id, run_id, request_id, notifier, reason, created_at,
                 state, attempts, next_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $6)
             ON CONFLICT (id) DO NOTHING",
            &[
                &n.id,
                &n.run_id,
                &n.request_id,
                &n.notifier,
                &n.reason.as_str(),
                &at,
            ],
        )
        .await
        .map_err(|e| super::pg(&e))?;
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

fn read(r: &Row) -> Notification {
    Columns {
        id: r.get(0),
        run_id: r.get(1),
        request_id: r.get(2),
        notifier: r.get(3),
        reason: r.get(4),
        created_at: r.get(5),
        state: r.get(6),
        attempts: r.get(7),
        next_at: r.get(8),
        lease_owner: r.get(9),
        last_error: r.get(10),
    }
    .read()
}

impl Outbox for PostgresStore {
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
            let client = self.client().await?;
            let (now, until) = (now_ms(), lease_until(lease));
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let stmt = client
                .prepare_cached(&format!(
                    "UPDATE notifications SET attempts = attempts + 1, lease_owner = $2,
                         lease_until = $3
                     WHERE id IN (SELECT id FROM notifications
                         WHERE state = 'pending' AND next_at <= $1
                           AND (lease_until IS NULL OR lease_until < $1)
                           AND notifier = ANY($5)
                         ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED)
                     RETURNING {NOTIFICATION_COLUMNS}"
                ))
                .await
                .map_err(|e| pg(&e))?;
            let rows = client
                .query(&stmt, &[&now, &owner, &until, &limit, &notifiers])
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows.iter().map(read).collect())
        })
    }

    fn record_attempt<'a>(
        &'a self,
        n: &'a Notification,
        owner: &'a str,
        attempt: &'a Attempt,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let client = self.client().await?;
            let (state, next_at, error) = attempt_columns(attempt);
            let event = events_json(&[attempt.event(n, now_ms())]);
            let attempts = i64::from(n.attempts);
            // one statement: the row and the run's history change together
            let stmt = client
                .prepare_cached(&format!(
                    "WITH n AS (UPDATE notifications SET state = $1,
                         next_at = COALESCE($2, next_at), last_error = $3, lease_owner = NULL,
                         lease_until = NULL
                       WHERE id = $4 AND lease_owner = $5 AND attempts = $6 AND state = 'pending'
                       RETURNING run_id)
                     UPDATE runs SET {} WHERE run_id = (SELECT run_id FROM n)
                     RETURNING (SELECT count(*) FROM n)",
                    append_history("$7")
                ))
                .await
                .map_err(|e| pg(&e))?;
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
                [&state, &next_at, &error, &n.id, &owner, &attempts, &event];
            let changed = client.query(&stmt, &params).await.map_err(|e| pg(&e))?;
            if changed.is_empty() {
                // the run may be gone (deleted): then the row alone
                let only = client
                    .execute(
                        "UPDATE notifications SET state = $1, next_at = COALESCE($2, next_at),
                             last_error = $3, lease_owner = NULL, lease_until = NULL
                         WHERE id = $4 AND lease_owner = $5 AND attempts = $6
                           AND state = 'pending'
                           AND NOT EXISTS (SELECT 1 FROM runs WHERE run_id = $7)",
                        &[
                            &state, &next_at, &error, &n.id, &owner, &attempts, &n.run_id,
                        ],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                if only == 0 {
                    return Err(StoreError::LeaseLost {
                        run_id: n.run_id.clone(),
                    });
                }
            }
            Ok(())
        })
    }

    fn notifications<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE run_id = $1
                         ORDER BY created_at, id"
                    ),
                    &[&run_id],
                )
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows.iter().map(read).collect())
        })
    }

    fn next_notification_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let at: Option<i64> = client
                .query_one(
                    "SELECT MIN(GREATEST(next_at, COALESCE(lease_until, 0))) FROM notifications
                     WHERE state = 'pending'",
                    &[],
                )
                .await
                .map_err(|e| pg(&e))?
                .get(0);
            Ok(at.map(from_millis))
        })
    }

    fn wait_for_notifications(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.outbox.wake.wait(timeout))
    }
}
