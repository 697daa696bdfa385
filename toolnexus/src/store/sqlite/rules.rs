//! [`RuleStore`](crate::remember::RuleStore) for [`SqliteStore`]: the `rules` table (schema
//! version 2), written once for both SQL stores ([`sql_rule_store!`]) over running SQLite's
//! statements ([`RuleRows`]).

use std::sync::LazyLock;

use rusqlite::params_from_iter;

use super::{SqliteStore, is_constraint};
use crate::store::StoreResult;
use crate::store::sql::{
    ListedRow, RuleRow, RuleRows, RuleSql, SqlParam, backend, listed, read_rule_row, sql_rule_store,
};
use crate::util::BoxFuture;

/// The rules' statements in SQLite's dialect.
pub(super) static SQL: LazyLock<RuleSql> =
    LazyLock::new(|| RuleSql::new(|n| format!("?{n}"), |n| format!("?{n}")));

/// A row's columns, or its id, `created_at` and why a column does not read (a damaged
/// row: text where a time belongs). A `created_at` that is no integer sorts before every
/// integer newest first; it lists as the newest (`i64::MAX`).
fn raw_listed(r: &rusqlite::Row<'_>) -> ListedRow {
    let raw = || -> rusqlite::Result<RuleRow> { Ok(read_rule_row!(r, get)) };
    listed(raw().map_err(|e| {
        let id = r
            .get::<_, rusqlite::types::Value>(0)
            .map(|v| match v {
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .unwrap_or_default();
        let ms = r.get::<_, i64>(9).unwrap_or(i64::MAX);
        (id, ms, format!("a column does not read: {e}"))
    }))
}

impl RuleRows for SqliteStore {
    fn rule_sql(&self) -> &'static RuleSql {
        &SQL
    }

    fn rule_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>> {
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params_from_iter(params.iter()), |r| Ok(raw_listed(r)))?
                        .collect()
                })
                .map_err(backend)
        }))
    }

    fn rule_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Option<u64>>> {
        Box::pin(self.call(move |conn| {
            match conn
                .prepare_cached(sql)
                .and_then(|mut stmt| stmt.execute(params_from_iter(params.iter())))
            {
                Ok(n) => Ok(Some(u64::try_from(n).unwrap_or(u64::MAX))),
                Err(e) if is_constraint(&e) => Ok(None),
                Err(e) => Err(backend(e)),
            }
        }))
    }
}

sql_rule_store!(SqliteStore);
