//! [`ConversationStore`](crate::store::ConversationStore) for [`SqliteStore`]: the
//! `conversations` table (schema version 2), written once for both SQL stores
//! ([`sql_conversation_store!`]) over running SQLite's statements ([`ConversationRows`]).

use std::sync::LazyLock;

use rusqlite::params_from_iter;

use super::SqliteStore;
use crate::store::StoreResult;
use crate::store::conversation::ConversationRow;
use crate::store::sql::{
    ConversationRows, ConversationSql, SqlParam, backend, read_conversation_row,
    sql_conversation_store,
};
use crate::util::BoxFuture;

/// The conversations' statements in SQLite's dialect.
static SQL: LazyLock<ConversationSql> =
    LazyLock::new(|| ConversationSql::new(|n| format!("?{n}"), |n| format!("?{n}")));

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(read_conversation_row!(r, get?))
}

impl ConversationRows for SqliteStore {
    fn conversation_sql(&self) -> &'static ConversationSql {
        &SQL
    }

    fn conversation_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>> {
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params_from_iter(params.iter()), raw)?
                        .collect()
                })
                .map_err(backend)
        }))
    }

    fn conversation_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<u64>> {
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| stmt.execute(params_from_iter(params.iter())))
                .map(|n| u64::try_from(n).unwrap_or(u64::MAX))
                .map_err(backend)
        }))
    }
}

sql_conversation_store!(SqliteStore);
