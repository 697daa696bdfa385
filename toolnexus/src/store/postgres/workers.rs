//! The workers' heartbeats in PostgreSQL: the `workers` table (schema version 4).

use std::time::SystemTime;

use super::{PostgresStore, pg};
use crate::store::{StoreResult, WorkerSeen, from_millis, millis};

impl PostgresStore {
    /// [`RunStore::heartbeat`](crate::store::RunStore::heartbeat): the worker's row keeps the
    /// latest of its heartbeats.
    pub(super) async fn beat(&self, worker: &str, at: SystemTime) -> StoreResult<()> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO workers (name, seen_at) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET seen_at = GREATEST(workers.seen_at, excluded.seen_at)",
            )
            .await
            .map_err(|e| pg(&e))?;
        client
            .execute(&stmt, &[&worker, &millis(at)])
            .await
            .map_err(|e| pg(&e))?;
        Ok(())
    }

    /// [`RunStore::last_worker_seen`](crate::store::RunStore::last_worker_seen).
    pub(super) async fn last_seen(&self) -> StoreResult<Option<WorkerSeen>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT name, seen_at FROM workers ORDER BY seen_at DESC, name DESC LIMIT 1",
            )
            .await
            .map_err(|e| pg(&e))?;
        let row = client.query_opt(&stmt, &[]).await.map_err(|e| pg(&e))?;
        Ok(row.map(|r| WorkerSeen::new(r.get::<_, String>(0), from_millis(r.get(1)))))
    }
}
