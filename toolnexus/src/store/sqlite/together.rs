//! The SQLite store's turn rows ([`TurnDriver`]): the `turn_requests` table (schema version
//! 9), each step the shared statements (`together/sql.rs`) in one `IMMEDIATE` transaction where it
//! writes.

use std::collections::HashMap;

use rusqlite::params_from_iter;

use super::SqliteStore;
use super::answers::apply;
use super::connection::Immediate;
use crate::store::lifecycle::Change;
use crate::store::lifecycle::together::check_link;
use crate::store::sql::backend;
use crate::store::together::sql;
use crate::store::together::{Step, TurnDriver, TurnRow};

impl TurnDriver for SqliteStore {
    fn turn_link<'a>(&'a self, run_id: &'a str, rows: Vec<TurnRow>) -> Step<'a, ()> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| {
            let [(insert, values), (holders, ids)] = sql::link(&run_id, &rows);
            let tx = Immediate::begin(conn)?;
            tx.execute(&insert, params_from_iter(&values))
                .map_err(backend)?;
            let held: HashMap<String, String> = tx
                .prepare(&holders)
                .and_then(|mut stmt| {
                    stmt.query_map(params_from_iter(&ids), |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .map_err(backend)?;
            // a refusal drops the transaction without a commit: nothing kept
            check_link(&run_id, &rows, |id| held.get(id).map(String::as_str))?;
            tx.commit()
        }))
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> Step<'a, Option<String>> {
        Box::pin(sql::run_of(self, request_id))
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<TurnRow>> {
        Box::pin(sql::rows_of(self, run_id))
    }

    fn turn_answer<'a>(&'a self, run_id: &'a str, change: Change, row: TurnRow) -> Step<'a, bool> {
        let params = row.answer_params(run_id);
        let completes = change.set.state.is_some();
        Box::pin(async move {
            let kept = self
                .call(move |conn| {
                    let tx = Immediate::begin(conn)?;
                    let answered = tx
                        .execute(sql::ANSWER, params_from_iter(&params))
                        .map_err(backend)?;
                    // dropped without a commit: nothing kept
                    if answered != 1 || !apply(&tx, &change)? {
                        return Ok(false);
                    }
                    tx.commit()?;
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
