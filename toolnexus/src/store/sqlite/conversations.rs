//! [`ConversationStore`] for [`SqliteStore`]: the `conversations` table (schema version 2).

use rusqlite::{Connection, OptionalExtension, params};

use super::SqliteStore;
use crate::store::conversation::{ConversationRow, changed};
use crate::store::sql::{CONVERSATION_COLUMNS, backend};
use crate::store::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, StoreResult,
};
use crate::util::BoxFuture;

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(ConversationRow {
        id: r.get(0)?,
        messages: r.get(1)?,
        turns: r.get(2)?,
        message_count: r.get(3)?,
        waiting_run: r.get(4)?,
        waiting_request: r.get(5)?,
        updated_at: r.get(6)?,
        version: r.get(7)?,
    })
}

fn one_where(conn: &Connection, column: &str, key: &str) -> StoreResult<Option<Conversation>> {
    conn.prepare_cached(&format!(
        "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE {column} = ?1"
    ))
    .and_then(|mut stmt| stmt.query_row([key], raw).optional())
    .map_err(backend)?
    .map(|row| row.decode())
    .transpose()
}

fn put(conn: &Connection, row: &ConversationRow) -> StoreResult<ConversationInfo> {
    let sql = if row.expected() == 0 {
        "INSERT INTO conversations (id, messages, turns, message_count, waiting_run,
             waiting_request, updated_at, version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (id) DO NOTHING"
    } else {
        "UPDATE conversations SET messages = ?2, turns = ?3, message_count = ?4,
             waiting_run = ?5, waiting_request = ?6, updated_at = ?7, version = ?8
         WHERE id = ?1 AND version = ?8 - 1"
    };
    let changed_rows = conn
        .prepare_cached(sql)
        .and_then(|mut stmt| {
            stmt.execute(params![
                row.id,
                row.messages,
                row.turns,
                row.message_count,
                row.waiting_run,
                row.waiting_request,
                row.updated_at,
                row.version
            ])
        })
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
        Box::pin(self.call(move |conn| one_where(conn, "id", &id)))
    }

    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| one_where(conn, "waiting_run", &run_id)))
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
        Box::pin(self.call(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id > ?1
                     ORDER BY id LIMIT ?2"
                ))
                .map_err(backend)?;
            let rows = stmt
                .query_map(
                    params![after, i64::try_from(limit + 1).unwrap_or(i64::MAX)],
                    raw,
                )
                .map_err(backend)?
                .collect::<rusqlite::Result<Vec<_>>>()
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
            conn.execute("DELETE FROM conversations WHERE id = ?1", [&id])
                .map(|n| n == 1)
                .map_err(backend)
        }))
    }
}
