//! [`RuleStore`](crate::remember::RuleStore) for [`PostgresStore`]: the `rules` table (schema
//! version 2), written once for both SQL stores ([`sql_rule_store!`]) over running
//! PostgreSQL's statements ([`RuleRows`]).

use std::sync::LazyLock;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::answers::pg_params;
use super::{PostgresStore, pg};
use crate::store::StoreResult;
use crate::store::sql::{
    ListedRow, RuleRow, RuleRows, RuleSql, SqlParam, listed, read_rule_row, sql_rule_store,
};
use crate::util::BoxFuture;

/// The rules' statements in PostgreSQL's dialect.
static SQL: LazyLock<RuleSql> =
    LazyLock::new(|| RuleSql::new(|n| format!("${n}"), |n| format!("${n}::TEXT")));

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

impl RuleRows for PostgresStore {
    fn rule_sql(&self) -> &'static RuleSql {
        &SQL
    }

    fn rule_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
            let rows = client
                .query(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows.iter().map(raw_listed).collect())
        })
    }

    fn rule_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Option<u64>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
            match client.execute(&stmt, &pg_params(&params)).await {
                Ok(n) => Ok(Some(n)),
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Ok(None),
                Err(e) => Err(pg(&e)),
            }
        })
    }
}

sql_rule_store!(PostgresStore);
