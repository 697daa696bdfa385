//! The run-store conformance suite against `PostgresStore`, on a real server
//! (`TOOLNEXUS_PG_URL`; see `scripts/postgres.sh`): three pools onto one schema.

use std::sync::Arc;
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::{PostgresStore, RunStore};
use toolnexus_tests::pg::{
    RolledBack, SchemaGuard, client, fresh_schema, rolled_back, schema_versions, url,
};
use toolnexus_tests::store_conformance::{NOTIFIERS, Subject, retired_key, seal_key};

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
    Box::pin(async move {
        let url = url("store::postgres")?;
        let schema = fresh_schema("conf");
        let mut handles: Vec<Arc<dyn RunStore>> = Vec::new();
        for _ in 0..3 {
            let mut store = PostgresStore::connect_in_schema(&url, &schema)
                .await
                .unwrap()
                .with_lease(lease);
            if sealed {
                store = store.with_seal_keys(seal_key(), [retired_key()]);
            }
            if notify {
                store = store.with_notifiers(NOTIFIERS).unwrap();
            }
            handles.push(Arc::new(store));
        }
        let (raw_url, raw_schema) = (url.clone(), schema.clone());
        let (column_url, column_schema) = (url.clone(), schema.clone());
        Some(Subject {
            handles,
            write_column: Box::new(move |run_id, column, value| {
                let (url, schema) = (column_url.clone(), column_schema.clone());
                Box::pin(async move {
                    let client = client(&url).await;
                    let table = format!("\"{schema}\".runs");
                    let types: Vec<String> = client
                        .query(
                            "SELECT data_type FROM information_schema.columns
                             WHERE table_schema = $1 AND table_name = 'runs' AND column_name = $2",
                            &[&schema, &column],
                        )
                        .await
                        .unwrap()
                        .iter()
                        .map(|r| r.get(0))
                        .collect();
                    let sql = format!("UPDATE {table} SET {column} = $1 WHERE run_id = $2");
                    let n = match types.first().map(String::as_str) {
                        Some("text") => client.execute(&sql, &[&value, &run_id]).await,
                        Some("bigint") => match value.as_deref().map(str::parse::<i64>).transpose()
                        {
                            Ok(int) => client.execute(&sql, &[&int, &run_id]).await,
                            // a BIGINT column cannot hold text
                            Err(_) => return false,
                        },
                        other => panic!("no column {column} ({other:?})"),
                    };
                    match n {
                        Ok(n) => {
                            assert_eq!(n, 1, "no run {run_id}");
                            true
                        }
                        // NOT NULL and the like: the column refused the value
                        Err(e) if e.as_db_error().is_some() => false,
                        Err(e) => panic!("{e}"),
                    }
                })
            }),
            write_raw: Box::new(move |run_id, text| {
                let (url, schema) = (raw_url.clone(), raw_schema.clone());
                Box::pin(async move {
                    let n = client(&url)
                        .await
                        .execute(
                            &format!("UPDATE \"{schema}\".runs SET record = $1 WHERE run_id = $2"),
                            &[&text, &run_id],
                        )
                        .await
                        .unwrap();
                    assert_eq!(n, 1, "no run {run_id}");
                })
            }),
            guard: Some(Box::new(SchemaGuard { url, schema })),
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

/// Concurrent connects migrate once; a schema newer than this release's is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrations_run_once_and_refuse_newer() {
    let Some(url) = url("migrations_run_once_and_refuse_newer") else {
        return;
    };
    let schema = fresh_schema("mig");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let mut connects = Vec::new();
    for _ in 0..8 {
        let (url, schema) = (url.clone(), schema.clone());
        connects.push(tokio::spawn(async move {
            PostgresStore::connect_in_schema(&url, &schema)
                .await
                .map(drop)
        }));
    }
    for c in connects {
        c.await.unwrap().unwrap();
    }
    let client = client(&url).await;
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    client
        .execute(
            &format!(
                "INSERT INTO \"{schema}\".schema_version VALUES ({})",
                toolnexus::store::SCHEMA_VERSION + 1
            ),
            &[],
        )
        .await
        .unwrap();
    let err = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "run store database error: the database's schema is version {}, newer than this release's {}: upgrade toolnexus",
            toolnexus::store::SCHEMA_VERSION + 1,
            toolnexus::store::SCHEMA_VERSION
        )
    );
    let err = PostgresStore::connect_in_schema(&url, "bad-name")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`bad-name` is not a schema name this store accepts: use 1 to 40 ASCII letters, digits or `_`"
    );
}

