//! [`RuleStore`] for [`PostgresStore`]: the `rules` table (schema version 2), with the
//! statements both SQL stores share ([`RuleSql`]).

use std::sync::LazyLock;
use std::time::SystemTime;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::{PostgresStore, pg};
use crate::remember::{Rule, RulePage, RuleQuery, RuleStore};
use crate::store::sql::{
    ListedRow, RuleRow, RuleSql, listed, page_of, read_rule_row, readable, rule_values,
};
use crate::store::{RunEvent, StoreError, StoreResult, millis};
use crate::util::BoxFuture;

/// The rules' statements in PostgreSQL's dialect.
static SQL: LazyLock<RuleSql> =
    LazyLock::new(|| RuleSql::new(|n| format!("${n}"), |n| format!("${n}::TEXT")));

/// The parameters of a statement, as `tokio_postgres` takes them.
macro_rules! pg_params {
    ($($value:expr),*) => {
        &[$($value as &(dyn ToSql + Sync)),*]
    };
}

/// A row's rule, or its id, `created_at` and why it does not read.
fn raw_listed(r: &Row) -> ListedRow {
    let raw = || -> Result<RuleRow, tokio_postgres::Error> { Ok(read_rule_row!(r, try_get)) };
    listed(raw().map_err(|e| {
        (
            r.try_get::<_, String>(0).unwrap_or_default(),
            r.try_get::<_, i64>(9).unwrap_or(i64::MAX),
            format!("a column does not read: {e}"),
        )
    }))
}

impl PostgresStore {
    /// The rules of the rows `sql` selects for `params`; a damaged one is
    /// [`StoreError::CorruptRule`].
    async fn rules_of(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<Rule>> {
        self.listed_of(sql, params)
            .await?
            .into_iter()
            .map(|(_, id, rule)| rule.map_err(|message| StoreError::CorruptRule { id, message }))
            .collect()
    }

    /// The rows `sql` selects for `params`, each read or reported.
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
    pub(super) async fn change(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<u64> {
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
                .prepare_cached(&SQL.insert)
                .await
                .map_err(|e| pg(&e))?;
            client
                .execute(&stmt, rule_values!(pg_params, row))
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
            let params = pg_params![
                &call.tool,
                &call.conversation,
                &call.principal,
                &at,
                &call.fingerprint
            ];
            self.rules_of(&SQL.candidates, params).await
        })
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        Box::pin(async move { Ok(self.rules_of(&SQL.get, &[&id]).await?.into_iter().next()) })
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = self.listed_of(&SQL.list, &[&limit]).await?;
            Ok(readable(rows.into_iter()))
        })
    }

    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        Box::pin(async move {
            let (after, size, take) = page_of(after, limit)?;
            let rows = match after {
                None => self.listed_of(&SQL.newest, &[&take]).await?,
                Some((ms, id)) => {
                    self.listed_of(&SQL.older, pg_params![&ms, &id, &take])
                        .await?
                }
            };
            Ok(RulePage::of(rows.into_iter(), size))
        })
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.change(&SQL.revoke, &[&id]).await? > 0) })
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(async move { self.change(&SQL.purge, &[&millis(now)]).await })
    }

    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let event = event.json();
            Ok(self.change(&SQL.note, &[&run_id, &event]).await? > 0)
        })
    }
}
