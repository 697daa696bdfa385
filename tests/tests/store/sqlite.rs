//! The run-store conformance suite against `SqliteStore`: three connections onto one file,
//! as three processes would have.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus_tests::store_conformance::{Agent, NOTIFIERS, Subject, retired_key, seal_key};

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn make(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, false, false)
}

fn make_sealed(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, true, false)
}

fn make_notifying(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, false, true)
}

fn make_with(lease: Duration, sealed: bool, notify: bool) -> BoxFuture<'static, Option<Subject>> {
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
            let mut store = SqliteStore::open(&path).await.unwrap().with_lease(lease);
            if sealed {
                store = store.with_seal_keys(seal_key(), [retired_key()]);
            }
            if notify {
                store = store.with_notifiers(NOTIFIERS).unwrap();
            }
            handles.push(Arc::new(store));
        }
        let column_path = path.clone();
        Some(Subject {
            handles,
            write_column: Box::new(move |run_id, column, value| {
                let path = column_path.clone();
                Box::pin(async move {
                    tokio::task::spawn_blocking(move || {
                        let conn = rusqlite::Connection::open(&path).unwrap();
                        // SQLite's columns hold any value: text stays text in an integer column
                        let n = conn
                            .execute(
                                &format!("UPDATE runs SET {column} = ?1 WHERE run_id = ?2"),
                                (&value, &run_id),
                            )
                            .unwrap();
                        assert_eq!(n, 1, "no run {run_id}");
                        true
                    })
                    .await
                    .unwrap()
                })
            }),
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
toolnexus_tests::store_conformance!(sealed: make_sealed);
toolnexus_tests::store_conformance!(outbox: make_notifying);
toolnexus_tests::store_conformance!(votes: make);
toolnexus_tests::store_conformance!(votes_sealed: make_sealed);
toolnexus_tests::store_conformance!(governed: make, make_notifying);
toolnexus_tests::store_conformance!(together: make);
toolnexus_tests::store_conformance!(together in together_sealed: make_sealed);

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
        format!(
            "run store database error: the database's schema is version 99, newer than this release's {}: upgrade toolnexus",
            toolnexus::store::SCHEMA_VERSION
        )
    );
}

/// A database the previous release wrote (schema version 1, a parked run in it, no rules
/// table) opens with this release: it takes the rules table, keeps its run, and keeps rules.
#[tokio::test]
async fn a_version_1_database_takes_the_rules_table() {
    let (dir, _guard) = temp_dir("v1");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    // back to what the previous release wrote: no rules table, version 1
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE rules; ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 1")
        .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    let rules = toolnexus::store::RunStore::rules(&store).unwrap();
    assert_eq!(rules.list_rules(10).await.unwrap(), vec![]);
    // and the history's index (version 3), which the rollback left in place
    assert_every_version(&rusqlite::Connection::open(&path).unwrap());
}

/// The database of `conn` holds every schema version of this release, once each.
fn assert_every_version(conn: &rusqlite::Connection) {
    let versions: Vec<i64> = conn
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        versions,
        (1..=toolnexus::store::SCHEMA_VERSION).collect::<Vec<_>>()
    );
}

