//! The PostgreSQL store's schema: versioned migrations, run on connect under an advisory lock.

use super::{PostgresStore, pg};
use crate::store::{StoreResult, due_migrations};

/// The schema, one entry per version: entry `n` migrates version `n` to `n + 1` (1: the
/// runs, 2: the conversations and the hosts waiting on runs, whose changes notify, 3: the
/// runs' indexes hold only the states their queries read, so finished runs leave them, 4: each
/// run's history, and the answered runs' index).
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE runs (
        run_id      TEXT PRIMARY KEY,
        request_id  TEXT NOT NULL,
        kind        TEXT NOT NULL,
        prompt      TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT,
        state       TEXT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT,
        version     BIGINT NOT NULL,
        claims      BIGINT NOT NULL,
        record      TEXT NOT NULL,
        answer      TEXT,
        checkpoint  TEXT,
        result      TEXT
    );
    CREATE UNIQUE INDEX runs_by_request ON runs (request_id);
    CREATE INDEX runs_by_state ON runs (state, created_at, run_id);
    CREATE INDEX runs_by_kind ON runs (state, kind, created_at, run_id);
    CREATE INDEX runs_by_lease ON runs (lease_until) WHERE state = 'claimed';",
    "CREATE TABLE conversations (
        id              TEXT PRIMARY KEY,
        messages        TEXT NOT NULL,
        turns           BIGINT NOT NULL,
        message_count   BIGINT NOT NULL,
        waiting_run     TEXT,
        waiting_request TEXT,
        updated_at      BIGINT NOT NULL,
        version         BIGINT NOT NULL
    );
    CREATE INDEX conversations_by_run ON conversations (waiting_run)
        WHERE waiting_run IS NOT NULL;
    CREATE TABLE run_waiters (
        run_id TEXT NOT NULL,
        waiter TEXT NOT NULL,
        since  BIGINT NOT NULL,
        PRIMARY KEY (run_id, waiter)
    );",
    // `runs_by_lease` (on `lease_until`, claimed runs only) is version 1's already
    crate::store::v3_state_indexes!(),
    crate::store::v4_history!(),
];

impl PostgresStore {
    pub(super) async fn migrate(&self) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| pg(&e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))",
            &[&format!("toolnexus-migrate-{}", self.schema)],
        )
        .await
        .map_err(|e| pg(&e))?;
        tx.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS \"{0}\";
             CREATE TABLE IF NOT EXISTS \"{0}\".schema_version (version BIGINT NOT NULL);",
            self.schema
        ))
        .await
        .map_err(|e| pg(&e))?;
        let current: i64 = tx
            .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
            .await
            .map_err(|e| pg(&e))?
            .get(0);
        for (version, sql) in due_migrations(current, MIGRATIONS)? {
            tx.batch_execute(sql).await.map_err(|e| pg(&e))?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES ($1)",
                &[&version],
            )
            .await
            .map_err(|e| pg(&e))?;
        }
        tx.commit().await.map_err(|e| pg(&e))
    }
}
