//! [`RuleStore`] for [`SqliteStore`]: the `rules` table (schema version 2).

use std::time::SystemTime;

use rusqlite::params;

use super::{SqliteStore, is_constraint};
use crate::remember::row::{ListedRow, RULE_COLUMNS, RuleRow, listed, readable};
use crate::remember::{Rule, RulePage, RuleQuery, RuleStore, decode_rule_cursor};
use crate::store::sql::{append_history, backend};
use crate::store::{RunEvent, StoreError, StoreResult, millis};
use crate::util::BoxFuture;

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<RuleRow> {
    Ok(RuleRow {
        id: r.get(0)?,
        effect: r.get(1)?,
        tool: r.get(2)?,
        scope: r.get(3)?,
        args: r.get(4)?,
        fingerprint: r.get(5)?,
        within: r.get(6)?,
        holder: r.get(7)?,
        until: r.get(8)?,
        created_at: r.get(9)?,
        answered_by: r.get(10)?,
        request_id: r.get(11)?,
        run_id: r.get(12)?,
    })
}

/// A row's columns, or its id, `created_at` and why a column does not read (a damaged
/// row: text where a time belongs). A `created_at` that is no integer sorts before every
/// integer newest first; it lists as the newest (`i64::MAX`).
fn raw_listed(r: &rusqlite::Row<'_>) -> ListedRow {
    listed(raw(r).map_err(|e| {
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

/// The rows `sql` selects (with `RULE_COLUMNS`) for `params`, each read or reported.
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

impl RuleStore for SqliteStore {
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>> {
        let row = RuleRow::of(rule);
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(&format!(
                "INSERT INTO rules ({RULE_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
            ))
            .and_then(|mut stmt| {
                stmt.execute(params![
                    row.id,
                    row.effect,
                    row.tool,
                    row.scope,
                    row.args,
                    row.fingerprint,
                    row.within,
                    row.holder,
                    row.until,
                    row.created_at,
                    row.answered_by,
                    row.request_id,
                    row.run_id
                ])
            })
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
                &crate::store::sql::candidate_rules_sql(|n| format!("?{n}")),
                params![tool, conversation, principal, at, fingerprint],
            )
        }))
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| {
            Ok(rules_of(
                conn,
                &format!("SELECT {RULE_COLUMNS} FROM rules WHERE id = ?1"),
                [&id],
            )?
            .into_iter()
            .next())
        }))
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(self.call(move |conn| {
            let rows = listed_of(
                conn,
                &format!("SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at, id LIMIT ?1"),
                [limit],
            )?;
            Ok(readable(rows.into_iter()))
        }))
    }

    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        let after = decode_rule_cursor(after);
        let size = limit.max(1);
        let take = i64::try_from(size + 1).unwrap_or(i64::MAX);
        Box::pin(self.call(move |conn| {
            let rows = match after.clone()? {
                None => listed_of(
                    conn,
                    &format!(
                        "SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at DESC, id DESC LIMIT ?1"
                    ),
                    params![take],
                )?,
                Some((ms, id)) => listed_of(
                    conn,
                    &format!(
                        "SELECT {RULE_COLUMNS} FROM rules
                         WHERE created_at < ?1 OR (created_at = ?1 AND id < ?2)
                         ORDER BY created_at DESC, id DESC LIMIT ?3"
                    ),
                    params![ms, id, take],
                )?,
            };
            Ok(RulePage::of(rows.into_iter(), size))
        }))
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| {
            let n = conn
                .prepare_cached("DELETE FROM rules WHERE id = ?1")
                .and_then(|mut stmt| stmt.execute([&id]))
                .map_err(backend)?;
            Ok(n > 0)
        }))
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        let now = millis(now);
        Box::pin(self.call(move |conn| {
            let n = conn
                .prepare_cached("DELETE FROM rules WHERE ends_at IS NOT NULL AND ends_at <= ?1")
                .and_then(|mut stmt| stmt.execute([now]))
                .map_err(backend)?;
            Ok(u64::try_from(n).unwrap_or(u64::MAX))
        }))
    }

    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let (run_id, event) = (run_id.to_owned(), event.json());
        Box::pin(self.call(move |conn| {
            let n = conn
                .prepare_cached(&format!(
                    "UPDATE runs SET {} WHERE run_id = ?1",
                    append_history("?2")
                ))
                .and_then(|mut stmt| stmt.execute(params![run_id, event]))
                .map_err(backend)?;
            Ok(n > 0)
        }))
    }
}
