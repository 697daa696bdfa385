//! The run-store conformance suite against `SqliteStore`: three connections onto one file,
//! as three processes would have.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus_tests::store_conformance::Subject;

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
        "run store database error: the database's schema is version 99, newer than this release's 1: upgrade toolnexus"
    );
}
