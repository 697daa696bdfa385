//! [`RuleStore`] for [`SqliteStore`]: the `rules` table (schema version 2), with the
//! statements both SQL stores share ([`RuleSql`]).

use std::sync::LazyLock;
use std::time::SystemTime;

use rusqlite::params;

use super::{SqliteStore, is_constraint};
use crate::remember::{Rule, RulePage, RuleQuery, RuleStore};
use crate::store::sql::{
    ListedRow, RuleRow, RuleSql, backend, listed, page_of, read_rule_row, readable, rule_values,
};
use crate::store::{RunEvent, StoreError, StoreResult, millis};
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

/// The rows `sql` selects for `params`, each read or reported.
fn listed_of(
    conn: &rusqlite::Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<Vec<ListedRow>> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_map(params, |r| Ok(raw_listed(r)))?.collect())
        .map_err(backend)
}

/// The rules of the rows `sql` selects for `params`; a damaged one is
/// [`StoreError::CorruptRule`].
fn rules_of(
    conn: &rusqlite::Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<Vec<Rule>> {
    listed_of(conn, sql, params)?
        .into_iter()
        .map(|(_, id, rule)| rule.map_err(|message| StoreError::CorruptRule { id, message }))
        .collect()
}

/// How many rows `sql` changed with `params`.
fn change(
    conn: &rusqlite::Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<usize> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(backend)
}

impl RuleStore for SqliteStore {
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>> {
        let row = RuleRow::of(rule);
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(&SQL.insert)
                .and_then(|mut stmt| stmt.execute(rule_values!(params, row)))
                .map_err(|e| {
                    if is_constraint(&e) {
                        StoreError::Conflict(format!("rule `{}` is already kept", row.id))
                    } else {
                        backend(e)
                    }
                })?;
            Ok(())
        }))
    }

    fn candidate_rules<'a>(
        &'a self,
        call: &'a RuleQuery<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<Rule>>> {
        let (tool, conversation, principal, at, fingerprint) = (
            call.tool.to_owned(),
            call.conversation.map(str::to_owned),
            call.principal.map(str::to_owned),
            millis(call.at),
            call.fingerprint.to_owned(),
        );
        Box::pin(self.call(move |conn| {
            rules_of(
                conn,
                &SQL.candidates,
                params![tool, conversation, principal, at, fingerprint],
            )
        }))
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| Ok(rules_of(conn, &SQL.get, [&id])?.into_iter().next())))
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(
            self.call(move |conn| Ok(readable(listed_of(conn, &SQL.list, [limit])?.into_iter()))),
        )
    }

    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        let page = page_of(after, limit);
        Box::pin(self.call(move |conn| {
            let (after, size, take) = page.clone()?;
            let rows = match after {
                None => listed_of(conn, &SQL.newest, params![take])?,
                Some((ms, id)) => listed_of(conn, &SQL.older, params![ms, id, take])?,
            };
            Ok(RulePage::of(rows.into_iter(), size))
        }))
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| Ok(change(conn, &SQL.revoke, [&id])? > 0)))
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        let now = millis(now);
        Box::pin(self.call(move |conn| {
            Ok(u64::try_from(change(conn, &SQL.purge, [now])?).unwrap_or(u64::MAX))
        }))
    }

    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let (run_id, event) = (run_id.to_owned(), event.json());
        Box::pin(self.call(move |conn| Ok(change(conn, &SQL.note, params![run_id, event])? > 0)))
    }
}
