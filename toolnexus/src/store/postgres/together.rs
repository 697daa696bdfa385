//! The PostgreSQL store's turn rows ([`TurnDriver`]): the `turn_requests` table (schema
//! version 7); an answer's run change and its turn row in one transaction.

use super::answers::{pg_params, placeholder};
use super::{PostgresStore, pg};
use crate::store::lifecycle::Change;
use crate::store::sql::change_sql;
use crate::store::together::{TurnDriver, TurnRow};
use crate::store::{StoreError, StoreResult};
use crate::util::BoxFuture;

impl TurnDriver for PostgresStore {
    fn turn_link<'a>(
        &'a self,
        run_id: &'a str,
        request_ids: Vec<String>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| pg(&e))?;
            for (position, request_id) in request_ids.iter().enumerate() {
                let position = i64::try_from(position).unwrap_or(i64::MAX);
                let holder = tx
                    .query_one(
                        "WITH i AS (
                             INSERT INTO turn_requests (request_id, run_id, position)
                             VALUES ($1, $2, $3) ON CONFLICT (request_id) DO NOTHING
                             RETURNING run_id
                         )
                         SELECT run_id FROM i
                         UNION ALL SELECT run_id FROM turn_requests WHERE request_id = $1
                         LIMIT 1",
                        &[request_id, &run_id, &position],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                let holder: String = holder.get(0);
                if holder != run_id {
                    return Err(StoreError::Conflict(format!(
                        "request `{request_id}` is already the request of another run: request ids name one run"
                    )));
                }
            }
            tx.commit().await.map_err(|e| pg(&e))
        })
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> BoxFuture<'a, StoreResult<Option<String>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT run_id FROM turn_requests WHERE request_id = $1",
                    &[&request_id],
                )
                .await
                .map_err(|e| pg(&e))?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Vec<TurnRow>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT request_id, position, answer, answered_by, answered_at
                     FROM turn_requests WHERE run_id = $1 ORDER BY position, request_id",
                    &[&run_id],
                )
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows
                .iter()
                .map(|r| TurnRow {
                    request_id: r.get(0),
                    position: r.get(1),
                    answer: r.get(2),
                    answered_by: r.get(3),
                    answered_at: r.get(4),
                })
                .collect())
        })
    }

    fn turn_answer<'a>(
        &'a self,
        run_id: &'a str,
        change: Change,
        row: TurnRow,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| pg(&e))?;
            let answered = tx
                .execute(
                    "UPDATE turn_requests SET answer = $1, answered_by = $2, answered_at = $3
                     WHERE request_id = $4 AND run_id = $5 AND answer IS NULL",
                    &[
                        &row.answer,
                        &row.answered_by,
                        &row.answered_at,
                        &row.request_id,
                        &run_id,
                    ],
                )
                .await
                .map_err(|e| pg(&e))?;
            if answered != 1 {
                return Ok(false);
            }
            let sql = change_sql(&change, placeholder);
            // hosts waiting on the run hear of it (on commit)
            let changed = tx
                .query_opt(
                    &sql.update(&self.notify_expr("runs.run_id")),
                    &pg_params(&sql.params),
                )
                .await
                .map_err(|e| pg(&e))?;
            if changed.is_none() {
                // dropped without a commit: nothing kept
                return Ok(false);
            }
            tx.commit().await.map_err(|e| pg(&e))?;
            Ok(true)
        })
    }
}
