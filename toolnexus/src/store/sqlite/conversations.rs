//! [`ConversationStore`] for [`SqliteStore`]: the `conversations` table (schema version 2),
//! with the statements both SQL stores share ([`ConversationSql`]).

use std::sync::LazyLock;

use rusqlite::{Connection, OptionalExtension, params};

use super::SqliteStore;
use crate::store::conversation::{ConversationRow, changed};
use crate::store::sql::{ConversationSql, backend, conversation_values, read_conversation_row};
use crate::store::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, StoreResult,
};
use crate::util::BoxFuture;

/// The conversations' statements in SQLite's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("?{n}"), |n| format!("?{n}")));

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(read_conversation_row!(r, get?))
}

fn one(conn: &Connection, sql: &str, key: &str) -> StoreResult<Option<Conversation>> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row([key], raw).optional())
        .map_err(backend)?
        .map(|row| row.decode())
        .transpose()
}

fn put(conn: &Connection, row: &ConversationRow) -> StoreResult<ConversationInfo> {
    let sql = if row.expected() == 0 {
        &SQL.insert
    } else {
        &SQL.update
    };
    let changed_rows = conn
        .prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(conversation_values!(params, row)))
        .map_err(backend)?;
    if changed_rows == 1 {
        Ok(row.info())
    } else {
        Err(changed(row))
    }
}

impl ConversationStore for SqliteStore {
    fn get_conversation<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| one(conn, &SQL.get, &id)))
    }

    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| one(conn, &SQL.of_run, &run_id)))
    }

    fn put_conversation<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>> {
        Box::pin(async move {
            let row = ConversationRow::of(conversation)?;
            self.call(move |conn| put(conn, &row)).await
        })
    }

    fn list_conversations<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<ConversationPage>> {
        let (after, limit) = (after.unwrap_or_default().to_owned(), limit.max(1));
        let take = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        Box::pin(self.call(move |conn| {
            let rows = conn
                .prepare_cached(&SQL.list)
                .and_then(|mut stmt| {
                    stmt.query_map(params![after, take], raw)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(backend)?;
            Ok(ConversationPage::new(
                rows.iter().map(ConversationRow::info).collect(),
                limit,
            ))
        }))
    }

    fn delete_conversation<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        let id = id.to_owned();
        Box::pin(self.call(move |conn| {
            conn.execute(&SQL.delete, [&id])
                .map(|n| n == 1)
                .map_err(backend)
        }))
    }
}