/// A schema the previous release wrote (version 1, a parked run in it, no rules table) opens
/// with this release: it takes the rules table and keeps its run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_schema_takes_the_rules_table() {
    let Some(url) = url("a_version_1_schema_takes_the_rules_table") else {
        return;
    };
    let schema = fresh_schema("v1");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let client = client(&url).await;
    client
        .batch_execute(&format!(
            "DROP TABLE \"{schema}\".rules; DELETE FROM \"{schema}\".schema_version WHERE version > 1"
        ))
        .await
        .unwrap();
    assert_eq!(schema_versions(&client, &schema).await, vec![1]);
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    // and the history's index (version 3), which the rollback left in place
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    let rules = store.rules().unwrap();
    assert_eq!(rules.list_rules(10).await.unwrap(), vec![]);
}

/// A schema at version 2 (an answered run in it, no history index) opens with this release:
/// it takes the index (version 3), and the history lists the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_2_schema_takes_the_history_index() {
    let Some(url) = url("a_version_2_schema_takes_the_history_index") else {
        return;
    };
    let schema = fresh_schema("v2");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    let request = record.pending().clone();
    store.park(record.clone()).await.unwrap();
    store.submit(&request.accept("Ada"), "alice").await.unwrap();
    drop(store);
    let client = client(&url).await;
    client
        .batch_execute(&format!(
            "DROP INDEX \"{schema}\".runs_history; DELETE FROM \"{schema}\".schema_version WHERE version > 2"
        ))
        .await
        .unwrap();
    assert_eq!(schema_versions(&client, &schema).await, vec![1, 2]);
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    let indexed: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'runs_history'",
            &[&schema],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(indexed, 1);
    let page = store
        .list_history(&toolnexus::store::HistoryQuery::new())
        .await
        .unwrap();
    assert_eq!(page.runs.len(), 1);
    assert_eq!(page.runs[0].answered_by(), Some("alice"));
}

/// The attack: one damaged rule row of another principal (an unknown effect). `list_rules`
/// leaves it out, a page reports it with its rule id, reading it alone is `CorruptRule`
/// naming it, and alice's approval check still decides; a schema at version 3 takes the
/// rules' lookup indexes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_rule_row_never_breaks_a_listing_or_the_check() {
    use std::time::{SystemTime, UNIX_EPOCH};
    use toolnexus::remember::{RuleQuery, Scope, call_fingerprint};
    use toolnexus::store::StoreError;
    use toolnexus_tests::store_conformance::alices_rule;
    let Some(url) = url("a_damaged_rule_row_never_breaks_a_listing_or_the_check") else {
        return;
    };
    let schema = fresh_schema("dmgrule");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    let rules = store.rules().unwrap();
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let [good, bad] =
        [0, 1].map(|n| alices_rule(n, Scope::Args, false, start + Duration::from_millis(n)));
    rules.put_rule(&good).await.unwrap();
    rules.put_rule(&bad).await.unwrap();
    let client = client(&url).await;
    client
        .execute(
            &format!(
                "UPDATE \"{schema}\".rules SET effect = 'maybe', holder = 'bob' WHERE id = $1"
            ),
            &[&bad.id],
        )
        .await
        .unwrap();
    let listed: Vec<String> = rules
        .list_rules(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, std::slice::from_ref(&good.id));
    let page = rules.list_rules_page(None, 10).await.unwrap();
    assert_eq!(
        page.rules.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        std::slice::from_ref(&good.id)
    );
    assert_eq!(page.damaged.len(), 1);
    assert_eq!(
        (page.damaged[0].id.as_str(), page.damaged[0].reason.as_str()),
        (bad.id.as_str(), "unknown effect `maybe`")
    );
    let alone = rules.get_rule(&bad.id).await.unwrap_err();
    assert!(
        matches!(alone, StoreError::CorruptRule { ref id, .. } if *id == bad.id),
        "{alone:?}"
    );
    let fp = call_fingerprint("pay", &serde_json::json!({"amount": 0, "to": "mallory"}));
    let call = RuleQuery::new("pay", &fp, SystemTime::now()).for_principal(Some("alice"));
    assert_eq!(
        rules.decide(&call).await.unwrap().map(|r| r.id),
        Some(good.id)
    );
    drop(store);
    // back to version 3: the old index, none of the new
    client
        .batch_execute(&format!(
            "DROP INDEX \"{schema}\".rules_by_tool; DROP INDEX \"{schema}\".rules_by_fingerprint;
             CREATE INDEX rules_by_call ON \"{schema}\".rules (tool, reach, holder);
             DELETE FROM \"{schema}\".schema_version WHERE version > 3"
        ))
        .await
        .unwrap();
    drop(
        PostgresStore::connect_in_schema(&url, &schema)
            .await
            .unwrap(),
    );
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    let mut indexes: Vec<String> = client
        .query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'rules'",
            &[&schema],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    indexes.sort();
    assert_eq!(
        indexes,
        [
            "rules_by_age",
            "rules_by_fingerprint",
            "rules_by_tool",
            "rules_pkey"
        ]
    );
}

