//! The PostgreSQL server the Postgres tests use: `TOOLNEXUS_PG_URL` (started by
//! `scripts/postgres.sh`). Without it a test prints a notice and skips; under `CI=true` a
//! missing URL fails the test.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The server's URL, or `None` (after a notice) when there is none outside CI.
///
/// # Panics
///
/// Under `CI=true` when `TOOLNEXUS_PG_URL` is not set: CI must run these tests.
pub fn url(test: &str) -> Option<String> {
    match std::env::var("TOOLNEXUS_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!(
                "TOOLNEXUS_PG_URL is not set, but CI=true: .ci/run starts PostgreSQL with scripts/postgres.sh"
            )
        }
        _ => {
            crate::skip::skipped(
                test,
                "PostgreSQL",
                "TOOLNEXUS_PG_URL is not set; eval \"$(scripts/postgres.sh start)\" to run them",
            );
            None
        }
    }
}

/// A schema name no other test of any process uses.
pub fn fresh_schema(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// A plain client of the server at `url` (its connection driven on a task of its own), for
/// what a test checks or changes behind a store's back.
///
/// # Panics
///
/// When the server cannot be reached.
pub async fn client(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connects to the test server");
    tokio::spawn(conn);
    client
}

/// A store in a fresh schema of its own (named from `prefix`), and the guard that drops the
/// schema.
///
/// # Panics
///
/// When the store cannot connect.
pub async fn fresh_store(
    url: &str,
    prefix: &str,
) -> (toolnexus::store::PostgresStore, SchemaGuard) {
    let guard = SchemaGuard {
        url: url.to_owned(),
        schema: fresh_schema(prefix),
    };
    let store = toolnexus::store::PostgresStore::connect_in_schema(url, &guard.schema)
        .await
        .expect("the store connects");
    (store, guard)
}

/// The schema versions a store recorded in `schema`, in order.
///
/// # Panics
///
/// When the table cannot be read.
pub async fn schema_versions(client: &tokio_postgres::Client, schema: &str) -> Vec<i64> {
    client
        .query(
            &format!("SELECT version FROM \"{schema}\".schema_version ORDER BY version"),
            &[],
        )
        .await
        .expect("schema_version reads")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Drops a schema (and everything in it) when dropped.
#[derive(Debug)]
pub struct SchemaGuard {
    /// The server.
    pub url: String,
    /// The schema.
    pub schema: String,
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // dropped inside a runtime: drop the schema from a thread of its own
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(conn);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
                    .await
                    .ok()
            })
        })
        .join();
    }
}

/// A schema a previous release wrote, opened by this one: what [`rolled_back`] hands over.
#[allow(missing_debug_implementations)] // the client is not Debug
pub struct RolledBack {
    /// This release's store on the schema, migrated.
    pub store: toolnexus::store::PostgresStore,
    /// A plain client of the server.
    pub client: tokio_postgres::Client,
    /// The schema's name.
    pub schema: String,
    /// Drops the schema.
    pub guard: SchemaGuard,
}

/// A fresh schema (named from `prefix`) with `record` parked in it, rolled back by the SQL
/// `rollback` writes for the schema's name (what a previous release left: its tables, and
/// `schema_version` cut back), then opened by this release, which must reach every version
/// again.
///
/// # Panics
///
/// When a step fails, or the reopened schema is not at every version up to
/// [`SCHEMA_VERSION`](toolnexus::store::SCHEMA_VERSION).
pub async fn rolled_back(
    url: &str,
    prefix: &str,
    record: &toolnexus::PendingRun,
    rollback: impl FnOnce(&str) -> String,
) -> RolledBack {
    use toolnexus::store::RunStore;
    let (store, guard) = fresh_store(url, prefix).await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let client = client(url).await;
    let schema = guard.schema.clone();
    client.batch_execute(&rollback(&schema)).await.unwrap();
    let store = toolnexus::store::PostgresStore::connect_in_schema(url, &schema)
        .await
        .unwrap();
    assert_eq!(
        schema_versions(&client, &schema).await,
        (1..=toolnexus::store::SCHEMA_VERSION).collect::<Vec<_>>()
    );
    RolledBack {
        store,
        client,
        schema,
        guard,
    }
}
