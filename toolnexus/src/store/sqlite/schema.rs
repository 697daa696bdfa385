//! The SQLite store's schema: versioned migrations, run on open in one `IMMEDIATE`
//! transaction (so concurrent opens migrate once).

use rusqlite::{Connection, TransactionBehavior};

use crate::store::{StoreResult, backend, due_migrations};

/// The schema, one entry per version: entry `n` migrates version `n` to `n + 1` (1: the
/// runs, 2: the conversations, 3: the runs' indexes hold only the states their queries read,
/// so a change of state writes fewer index pages and finished runs leave them, 4: each run's
/// history, and the answered runs' index).
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE runs (
        run_id      TEXT PRIMARY KEY,
        request_id  TEXT NOT NULL UNIQUE,
        kind        TEXT NOT NULL,
        prompt      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER,
        state       TEXT NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        version     INTEGER NOT NULL,
        claims      INTEGER NOT NULL,
        record      TEXT NOT NULL,
        answer      TEXT,
        checkpoint  TEXT,
        result      TEXT
    );
    CREATE INDEX runs_by_state ON runs (state, created_at, run_id);
    CREATE INDEX runs_by_kind ON runs (state, kind, created_at, run_id);
    CREATE INDEX runs_by_lease ON runs (state, lease_until);",
    "CREATE TABLE conversations (
        id              TEXT PRIMARY KEY,
        messages        TEXT NOT NULL,
        turns           INTEGER NOT NULL,
        message_count   INTEGER NOT NULL,
        waiting_run     TEXT,
        waiting_request TEXT,
        updated_at      INTEGER NOT NULL,
        version         INTEGER NOT NULL
    );
    CREATE INDEX conversations_by_run ON conversations (waiting_run)
        WHERE waiting_run IS NOT NULL;",
    concat!(
        "DROP INDEX IF EXISTS runs_by_lease;
        CREATE INDEX IF NOT EXISTS runs_claimed ON runs (lease_until)
            WHERE state = 'claimed';",
        crate::store::v3_state_indexes!()
    ),
    crate::store::v4_history!(),
];

pub(super) fn migrate(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(backend)?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(backend)?;
    for (version, sql) in due_migrations(current, MIGRATIONS)? {
        tx.execute_batch(sql).map_err(backend)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [version],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}
