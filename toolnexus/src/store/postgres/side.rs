//! The tables beside the runs (the rules and the conversations) for [`PostgresStore`]:
//! PostgreSQL running the statements both SQL stores share ([`SideSql`]); what the rules and
//! the conversations mean is written once ([`rule_store!`], [`conversation_store!`]).

use std::borrow::Cow;
use std::sync::LazyLock;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::answers::pg_params;
use super::{PostgresStore, pg};
use crate::store::cell::is_int;
use crate::store::conversation_rows::conversation_store;
use crate::store::rules::rule_store;
use crate::store::sql::{SideSql, SqlCols, SqlParam, SqlSide, sql_getters};
use crate::store::{Cell, StoreResult};
use crate::util::BoxFuture;

/// The statements in PostgreSQL's dialect: the event a rule's decision appends cast to text,
/// the version a conversation's save compares cast to an integer.
static SQL: LazyLock<SideSql> = LazyLock::new(|| {
    SideSql::new(
        |n| format!("${n}"),
        |n| format!("${n}::TEXT"),
        |n| format!("${n}::BIGINT"),
    )
});

impl SqlCols for Row {
    sql_getters!(try_get);

    fn shown(&self, k: usize) -> String {
        self.try_get(k).unwrap_or_default()
    }

    /// A run row's column `k` as its type gives it (the columns are typed).
    fn cell(&self, k: usize) -> Cell {
        if is_int(k) {
            self.try_get(k).ok().flatten().map_or(Cell::Null, Cell::Int)
        } else {
            self.try_get(k)
                .ok()
                .flatten()
                .map_or(Cell::Null, Cell::Text)
        }
    }
}

impl SqlSide for PostgresStore {
    fn side_sql(&self) -> &'static SideSql {
        &SQL
    }

    fn select<T: Send + 'static>(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
        read: fn(&dyn SqlCols) -> T,
    ) -> BoxFuture<'_, StoreResult<Vec<T>>> {
        let sql = sql.into();
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(&sql).await.map_err(|e| pg(&e))?;
            let rows = client
                .query(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows.iter().map(|r| read(r)).collect())
        })
    }

    fn execute(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'_, StoreResult<Option<u64>>> {
        let sql = sql.into();
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(&sql).await.map_err(|e| pg(&e))?;
            match client.execute(&stmt, &pg_params(&params)).await {
                Ok(n) => Ok(Some(n)),
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Ok(None),
                Err(e) => Err(pg(&e)),
            }
        })
    }
}

rule_store!(PostgresStore);
conversation_store!(PostgresStore);