/// A fresh directory for one test, removed on drop.
fn temp_dir(name: &str) -> (PathBuf, TempDir) {
    let dir = std::env::temp_dir().join(format!("toolnexus-sqlite-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    (dir.clone(), TempDir(dir))
}

/// A call that meets another process's write lock waits for it on the store's thread: the
/// runtime (one thread here) goes on meanwhile, and the call lands once the lock is released.
#[tokio::test]
async fn a_call_waits_for_another_process_lock_off_the_runtime() {
    let (dir, _guard) = temp_dir("locked");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();

    let record = Agent::once().halt().await;
    let run_id = record.run_id().to_owned();
    let parking = tokio::spawn({
        let store = store.clone();
        async move { store.park(record).await }
    });
    // were the call waiting in place, this timer could not fire before it
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!parking.is_finished(), "the park waits for the lock");
    other.execute_batch("COMMIT").unwrap();

    let info = parking.await.unwrap().unwrap();
    assert_eq!(info.run_id, run_id);
    let stored = store.get(&run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, toolnexus::store::RunState::Parked);
}

/// Calls that run in place never checkpoint, so the store's thread does: the write-ahead log
/// stops growing (2,000 parks write about 40 MB of log pages without checkpoints).
#[tokio::test]
async fn the_log_is_checkpointed_off_the_runtime() {
    let (dir, _guard) = temp_dir("checkpointed");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let agent = Agent::once();
    for _ in 0..2_000 {
        // a record per run: its fingerprint binds its run id and request id
        store.park(agent.halt().await).await.unwrap();
    }
    // every park landed (the first page holds 100 of them)
    let listed = store
        .list_pending(&toolnexus::store::PendingQuery::new())
        .await
        .unwrap();
    assert_eq!(listed.runs.len(), 100);
    let wal = std::fs::metadata(dir.join("runs.db-wal")).unwrap().len();
    assert!(wal < 16 << 20, "write-ahead log of {wal} bytes");
}

/// Calls of one store from many threads at once: those that find the in-place connection
/// taken go to the store's thread, and every one lands exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_of_one_store_all_land() {
    let (dir, _guard) = temp_dir("concurrent");
    let store = SqliteStore::open(dir.join("runs.db")).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let agent = Agent::once();
            for _ in 0..50 {
                // a record per run: its fingerprint binds its run id and request id
                let parked = agent.halt().await;
                let run_id = parked.run_id().to_owned();
                let claim_with = parked.pending().accept("Ada");
                store.park(parked).await.unwrap();
                let claim = store.claim(&claim_with, "worker").await.unwrap();
                assert_eq!(claim.run_id, run_id);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let conn = rusqlite::Connection::open(dir.join("runs.db")).unwrap();
    let claimed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM runs WHERE state = 'claimed' AND claims = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(claimed, 400);
}

/// A database at version 2 (an answered run in it, no history index) opens with this release:
/// it takes the index (version 3), and the history lists the run.
#[tokio::test]
async fn a_version_2_database_takes_the_history_index() {
    let (dir, _guard) = temp_dir("v2");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = Agent::once().halt().await;
    let request = record.pending().clone();
    store.park(record).await.unwrap();
    store.submit(&request.accept("Ada"), "alice").await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP INDEX runs_history; ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 2")
        .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_every_version(&conn);
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_history'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
    let page =
        toolnexus::store::RunStore::list_history(&store, &toolnexus::store::HistoryQuery::new())
            .await
            .unwrap();
    assert_eq!(page.runs.len(), 1);
    assert_eq!(page.runs[0].answered_by(), Some("alice"));
}

/// The attack: one damaged rule row of another principal (an unknown effect, text where
/// its time belongs). `list_rules` leaves it out, a page reports it with its rule id (not a
/// run's), reading it alone is `CorruptRule` naming it, and alice's approval check, which
/// never reads it, still decides.
#[tokio::test]
async fn a_damaged_rule_row_never_breaks_a_listing_or_the_check() {
    use std::time::{SystemTime, UNIX_EPOCH};
    use toolnexus::remember::{RuleQuery, Scope, call_fingerprint};
    use toolnexus::store::StoreError;
    use toolnexus_tests::store_conformance::alices_rule;
    let (dir, _guard) = temp_dir("damaged-rule");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let rules = RunStore::rules(&store).unwrap();
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let [good, bad_effect, bad_time] =
        [0, 1, 2].map(|n| alices_rule(n, Scope::Args, false, start + Duration::from_millis(n)));
    for rule in [&good, &bad_effect, &bad_time] {
        rules.put_rule(rule).await.unwrap();
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE rules SET effect = 'maybe', holder = 'bob' WHERE id = ?1",
        [&bad_effect.id],
    )
    .unwrap();
    conn.execute(
        "UPDATE rules SET created_at = 'soon', holder = 'carol' WHERE id = ?1",
        [&bad_time.id],
    )
    .unwrap();
    drop(conn);
    let listed: Vec<String> = rules
        .list_rules(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, std::slice::from_ref(&good.id));
    let page = rules.list_rules_page(None, 10).await.unwrap();
    assert_eq!(page.rules.len(), 1);
    let mut damaged: Vec<(String, String)> =
        page.damaged.into_iter().map(|d| (d.id, d.reason)).collect();
    damaged.sort();
    let mut expected = vec![bad_effect.id.clone(), bad_time.id.clone()];
    expected.sort();
    assert_eq!(
        damaged.iter().map(|d| d.0.clone()).collect::<Vec<_>>(),
        expected
    );
    assert!(
        damaged.iter().any(|d| d.1 == "unknown effect `maybe`"),
        "{damaged:?}"
    );
    assert!(
        damaged
            .iter()
            .any(|d| d.1.starts_with("a column does not read")),
        "{damaged:?}"
    );
    let alone = rules.get_rule(&bad_effect.id).await.unwrap_err();
    assert_eq!(
        alone.to_string(),
        format!(
            "rule `{}` has an unreadable row: unknown effect `maybe`",
            bad_effect.id
        )
    );
    assert!(matches!(alone, StoreError::CorruptRule { .. }));
    let fp = call_fingerprint("pay", &serde_json::json!({"amount": 0, "to": "mallory"}));
    let call = RuleQuery::new("pay", &fp, SystemTime::now()).for_principal(Some("alice"));
    assert_eq!(
        rules.decide(&call).await.unwrap().map(|r| r.id),
        Some(good.id)
    );
}

/// A database at version 3 (the approval check's old index, `rules_by_call`) opens with this
/// release: it takes the rules' lookup indexes (version 4) and drops the old one.
#[tokio::test]
async fn a_version_3_database_takes_the_rules_indexes() {
    let (dir, _guard) = temp_dir("v3");
    let path = dir.join("runs.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP INDEX rules_by_tool; DROP INDEX rules_by_fingerprint;
         CREATE INDEX rules_by_call ON rules (tool, reach, holder);
         ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 3",
    )
    .unwrap();
    drop(conn);
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rules' AND sql IS NOT NULL ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        indexes,
        ["rules_by_age", "rules_by_fingerprint", "rules_by_tool"]
    );
    assert_every_version(&conn);
}

