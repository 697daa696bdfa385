//! The PostgreSQL store's turn rows ([`TurnDriver`]): the `turn_requests` table (schema
//! version 9), each step the shared statements (`together/sql.rs`); an answer's run change and its
//! turn row in one transaction.

use std::collections::HashMap;

use super::answers::{pg_params, placeholder};
use super::{PostgresStore, pg};
use crate::store::lifecycle::Change;
use crate::store::lifecycle::together::check_link;
use crate::store::sql::{change_sql, numbered};
use crate::store::together::sql;
use crate::store::together::{Step, TurnDriver, TurnRow};

impl TurnDriver for PostgresStore {
    fn turn_link<'a>(&'a self, run_id: &'a str, rows: Vec<TurnRow>) -> Step<'a, ()> {
        Box::pin(async move {
            let [(insert, values), (holders, ids)] = sql::link(run_id, &rows);
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| pg(&e))?;
            tx.execute(&numbered(&insert, placeholder), &pg_params(&values))
                .await
                .map_err(|e| pg(&e))?;
            let held = tx
                .query(&numbered(&holders, placeholder), &pg_params(&ids))
                .await
                .map_err(|e| pg(&e))?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<HashMap<String, String>, tokio_postgres::Error>>()
                .map_err(|e| pg(&e))?;
            // a refusal drops the transaction without a commit: nothing kept
            check_link(run_id, &rows, |id| held.get(id).map(String::as_str))?;
            tx.commit().await.map_err(|e| pg(&e))
        })
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> Step<'a, Option<String>> {
        Box::pin(sql::run_of(self, request_id))
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<TurnRow>> {
        Box::pin(sql::rows_of(self, run_id))
    }

    fn turn_answer<'a>(&'a self, run_id: &'a str, change: Change, row: TurnRow) -> Step<'a, bool> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| pg(&e))?;
            let answered = tx
                .execute(
                    &numbered(sql::ANSWER, placeholder),
                    &pg_params(&row.answer_params(run_id)),
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
