//! [`ConversationStore`] for [`PostgresStore`]: the `conversations` table (schema version 2).

use tokio_postgres::Row;

use super::{PostgresStore, pg};
use crate::store::conversation::{ConversationRow, changed};
use crate::store::sql::CONVERSATION_COLUMNS;
use crate::store::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, StoreResult,
};
use crate::util::BoxFuture;

fn raw(r: &Row) -> ConversationRow {
    ConversationRow {
        id: r.get(0),
        messages: r.get(1),
        turns: r.get(2),
        message_count: r.get(3),
        waiting_run: r.get(4),
        waiting_request: r.get(5),
        updated_at: r.get(6),
        version: r.get(7),
    }
}

impl PostgresStore {
    async fn conversation_where(
        &self,
        column: &str,
        key: &str,
    ) -> StoreResult<Option<Conversation>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE {column} = $1"
            ))
            .await
            .map_err(|e| pg(&e))?;
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
        Box::pin(self.conversation_where("id", id))
    }

    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(self.conversation_where("waiting_run", run_id))
    }

    fn put_conversation<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>> {
        Box::pin(async move {
            let row = ConversationRow::of(conversation)?;
            let sql = if row.expected() == 0 {
                "INSERT INTO conversations (id, messages, turns, message_count, waiting_run,
                     waiting_request, updated_at, version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING"
            } else {
                "UPDATE conversations SET messages = $2, turns = $3, message_count = $4,
                     waiting_run = $5, waiting_request = $6, updated_at = $7, version = $8::BIGINT
                 WHERE id = $1 AND version = $8::BIGINT - 1"
            };
            let client = self.client().await?;
            let stmt = client.prepare_cached(sql).await.map_err(|e| pg(&e))?;
            let n = client
                .execute(
                    &stmt,
                    &[
                        &row.id,
                        &row.messages,
                        &row.turns,
                        &row.message_count,
                        &row.waiting_run,
                        &row.waiting_request,
                        &row.updated_at,
                        &row.version,
                    ],
                )
                .await
                .map_err(|e| pg(&e))?;
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
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id > $1
                     ORDER BY id LIMIT $2"
                ))
                .await
                .map_err(|e| pg(&e))?;
            let rows = client
                .query(
                    &stmt,
                    &[
                        &after.unwrap_or_default(),
                        &i64::try_from(limit + 1).unwrap_or(i64::MAX),
                    ],
                )
                .await
                .map_err(|e| pg(&e))?;
            Ok(ConversationPage::new(
                rows.iter().map(|r| raw(r).info()).collect(),
                limit,
            ))
        })
    }

    fn delete_conversation<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let client = self.client().await?;
            let n = client
                .execute("DELETE FROM conversations WHERE id = $1", &[&id])
                .await
                .map_err(|e| pg(&e))?;
            Ok(n == 1)
        })
    }
}
