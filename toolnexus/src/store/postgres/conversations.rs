//! [`ConversationStore`](crate::store::ConversationStore) for [`PostgresStore`]: the
//! `conversations` table (schema version 2), written once ([`conversation_store!`]) over
//! PostgreSQL running the statements both SQL stores share ([`ConversationSql`]).

use std::sync::LazyLock;

use super::answers::pg_params;
use super::{PostgresStore, pg};
use crate::store::conversation::ConversationRow;
use crate::store::conversation_rows::{By, ConversationRows, conversation_store};
use crate::store::sql::{ConversationSql, read_conversation_row};
use crate::store::{Conversation, ConversationInfo, StoreResult};
use crate::util::BoxFuture;

/// The conversations' statements in PostgreSQL's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("${n}"), |n| format!("${n}::BIGINT")));

impl ConversationRows for PostgresStore {
    fn conversation_by<'a>(
        &'a self,
        by: By,
        key: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(async move {
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(SQL.by(by))
                .await
                .map_err(|e| pg(&e))?;
            client
                .query_opt(&stmt, &[&key])
                .await
                .map_err(|e| pg(&e))?
                .map(|r| read_conversation_row!(r, get).decode())
                .transpose()
        })
    }

    fn save_conversation(
        &self,
        row: ConversationRow,
    ) -> BoxFuture<'_, StoreResult<Result<(), ConversationRow>>> {
        Box::pin(async move {
            let params = row.params();
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(SQL.save(&row))
                .await
                .map_err(|e| pg(&e))?;
            let n = client
                .execute(&stmt, &pg_params(&params))
                .await
                .map_err(|e| pg(&e))?;
            Ok(if n == 1 { Ok(()) } else { Err(row) })
        })
    }

    fn conversations_after<'a>(
        &'a self,
        after: Option<&'a str>,
        take: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationInfo>>> {
        Box::pin(async move {
            let take = i64::try_from(take).unwrap_or(i64::MAX);
            let client = self.client().await?;
            let stmt = client.prepare_cached(&SQL.list).await.map_err(|e| pg(&e))?;
            let rows = client
                .query(&stmt, &[&after.unwrap_or_default(), &take])
                .await
                .map_err(|e| pg(&e))?;
            Ok(rows
                .iter()
                .map(|r| read_conversation_row!(r, get).info())
                .collect())
        })
    }

    fn delete_conversation_row<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let client = self.client().await?;
            let n = client
                .execute(SQL.delete.as_str(), &[&id])
                .await
                .map_err(|e| pg(&e))?;
            Ok(n == 1)
        })
    }
}

conversation_store!(PostgresStore);
