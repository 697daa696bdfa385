//! The run-store conformance suite against `SqliteStore`: three connections onto one file,
//! as three processes would have.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus_tests::store_conformance::{Agent, Subject};

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn make(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    static N: AtomicUsize = AtomicUsize::new(0);
    Box::pin(async move {
        let dir = std::env::temp_dir().join(format!(
            "toolnexus-sqlite-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("runs.db");
        let mut handles: Vec<Arc<dyn RunStore>> = Vec::new();
        for _ in 0..3 {
            handles.push(Arc::new(
                SqliteStore::open(&path).await.unwrap().with_lease(lease),
            ));
        }
        Some(Subject {
            handles,
            write_raw: Box::new(move |run_id, text| {
                let path = path.clone();
                Box::pin(async move {
                    tokio::task::spawn_blocking(move || {
                        let conn = rusqlite::Connection::open(&path).unwrap();
                        let n = conn
                            .execute(
                                "UPDATE runs SET record = ?1 WHERE run_id = ?2",
                                (&text, &run_id),
                            )
                            .unwrap();
                        assert_eq!(n, 1, "no run {run_id}");
                    })
                    .await
                    .unwrap();
                })
            }),
            guard: Some(Box::new(TempDir(dir))),
        })
    })
}

toolnexus_tests::store_conformance!(make);

/// A database whose schema is newer than this release's is refused on open, with the versions.
#[tokio::test]
async fn newer_schema_is_refused() {
    let dir = std::env::temp_dir().join(format!("toolnexus-sqlite-newer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _guard = TempDir(dir.clone());
    let path = dir.join("runs.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO schema_version (version) VALUES (99)", [])
        .unwrap();
    drop(conn);
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "run store database error: the database's schema is version 99, newer than this release's 2: upgrade toolnexus"
    );
}

/// A version-1 database (runs only) migrates to version 2 on open: its runs are kept and it
/// keeps conversations.
#[tokio::test]
async fn a_v1_database_migrates() {
    let dir = std::env::temp_dir().join(format!("toolnexus-sqlite-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _guard = TempDir(dir.clone());
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let parked = store.park(Agent::once().halt().await).await.unwrap();
    drop(store);
    // back to version 1, as the first release left it
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE conversations; DELETE FROM schema_version WHERE version = 2")
        .unwrap();

    let store = SqliteStore::open(&path).await.unwrap();
    let versions: Vec<i64> = conn
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(versions, vec![1, 2]);
    toolnexus_tests::store_conformance::migrated_from_v1(&store, &parked).await;
}
