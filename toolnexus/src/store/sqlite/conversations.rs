//! [`ConversationStore`](crate::store::ConversationStore) for [`SqliteStore`]: the
//! `conversations` table (schema version 2), written once ([`conversation_store!`]) over
//! SQLite running the statements both SQL stores share ([`ConversationSql`]).

use std::sync::LazyLock;

use rusqlite::{OptionalExtension, params, params_from_iter};

use super::SqliteStore;
use crate::store::conversation::ConversationRow;
use crate::store::conversation_rows::{By, ConversationRows, conversation_store};
use crate::store::sql::{ConversationSql, backend, read_conversation_row};
use crate::store::{Conversation, ConversationInfo, StoreResult};
use crate::util::BoxFuture;

/// The conversations' statements in SQLite's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("?{n}"), |n| format!("?{n}")));

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(read_conversation_row!(r, get?))
}

impl ConversationRows for SqliteStore {
    fn conversation_by<'a>(
        &'a self,
        by: By,
        key: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        let (sql, key) = (SQL.by(by), key.to_owned());
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| stmt.query_row([&key], raw).optional())
                .map_err(backend)?
                .map(|row| row.decode())
                .transpose()
        }))
    }

    fn save_conversation(
        &self,
        row: ConversationRow,
    ) -> BoxFuture<'_, StoreResult<Result<(), ConversationRow>>> {
        let (sql, params) = (SQL.save(&row), row.params());
        Box::pin(async move {
            let n = self
                .call(move |conn| {
                    conn.prepare_cached(sql)
                        .and_then(|mut stmt| stmt.execute(params_from_iter(params.iter())))
                        .map_err(backend)
                })
                .await?;
            Ok(if n == 1 { Ok(()) } else { Err(row) })
        })
    }

    fn conversations_after<'a>(
        &'a self,
        after: Option<&'a str>,
        take: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationInfo>>> {
        let after = after.unwrap_or_default().to_owned();
        let take = i64::try_from(take).unwrap_or(i64::MAX);
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(&SQL.list)
                .and_then(|mut stmt| {
                    stmt.query_map(params![after, take], |r| Ok(raw(r)?.info()))?
                        .collect()
                })
                .map_err(backend)
        }))
    }

    fn delete_conversation_row<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| {
            conn.execute(&SQL.delete, [&id])
                .map(|n| n == 1)
                .map_err(backend)
        }))
    }
}

conversation_store!(SqliteStore);
