//! Schema version 7 (the `votes` column of a run's row): a database or schema at version 6,
//! with a parked approval in it, opens with this release, takes the column, keeps its run
//! (no votes yet) and records votes on it.

use serde_json::json;
use toolnexus::store::{RunState, RunStore, SqliteStore};
use toolnexus::{Client, FnModel, FnTool, PendingRun, Reply, Request, ToolResult, Toolkit};
use toolnexus_tests::pg::{RolledBack, rolled_back, url};

/// A run parked on an approval that needs two approvers.
async fn two_approvals() -> PendingRun {
    let tool = FnTool::builder("pay")
        .description("Pays.")
        .handler(|_, ctx| async move {
            match ctx.answer() {
                None => ToolResult::suspended(Request::approval("Pay?").with_approvals(2)),
                Some(_) => ToolResult::success("paid"),
            }
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(tool).build().unwrap();
    let model = FnModel::new(|_| async { Reply::tool_call("pay", json!({})) });
    let client = Client::builder(model).model_name("m").build().unwrap();
    PendingRun::try_from(client.run("Pay.", &toolkit).await.unwrap()).unwrap()
}

/// What the migrated store must do with the run parked before it: read it, and count votes.
async fn votes_on(store: &dyn RunStore, record: &PendingRun) {
    let run = store.get(record.run_id()).await.unwrap().unwrap();
    assert!(run.votes.is_empty());
    assert_eq!(run.approvals_missing(), 2);
    let answer = record.pending().accept(json!({}));
    let info = store.submit(&answer, "bob").await.unwrap();
    assert_eq!(info.state, RunState::Parked);
    let run = store.get(record.run_id()).await.unwrap().unwrap();
    assert_eq!(run.votes.len(), 1);
    assert_eq!(run.votes[0].by, "bob");
    let info = store.submit(&answer, "carol").await.unwrap();
    assert_eq!(info.state, RunState::Answered);
}

#[tokio::test]
async fn a_version_6_sqlite_database_takes_the_votes_column() {
    let dir = std::env::temp_dir().join(format!("toolnexus-sqlite-v6-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let record = two_approvals().await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE runs DROP COLUMN votes; ALTER TABLE runs DROP COLUMN approvers; \
         ALTER TABLE runs DROP COLUMN escalate; DELETE FROM schema_version WHERE version > 6",
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, toolnexus::store::SCHEMA_VERSION);
    votes_on(&store, &record).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_version_6_postgres_schema_takes_the_votes_column() {
    let Some(url) = url("store::postgres") else {
        return;
    };
    let record = two_approvals().await;
    let RolledBack {
        store,
        guard: _guard,
        ..
    } = rolled_back(&url, "v6", &record, |schema| {
        format!(
            "ALTER TABLE \"{schema}\".runs DROP COLUMN votes; DELETE FROM \"{schema}\".schema_version WHERE version > 6"
        )
    })
    .await;
    votes_on(&store, &record).await;
}
