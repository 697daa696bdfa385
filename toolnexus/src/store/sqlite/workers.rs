//! The workers' heartbeats in SQLite: the `workers` table (schema version 4).

use std::time::SystemTime;

use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use crate::store::sql::backend;
use crate::store::{StoreResult, WorkerSeen, from_millis, millis};

impl SqliteStore {
    /// [`RunStore::heartbeat`](crate::store::RunStore::heartbeat): the worker's row keeps the
    /// latest of its heartbeats.
    pub(super) async fn beat(&self, worker: &str, at: SystemTime) -> StoreResult<()> {
        let (worker, at) = (worker.to_owned(), millis(at));
        self.call(move |conn| {
            conn.prepare_cached(
                "INSERT INTO workers (name, seen_at) VALUES (?1, ?2)
                 ON CONFLICT (name) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)",
            )
            .and_then(|mut stmt| stmt.execute(params![worker, at]))
            .map(drop)
            .map_err(backend)
        })
        .await
    }

    /// [`RunStore::last_worker_seen`](crate::store::RunStore::last_worker_seen).
    pub(super) async fn last_seen(&self) -> StoreResult<Option<WorkerSeen>> {
        self.call(|conn| {
            conn.prepare_cached(
                "SELECT name, seen_at FROM workers ORDER BY seen_at DESC, name DESC LIMIT 1",
            )
            .and_then(|mut stmt| {
                stmt.query_row([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                    .optional()
            })
            .map(|seen| seen.map(|(name, at)| WorkerSeen::new(name, from_millis(at))))
            .map_err(backend)
        })
        .await
    }
}
