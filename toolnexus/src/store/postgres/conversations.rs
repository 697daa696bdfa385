//! [`ConversationStore`] for [`PostgresStore`]: the `conversations` table (schema version 2),
//! with the statements both SQL stores share ([`ConversationSql`]).

use std::sync::LazyLock;

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{PostgresStore, pg};
use crate::store::conversation::{ConversationRow, changed};
use crate::store::sql::{ConversationSql, conversation_values, read_conversation_row};
use crate::store::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, StoreResult,
};
use crate::util::BoxFuture;

/// The conversations' statements in PostgreSQL's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("${n}"), |n| format!("${n}::BIGINT")));

/// The parameters of a statement, as `tokio_postgres` takes them.
macro_rules! pg_params {
    ($($value:expr),*) => {
        &[$($value as &(dyn ToSql + Sync)),*]
    };
}

fn raw(r: &Row) -> ConversationRow {
    read_conversation_row!(r, get)
}

impl PostgresStore {
    /// How many rows `sql` changed with `params`.
    async fn change(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<u64> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        client.execute(&stmt, params).await.map_err(|e| pg(&e))
    }

    /// The rows `sql` selects for `params`.
    async fn conversation_rows(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<ConversationRow>> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        let rows = client.query(&stmt, params).await.map_err(|e| pg(&e))?;
        Ok(rows.iter().map(raw).collect())
    }

    /// The one conversation `sql` selects for `key`.
    async fn one_conversation(&self, sql: &str, key: &str) -> StoreResult<Option<Conversation>> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
        client
            .query_opt(&stmt, &[&key])
            .await
            .map_err(|e| pg(&e))?
            .map(|r| raw(&r).decode())
            .transpose()
    }
}

impl ConversationStore for PostgresStore {
    fn get_conversation<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(self.one_conversation(&SQL.get, id))
    }

    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(self.one_conversation(&SQL.of_run, run_id))
    }

    fn put_conversation<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>> {
        Box::pin(async move {
            let row = ConversationRow::of(conversation)?;
            let sql = if row.expected() == 0 {
                &SQL.insert
            } else {
                &SQL.update
            };
            let n = self
                .change(sql, conversation_values!(pg_params, row))
                .await?;
            if n == 1 {
                Ok(row.info())
            } else {
                Err(changed(&row))
            }
        })
    }

    fn list_conversations<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<ConversationPage>> {
        Box::pin(async move {
            let limit = limit.max(1);
            let take = i64::try_from(limit + 1).unwrap_or(i64::MAX);
            let rows = self
                .conversation_rows(&SQL.list, pg_params![&after.unwrap_or_default(), &take])
                .await?;
            Ok(ConversationPage::new(
                rows.iter().map(ConversationRow::info).collect(),
                limit,
            ))
        })
    }

    fn delete_conversation<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.change(&SQL.delete, &[&id]).await? == 1) })
    }
}