/// A database at version 3 (a parked run in it, no workers' table) opens with this release:
/// it takes the table (version 5), keeps its run, and records heartbeats.
#[tokio::test]
async fn a_version_3_database_takes_the_workers_table() {
    let (dir, _guard) = temp_dir("v3-workers");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = Agent::once().halt().await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE workers; ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 3")
        .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_every_version(&conn);
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    assert_eq!(store.last_worker_seen().await.unwrap(), None);
    let at = std::time::UNIX_EPOCH + Duration::from_millis(1_800_000_000_123);
    store.heartbeat("w-1", at).await.unwrap();
    let seen = store.last_worker_seen().await.unwrap().unwrap();
    assert_eq!((seen.worker.as_str(), seen.at), ("w-1", at));
}

/// A database at version 5 (a parked run in it, no outbox) opens with this release: it takes
/// the `notifications` table (version 6), keeps its run, and a park writes its notifications.
#[tokio::test]
async fn a_version_5_database_takes_the_outbox() {
    let (dir, _guard) = temp_dir("v5");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = Agent::once().halt().await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE notifications; ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 5")
        .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path)
        .await
        .unwrap()
        .with_notifiers(["hook"])
        .unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_every_version(&conn);
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    let info = store.park(Agent::once().halt().await).await.unwrap();
    let outbox = store.outbox().unwrap();
    let ns = outbox.notifications(&info.run_id).await.unwrap();
    assert_eq!(ns.len(), 1);
    assert_eq!(ns[0].id, format!("{}.parked.hook", info.request_id));
}

/// A database at version 6 (a parked run in it, no groups) opens with this release: it takes
/// the `approvers` and `escalate` columns (version 8), keeps its run (of no group: listed for
/// everyone, answered by a plain submit), and a new run keeps its group.
#[tokio::test]
async fn a_version_6_database_takes_the_group_columns() {
    use toolnexus::store::PendingQuery;
    let (dir, _guard) = temp_dir("v6");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = Agent::once().halt().await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE runs DROP COLUMN approvers; ALTER TABLE runs DROP COLUMN escalate;
         DELETE FROM schema_version WHERE version > 6",
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_every_version(&conn);
    let page = store
        .list_pending(&PendingQuery::new().groups(["finance"]))
        .await
        .unwrap();
    assert_eq!(page.runs.len(), 1);
    assert_eq!(page.runs[0].approvers, None);
    let answer = record.pending().accept("Ada");
    assert_eq!(
        store.submit(&answer, "desk").await.unwrap().answered_by(),
        Some("desk")
    );
}

/// A database at version 6 (a parked run in it, no `turn_requests`) opens with this release:
/// it takes the table (version 9), keeps its run, and a run parked with every request of its
/// turn takes their answers one by one.
#[tokio::test]
async fn a_version_6_database_takes_the_turn_requests() {
    use toolnexus_tests::store_conformance::{assert_together_answers, halted_together};
    let (dir, _guard) = temp_dir("v6-turn");
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = Agent::once().halt().await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE turn_requests; ALTER TABLE runs DROP COLUMN approvers; \
         ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 6",
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_every_version(&conn);
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    assert_together_answers(&store, halted_together().await).await;
    let rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM turn_requests WHERE answer IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 3);
}
