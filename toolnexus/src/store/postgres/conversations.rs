//! [`ConversationStore`](crate::store::ConversationStore) for [`PostgresStore`]: the
//! `conversations` table (schema version 2), written once for both SQL stores
//! ([`sql_conversation_store!`]) over running PostgreSQL's statements ([`ConversationRows`]).

use std::sync::LazyLock;

use super::answers::pg_params;
use super::{PostgresStore, pg};
use crate::store::StoreResult;
use crate::store::conversation::ConversationRow;
use crate::store::sql::{
    ConversationRows, ConversationSql, SqlParam, read_conversation_row, sql_conversation_store,
};
use crate::util::BoxFuture;

/// The conversations' statements in PostgreSQL's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("${n}"), |n| format!("${n}::BIGINT")));

impl ConversationRows for PostgresStore {
    fn conversation_sql(&self) -> &'static ConversationSql {
        &SQL
    }

    fn conversation_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
            let rows = client
                .query(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows
                .iter()
                .map(|r| read_conversation_row!(r, get))
                .collect())
        })
    }

    fn conversation_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<u64>> {
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
            client
                .execute(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))
        })
    }
}

sql_conversation_store!(PostgresStore);
