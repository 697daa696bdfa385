//! The `list_history` statement the SQL stores share.

use super::{INFO_COLUMNS, SqlParam};
use crate::store::history::ANSWERED_ONCE_SQL;
#[cfg(test)]
pub(crate) use crate::store::history::ANSWERED_ONCE_SQL as FILTER;
use crate::store::{HistoryQuery, StoreResult};

/// Schema version 3: the index `list_history` walks, newest first, holding only the runs its
/// filter admits ([`ANSWERED_ONCE_SQL`], the same text, so SQLite's planner uses it). Without
/// it a page reads and sorts the whole table: about 100 ms for 100,000 runs in SQLite, against
/// well under 1 ms with it. `IF NOT EXISTS`: a database rolled back by hand to an older
/// version keeps it.
pub(crate) const HISTORY_INDEX: &str = "CREATE INDEX IF NOT EXISTS runs_history
    ON runs (created_at, run_id) WHERE (state <> 'parked' OR claims > 0);";

/// The `list_history` statement for `query`, newest request first (one row more than a page,
/// to know whether another follows), with `placeholder(n)` naming the n-th parameter (from 1),
/// and `also` (SQL, or empty) a further condition every row listed meets. It reads the info
/// columns only ([`INFO_COLUMNS`]).
pub(crate) fn history_sql(
    query: &HistoryQuery,
    placeholder: fn(usize) -> String,
    also: &str,
) -> StoreResult<(String, Vec<SqlParam>)> {
    let mut sql = format!("SELECT {INFO_COLUMNS} FROM runs WHERE {ANSWERED_ONCE_SQL}");
    if !also.is_empty() {
        sql.push_str(" AND ");
        sql.push_str(also);
    }
    let mut params = Vec::new();
    if let Some(kind) = query.kind_filter() {
        params.push(SqlParam::Text(kind.to_owned()));
        sql.push_str(" AND kind = ");
        sql.push_str(&placeholder(params.len()));
    }
    if let Some((ms, id)) = query.cursor()? {
        params.push(SqlParam::Int(ms));
        let at = placeholder(params.len());
        params.push(SqlParam::Text(id));
        let id = placeholder(params.len());
        for piece in [" AND (created_at, run_id) < (", &at, ", ", &id, ")"] {
            sql.push_str(piece);
        }
    }
    let limit = i64::try_from(query.page_size().saturating_add(1)).unwrap_or(i64::MAX);
    sql.push_str(" ORDER BY created_at DESC, run_id DESC LIMIT ");
    sql.push_str(&limit.to_string());
    Ok((sql, params))
}

#[cfg(test)]
mod tests {
    use super::history_sql;
    use crate::store::HistoryQuery;

    /// The index holds exactly the rows the statement filters (the planner matches the text).
    #[test]
    fn the_index_holds_what_the_statement_lists() {
        assert!(super::HISTORY_INDEX.ends_with(&format!("WHERE {};", super::FILTER)));
    }

    #[test]
    fn the_statement_walks_newest_first_from_the_cursor() {
        let q = HistoryQuery::new()
            .kind("approval")
            .limit(2)
            .after("17:run-b");
        let (sql, params) = history_sql(&q, |n| format!("${n}"), "").unwrap();
        assert!(
            sql.ends_with(
                "WHERE (state <> 'parked' OR claims > 0) AND kind = $1 AND (created_at, run_id) < ($2, $3) ORDER BY created_at DESC, run_id DESC LIMIT 3"
            ),
            "{sql}"
        );
        assert_eq!(
            format!("{params:?}"),
            r#"[Text("approval"), Int(17), Text("run-b")]"#
        );
        let bad = history_sql(&HistoryQuery::new().after("x"), |n| format!("?{n}"), "");
        assert_eq!(
            bad.unwrap_err().to_string(),
            "`x` is not a cursor a history page returned"
        );
    }
}