/// A schema at version 3 (a parked run in it, no workers' table) opens with this release: it
/// takes the table (version 5), keeps its run, and records heartbeats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_3_schema_takes_the_workers_table() {
    let Some(url) = url("a_version_3_schema_takes_the_workers_table") else {
        return;
    };
    let schema = fresh_schema("v3");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let client = client(&url).await;
    client
        .batch_execute(&format!(
            "DROP TABLE \"{schema}\".workers; DELETE FROM \"{schema}\".schema_version WHERE version > 3"
        ))
        .await
        .unwrap();
    assert_eq!(schema_versions(&client, &schema).await, vec![1, 2, 3]);
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    assert_eq!(store.last_worker_seen().await.unwrap(), None);
    let at = std::time::UNIX_EPOCH + Duration::from_millis(1_800_000_000_123);
    store.heartbeat("w-1", at).await.unwrap();
    let seen = store.last_worker_seen().await.unwrap().unwrap();
    assert_eq!((seen.worker.as_str(), seen.at), ("w-1", at));
}

/// A schema at version 5 (a parked run in it, no outbox) connects with this release: it takes
/// the `notifications` table (version 6), keeps its run, and a park writes its notifications.
#[tokio::test]
async fn a_version_5_schema_takes_the_outbox() {
    let Some(url) = url("store::postgres") else {
        return;
    };
    let (store, guard) = toolnexus_tests::pg::fresh_store(&url, "v5").await;
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    store.park(record.clone()).await.unwrap();
    drop(store);
    let client = client(&url).await;
    let schema = guard.schema.clone();
    client
        .batch_execute(&format!(
            "DROP TABLE \"{schema}\".notifications; DELETE FROM \"{schema}\".schema_version WHERE version > 5"
        ))
        .await
        .unwrap();
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap()
        .with_notifiers(["hook"])
        .unwrap();
    assert_eq!(
        schema_versions(&client, &schema).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    let info = store
        .park(
            toolnexus_tests::store_conformance::Agent::once()
                .halt()
                .await,
        )
        .await
        .unwrap();
    let ns = store
        .outbox()
        .unwrap()
        .notifications(&info.run_id)
        .await
        .unwrap();
    assert_eq!(ns.len(), 1);
    assert_eq!(ns[0].id, format!("{}.parked.hook", info.request_id));
}

/// A schema at version 6 (a parked run in it, no groups) connects with this release: it takes
/// the `approvers` and `escalate` columns (version 8), keeps its run (of no group: listed for
/// everyone, answered by a plain submit).
#[tokio::test]
async fn a_version_6_schema_takes_the_group_columns() {
    use toolnexus::store::PendingQuery;
    let Some(url) = url("store::postgres") else {
        return;
    };
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    let RolledBack {
        store,
        guard: _guard,
        ..
    } = rolled_back(&url, "v6", &record, |schema| {
        format!(
            "ALTER TABLE \"{schema}\".runs DROP COLUMN approvers, DROP COLUMN escalate;
             DELETE FROM \"{schema}\".schema_version WHERE version > 6"
        )
    })
    .await;
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

/// A schema at version 6 (a parked run in it, no `turn_requests`) connects with this release:
/// it takes the table (version 9), keeps its run, and a run parked with every request of its
/// turn takes their answers one by one.
#[tokio::test]
async fn a_version_6_schema_takes_the_turn_requests() {
    use toolnexus_tests::store_conformance::{assert_together_answers, halted_together};
    let Some(url) = url("store::postgres") else {
        return;
    };
    let record = toolnexus_tests::store_conformance::Agent::once()
        .halt()
        .await;
    let RolledBack {
        store,
        client,
        schema,
        guard: _guard,
    } = rolled_back(&url, "v6", &record, |schema| {
        format!(
            "DROP TABLE \"{schema}\".turn_requests; DELETE FROM \"{schema}\".schema_version WHERE version > 6"
        )
    })
    .await;
    assert!(store.get(record.run_id()).await.unwrap().is_some());
    assert_together_answers(&store, halted_together().await).await;
    let answered: i64 = client
        .query_one(
            &format!("SELECT count(*) FROM \"{schema}\".turn_requests WHERE answer IS NOT NULL"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(answered, 3);
}
