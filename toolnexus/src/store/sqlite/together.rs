//! The SQLite store's turn rows ([`TurnDriver`]): the `turn_requests` table (schema version
//! 7); an answer's run change and its turn row in one `IMMEDIATE` transaction.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::SqliteStore;
use super::answers::apply;
use crate::store::lifecycle::Change;
use crate::store::sql::backend;
use crate::store::together::{TurnDriver, TurnRow};
use crate::store::{StoreError, StoreResult};
use crate::util::BoxFuture;

impl TurnDriver for SqliteStore {
    fn turn_link<'a>(
        &'a self,
        run_id: &'a str,
        request_ids: Vec<String>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            for (position, request_id) in request_ids.iter().enumerate() {
                let holder: Option<String> = tx
                    .query_row(
                        "SELECT run_id FROM turn_requests WHERE request_id = ?1",
                        [request_id],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(backend)?;
                match holder {
                    Some(run) if run == run_id => {}
                    Some(_) => {
                        return Err(StoreError::Conflict(format!(
                            "request `{request_id}` is already the request of another run: request ids name one run"
                        )));
                    }
                    None => {
                        tx.execute(
                            "INSERT INTO turn_requests (request_id, run_id, position) VALUES (?1, ?2, ?3)",
                            params![request_id, run_id, i64::try_from(position).unwrap_or(i64::MAX)],
                        )
                        .map_err(backend)?;
                    }
                }
            }
            tx.commit().map_err(backend)
        }))
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> BoxFuture<'a, StoreResult<Option<String>>> {
        let request_id = request_id.to_owned();
        Box::pin(self.call(move |conn| {
            conn.query_row(
                "SELECT run_id FROM turn_requests WHERE request_id = ?1",
                [&request_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)
        }))
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Vec<TurnRow>>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT request_id, position, answer, answered_by, answered_at
                     FROM turn_requests WHERE run_id = ?1 ORDER BY position, request_id",
                )
                .map_err(backend)?;
            stmt.query_map([&run_id], |r| {
                Ok(TurnRow {
                    request_id: r.get(0)?,
                    position: r.get(1)?,
                    answer: r.get(2)?,
                    answered_by: r.get(3)?,
                    answered_at: r.get(4)?,
                })
            })
            .map_err(backend)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(backend)
        }))
    }

    fn turn_answer<'a>(
        &'a self,
        run_id: &'a str,
        change: Change,
        row: TurnRow,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let run_id = run_id.to_owned();
        let completes = change.set.state.is_some();
        Box::pin(async move {
            let kept = self
                .call(move |conn| {
                    let tx = conn
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(backend)?;
                    let answered = tx
                        .execute(
                            "UPDATE turn_requests SET answer = ?1, answered_by = ?2, answered_at = ?3
                             WHERE request_id = ?4 AND run_id = ?5 AND answer IS NULL",
                            params![
                                row.answer,
                                row.answered_by,
                                row.answered_at,
                                row.request_id,
                                run_id
                            ],
                        )
                        .map_err(backend)?;
                    // dropped without a commit: nothing kept
                    if answered != 1 || !apply(&tx, &change)? {
                        return Ok(false);
                    }
                    tx.commit().map_err(backend)?;
                    Ok(true)
                })
                .await?;
            if kept && completes {
                self.shared.work.notify();
            }
            Ok(kept)
        })
    }
}
