//! What the two SQL stores keep of together runs: the `turn_requests` table (schema version 9)
//! and the statements of a [`TurnDriver`](super::TurnDriver)'s steps, the same text in both
//! stores but for how a parameter is named.

use super::TurnRow;
use crate::store::sql::{SqlCols, SqlParam, SqlSide, first, numbered};
use crate::store::{StoreError, StoreResult};

/// Schema version 9: the requests of together runs, one row each, with its answer once given
/// (sealed like the run's), the same SQL in both stores but for the integer type.
macro_rules! together_schema {
    ($int:tt) => {
        concat!(
            "CREATE TABLE IF NOT EXISTS turn_requests (
                request_id  TEXT PRIMARY KEY,
                run_id      TEXT NOT NULL,
                position    ",
            stringify!($int),
            " NOT NULL,
                answer      TEXT,
                answered_by TEXT,
                answered_at ",
            stringify!($int),
            "
            );
            CREATE INDEX IF NOT EXISTS turn_requests_by_run ON turn_requests (run_id, position);"
        )
    };
}
pub(crate) use together_schema;

// The statements, written with SQLite's `?n` ([`numbered`](crate::store::sql::numbered) for
// PostgreSQL's `$n`).

/// The run whose turn row request `?1` is.
pub(crate) const RUN_OF: &str = "SELECT run_id FROM turn_requests WHERE request_id = ?1";

/// The turn rows of run `?1`, in turn order.
pub(crate) const ROWS: &str = "SELECT request_id, position, answer, answered_by, answered_at
    FROM turn_requests WHERE run_id = ?1 ORDER BY position, request_id";

/// Deletes the turn rows of run `?1` (the run is deleted: its requests are free again).
pub(crate) const DELETE: &str = "DELETE FROM turn_requests WHERE run_id = ?1";

/// Keeps an answer on its row ([`TurnRow::answer_params`]) if it has none yet.
pub(crate) const ANSWER: &str = "UPDATE turn_requests
    SET answer = ?1, answered_by = ?2, answered_at = ?3
    WHERE request_id = ?4 AND run_id = ?5 AND answer IS NULL";

/// The two statements of a link of run `run_id`'s `rows`, with their parameters: the rows
/// inserted, each unless its request has a row already; then the run holding each of their
/// requests (`request_id, run_id`), for
/// [`check_link`](crate::store::lifecycle::together::check_link).
pub(crate) fn link(run_id: &str, rows: &[TurnRow]) -> [(String, Vec<SqlParam>); 2] {
    let mut insert = vec![SqlParam::Text(run_id.to_owned())];
    let mut ids = Vec::with_capacity(rows.len());
    for row in rows {
        insert.push(SqlParam::Text(row.request_id.clone()));
        insert.push(SqlParam::Int(row.position));
        ids.push(SqlParam::Text(row.request_id.clone()));
    }
    let values: Vec<String> = (1..=rows.len())
        .map(|i| format!("(?{}, ?1, ?{})", 2 * i, 2 * i + 1))
        .collect();
    let marks: Vec<String> = (1..=rows.len()).map(|i| format!("?{i}")).collect();
    [
        (
            format!(
                "INSERT INTO turn_requests (request_id, run_id, position) VALUES {}
                 ON CONFLICT (request_id) DO NOTHING",
                values.join(", ")
            ),
            insert,
        ),
        (
            format!(
                "SELECT request_id, run_id FROM turn_requests WHERE request_id IN ({})",
                marks.join(", ")
            ),
            ids,
        ),
    ]
}

impl TurnRow {
    /// The parameters of [`ANSWER`]: this row's answer, who gave it and when, then
    /// its request and its run `run_id`.
    pub(crate) fn answer_params(&self, run_id: &str) -> Vec<SqlParam> {
        vec![
            SqlParam::MaybeText(self.answer.clone()),
            SqlParam::MaybeText(self.answered_by.clone()),
            SqlParam::MaybeInt(self.answered_at),
            SqlParam::Text(self.request_id.clone()),
            SqlParam::Text(run_id.to_owned()),
        ]
    }
}

/// The turn row of row `r` (the columns of [`ROWS`]); why the first column that does not
/// read fails.
fn read_turn_row(r: &dyn SqlCols) -> Result<TurnRow, String> {
    Ok(TurnRow {
        request_id: r.text(0)?,
        position: r.int(1)?,
        answer: r.maybe_text(2)?,
        answered_by: r.maybe_text(3)?,
        answered_at: r.maybe_int(4)?,
    })
}

/// [`TurnDriver::turn_run`](super::TurnDriver::turn_run) of a SQL store, through its
/// [`SqlSide`].
pub(crate) async fn run_of<D: SqlSide>(d: &D, request_id: &str) -> StoreResult<Option<String>> {
    let sql = numbered(RUN_OF, d.side_sql().placeholder);
    first(d, sql, vec![SqlParam::Text(request_id.to_owned())], |r| {
        r.text(0)
    })
    .await
}

/// [`TurnDriver::turn_rows`](super::TurnDriver::turn_rows) of a SQL store, through its
/// [`SqlSide`].
pub(crate) async fn rows_of<D: SqlSide>(d: &D, run_id: &str) -> StoreResult<Vec<TurnRow>> {
    let sql = numbered(ROWS, d.side_sql().placeholder);
    let rows = d.select(sql, vec![SqlParam::Text(run_id.to_owned())], read_turn_row);
    rows.await?
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(StoreError::Backend)
}
