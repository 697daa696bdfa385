//! [`RuleStore`] for [`PostgresStore`]: the `rules` table (schema version 2).

use std::time::SystemTime;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::{PostgresStore, pg};
use crate::remember::row::{ListedRow, RULE_COLUMNS, RuleRow, listed, readable};
use crate::remember::{Rule, RulePage, RuleQuery, RuleStore, decode_rule_cursor};
use crate::store::sql::append_history;
use crate::store::{RunEvent, StoreError, StoreResult, millis};
use crate::util::BoxFuture;

fn raw(r: &Row) -> Result<RuleRow, tokio_postgres::Error> {
    Ok(RuleRow {
        id: r.try_get(0)?,
        effect: r.try_get(1)?,
        tool: r.try_get(2)?,
        scope: r.try_get(3)?,
        args: r.try_get(4)?,
        fingerprint: r.try_get(5)?,
        within: r.try_get(6)?,
        holder: r.try_get(7)?,
        until: r.try_get(8)?,
        created_at: r.try_get(9)?,
        answered_by: r.try_get(10)?,
        request_id: r.try_get(11)?,
        run_id: r.try_get(12)?,
    })
}

/// A row's rule, or its id, `created_at` and why it does not read.
fn raw_listed(r: &Row) -> ListedRow {
    listed(raw(r).map_err(|e| {
        (
            r.try_get::<_, String>(0).unwrap_or_default(),
            r.try_get::<_, i64>(9).unwrap_or(i64::MAX),
            format!("a column does not read: {e}"),
        )
    }))
}

impl PostgresStore {
    /// The rules of the rows `sql` selects (with `RULE_COLUMNS`) for `params`.
    async fn rules_of(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<Rule>> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        client
            .query(&stmt, params)
            .await
            .map_err(|e| pg(&e))?
            .iter()
            .map(|r| {
                let (_, id, rule) = raw_listed(r);
                rule.map_err(|message| StoreError::CorruptRule { id, message })
            })
            .collect()
    }

    /// The rows `sql` selects (with `RULE_COLUMNS`) for `params`, each read or reported.
    async fn listed_of(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<ListedRow>> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        Ok(client
            .query(&stmt, params)
            .await
            .map_err(|e| pg(&e))?
            .iter()
            .map(raw_listed)
            .collect())
    }

    /// How many rows `sql` changed with `params`.
    async fn change(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<u64> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        client.execute(&stmt, params).await.map_err(|e| pg(&e))
    }
}

impl RuleStore for PostgresStore {
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let row = RuleRow::of(rule);
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(&format!(
                    "INSERT INTO rules ({RULE_COLUMNS})
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                ))
                .await
                .map_err(|e| pg(&e))?;
            client
                .execute(
                    &stmt,
                    &[
                        &row.id,
                        &row.effect,
                        &row.tool,
                        &row.scope,
                        &row.args,
                        &row.fingerprint,
                        &row.within,
                        &row.holder,
                        &row.until,
                        &row.created_at,
                        &row.answered_by,
                        &row.request_id,
                        &row.run_id,
                    ],
                )
                .await
                .map_err(|e| {
                    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                        StoreError::Conflict(format!("rule `{}` is already kept", row.id))
                    } else {
                        pg(&e)
                    }
                })?;
            Ok(())
        })
    }

    fn candidate_rules<'a>(
        &'a self,
        call: &'a RuleQuery<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let at = millis(call.at);
            self.rules_of(
                &crate::store::sql::candidate_rules_sql(|n| format!("${n}")),
                &[
                    &call.tool,
                    &call.conversation,
                    &call.principal,
                    &at,
                    &call.fingerprint,
                ],
            )
            .await
        })
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        Box::pin(async move {
            let rules = self
                .rules_of(
                    &format!("SELECT {RULE_COLUMNS} FROM rules WHERE id = $1"),
                    &[&id],
                )
                .await?;
            Ok(rules.into_iter().next())
        })
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = self
                .listed_of(
                    &format!("SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at, id LIMIT $1"),
                    &[&limit],
                )
                .await?;
            Ok(readable(rows.into_iter()))
        })
    }

    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        Box::pin(async move {
            let size = limit.max(1);
            let take = i64::try_from(size + 1).unwrap_or(i64::MAX);
            let rows = match decode_rule_cursor(after)? {
                None => {
                    self.listed_of(
                        &format!(
                            "SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at DESC, id DESC LIMIT $1"
                        ),
                        &[&take],
                    )
                    .await?
                }
                Some((ms, id)) => {
                    self.listed_of(
                        &format!(
                            "SELECT {RULE_COLUMNS} FROM rules
                             WHERE created_at < $1 OR (created_at = $1 AND id < $2)
                             ORDER BY created_at DESC, id DESC LIMIT $3"
                        ),
                        &[&ms, &id, &take],
                    )
                    .await?
                }
            };
            Ok(RulePage::of(rows.into_iter(), size))
        })
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            Ok(self
                .change("DELETE FROM rules WHERE id = $1", &[&id])
                .await?
                > 0)
        })
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(async move {
            let now = millis(now);
            self.change(
                "DELETE FROM rules WHERE ends_at IS NOT NULL AND ends_at <= $1",
                &[&now],
            )
            .await
        })
    }

    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let event = event.json();
            let sql = format!(
                "UPDATE runs SET {} WHERE run_id = $1",
                append_history("$2::TEXT")
            );
            Ok(self.change(&sql, &[&run_id, &event]).await? > 0)
        })
    }
}
