//! The PostgreSQL store's schema: versioned migrations, run on connect under an advisory lock.

use super::{PostgresStore, pg};
use crate::store::StoreResult;
use crate::store::sql::due_migrations;

/// The schema, one entry per version: entry `n` migrates version `n` to `n + 1` (1: the
/// initial schema (`sql::initial_schema!`), and the hosts waiting on runs, whose
/// changes notify; 2: the remembered rules (`sql::rules_schema!`); 3: the index of the answered
/// runs' history (`sql::HISTORY_INDEX`); 4: the approval check's indexes of the rules
/// (`sql::RULES_INDEX`); 5: the workers' heartbeats (`sql::workers_schema!`); 6: the notification outbox
/// (`outbox::sql::outbox_schema!`); 7: the votes (`sql::VOTES_SCHEMA`);
/// 8: the runs' group and escalation (`sql::GOVERNED_COLUMNS`);
/// 9: the requests of together runs (`together::together_schema!`)).
pub(super) const MIGRATIONS: &[&str] = &[
    concat!(
        crate::store::sql::initial_schema!(BIGINT),
        "
    CREATE TABLE run_waiters (
        run_id TEXT NOT NULL,
        waiter TEXT NOT NULL,
        since  BIGINT NOT NULL,
        PRIMARY KEY (run_id, waiter)
    );"
    ),
    crate::store::sql::rules_schema!(BIGINT),
    crate::store::sql::HISTORY_INDEX,
    crate::store::sql::RULES_INDEX,
    crate::store::sql::workers_schema!(BIGINT),
    crate::store::outbox::sql::outbox_schema!(BIGINT),
    crate::store::sql::VOTES_SCHEMA,
    // `IF NOT EXISTS`: a schema rolled back by hand to an older version keeps working
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS approvers TEXT;
     ALTER TABLE runs ADD COLUMN IF NOT EXISTS escalate TEXT;",
    crate::store::together::together_schema!(BIGINT),
];

// the list reaches the version this release writes
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
const _: () = assert!(MIGRATIONS.len() == crate::store::SCHEMA_VERSION as usize);

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
