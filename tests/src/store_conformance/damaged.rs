//! Bad rows stay local: a row a worker cannot read leaves the claimable set as `damaged`
//! (with why, in its history) and never blocks the others.

use std::time::Duration;

use toolnexus::store::{PendingQuery, RunEventKind, RunInfo, RunState, RunStore, StoreError};

use super::{Agent, Make, make_subject};

/// The row's columns as stored now (without decoding its record).
async fn info_of(store: &dyn RunStore, run_id: &str) -> RunInfo {
    store
        .info(run_id)
        .await
        .unwrap()
        .expect("the run is stored")
}

/// The attack: 100 answered runs whose records were damaged, ahead (older) of one good
/// answered run. Workers claiming the next run reach the good one, each damaged run becomes
/// `damaged` with a `damaged` event saying why, `get` of it is `Corrupt`, and no worker is
/// offered it again.
pub async fn a_hundred_damaged_rows_never_block_a_good_one(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let agent = Agent::once();
    let mut bad = Vec::new();
    for _ in 0..100 {
        let record = agent.halt().await;
        let answer = record.pending().accept("Ada");
        let info = store.park(record).await.unwrap();
        store.submit(&answer, "alice").await.unwrap();
        bad.push(info.run_id);
    }
    // the good run is the newest
    tokio::time::sleep(Duration::from_millis(5)).await;
    let good = agent.halt().await;
    let good_answer = good.pending().accept("Bob");
    let good_info = store.park(good).await.unwrap();
    store.submit(&good_answer, "bob").await.unwrap();
    for run_id in &bad {
        (s.write_raw)(run_id.clone(), "{\"version\":".to_owned()).await;
    }

    let mut claimed = None;
    for _ in 0..101 {
        if let Some(claim) = store.claim_next("worker-1").await.unwrap() {
            claimed = Some(claim);
            break;
        }
    }
    let claim = claimed.expect("the good run is claimed");
    assert_eq!(claim.run_id, good_info.run_id);
    assert_eq!(claim.answer, good_answer);
    assert!(store.claim_next("worker-2").await.unwrap().is_none());
    assert_eq!(store.waiting().await.unwrap(), 0);
    for run_id in &bad {
        let info = info_of(store, run_id).await;
        assert_eq!(info.state, RunState::Damaged, "{run_id}");
        assert_eq!(info.lease, None);
        let last = info.history.last().expect("a history");
        assert_eq!(last.event, RunEventKind::Damaged);
        assert_eq!(last.by.as_deref(), Some("worker-1"));
        let error = last.error.as_deref().unwrap_or_default();
        assert!(
            error.starts_with(&format!("run `{run_id}` has an unreadable record: ")),
            "{error}"
        );
        assert!(matches!(
            store.get(run_id).await,
            Err(StoreError::Corrupt { run_id: r, .. }) if &r == run_id
        ));
    }
    // an operator sees each of them, with the error the worker met and when
    let damaged = store.list_damaged(1000).await.unwrap();
    assert_eq!(damaged.len(), 100);
    let mut sorted = bad.clone();
    sorted.sort();
    assert_eq!(
        damaged
            .iter()
            .map(|d| d.run_id.as_str())
            .collect::<Vec<_>>(),
        sorted
    );
    for d in &damaged {
        assert_eq!(d.state, "damaged");
        assert!(d.at.is_some());
        assert!(
            d.reason
                .starts_with(&format!("run `{}` has an unreadable record: ", d.run_id)),
            "{d:?}"
        );
    }
    assert_eq!(store.list_damaged(7).await.unwrap().len(), 7);
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(
        store.finish(&claim, result).await.unwrap().state,
        RunState::Finished
    );
}

/// The attack: the record of a claimed run is damaged while its worker dies. Once the lease
/// runs out, the takeover marks it `damaged` at once (it is not held again for a lease) and
/// takes over the readable run behind it.
pub async fn a_damaged_claimed_row_leaves_the_takeover_set(make: Make) {
    let Some(s) = make_subject(make, Duration::from_millis(200)).await else {
        return;
    };
    let store = s.store();
    let agent = Agent::once();
    let bad = agent.halt().await;
    let bad_answer = bad.pending().accept("Ada");
    let bad_info = store.park(bad).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let good = agent.halt().await;
    let good_answer = good.pending().accept("Bob");
    let good_info = store.park(good).await.unwrap();
    store.claim(&bad_answer, "worker-1").await.unwrap();
    store.claim(&good_answer, "worker-1").await.unwrap();
    (s.write_raw)(bad_info.run_id.clone(), "[]".to_owned()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let taken = store
        .claim_next("worker-2")
        .await
        .unwrap()
        .expect("the good run");
    assert_eq!(taken.run_id, good_info.run_id);
    assert!(taken.taken_over);
    let info = info_of(store, &bad_info.run_id).await;
    assert_eq!(info.state, RunState::Damaged);
    assert_eq!(
        info.history.last().map(|e| e.event),
        Some(RunEventKind::Damaged)
    );
    // never offered again, even after another lease
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = store.take_over("worker-3").await.unwrap();
    assert_eq!(again.map(|c| c.run_id), Some(good_info.run_id));
    assert!(store.take_over("worker-3").await.unwrap().is_none());
}

/// Parks `n` runs of one agent, oldest first, a few ms apart; returns their records.
async fn park_runs(store: &dyn RunStore, n: usize) -> Vec<toolnexus::PendingRun> {
    let agent = Agent::once();
    let mut records = Vec::new();
    for _ in 0..n {
        let record = agent.halt().await;
        store.park(record.clone()).await.unwrap();
        records.push(record);
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    records
}

/// `get` of the run is `Corrupt` naming it, with a message that contains `expected`.
async fn assert_corrupt(store: &dyn RunStore, run_id: &str, expected: &str) {
    match store.get(run_id).await {
        Err(StoreError::Corrupt { run_id: r, message }) => {
            assert_eq!(r, run_id);
            assert!(message.contains(expected), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// The run is listed by `list_damaged` with a reason that contains `expected`.
async fn assert_listed_damaged(store: &dyn RunStore, run_id: &str, expected: &str) {
    let damaged = store.list_damaged(100).await.unwrap();
    let listed = damaged
        .iter()
        .find(|d| d.run_id == run_id)
        .unwrap_or_else(|| panic!("{run_id} not in {damaged:?}"));
    assert!(listed.reason.contains(expected), "{listed:?}");
}

/// The attack: the answer of an answered run is damaged (cut short) before a worker claims it.
/// The worker claims the good run behind it; the damaged one becomes `damaged` (the reason
/// names the answer), `get` of it is `Corrupt`, and `list_damaged` lists it for an operator.
pub async fn a_damaged_answer_stays_local(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let runs = park_runs(store, 2).await;
    let (bad, good) = (runs[0].run_id().to_owned(), runs[1].run_id().to_owned());
    for record in &runs {
        store
            .submit(&record.pending().accept("Ada"), "alice")
            .await
            .unwrap();
    }
    assert!((s.write_column)(bad.clone(), "answer", Some("{\"id\":".to_owned())).await);
    assert_corrupt(store, &bad, "answer: ").await;

    let claim = store
        .claim_next("worker-1")
        .await
        .unwrap()
        .expect("the good run");
    assert_eq!(claim.run_id, good);
    assert_eq!(info_of(store, &bad).await.state, RunState::Damaged);
    assert_listed_damaged(store, &bad, "answer: ").await;
    assert!(store.claim_next("worker-2").await.unwrap().is_none());
    assert!(
        store
            .list_damaged(100)
            .await
            .unwrap()
            .iter()
            .all(|d| d.run_id != good)
    );
}

/// The attack: the answer of an answered run is replaced by another answer to the same request,
/// unsealed (declined instead of accepted, say). A sealed store refuses it as `Corrupt`.
pub async fn an_unsealed_answer_in_a_sealed_store_is_refused(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let runs = park_runs(store, 1).await;
    let run_id = runs[0].run_id().to_owned();
    let request = runs[0].pending();
    store.submit(&request.accept("Ada"), "alice").await.unwrap();
    assert!(store.get(&run_id).await.is_ok());
    let forged = serde_json::to_string(&request.accept("Mallory")).unwrap();
    assert!((s.write_column)(run_id.clone(), "answer", Some(forged)).await);
    assert_corrupt(store, &run_id, "answer: not a sealed answer").await;
    assert!(store.claim_next("worker-1").await.unwrap().is_none());
    assert_listed_damaged(store, &run_id, "answer: not a sealed answer").await;
}

/// The attack: the checkpoint of a claimed run is damaged while its worker dies. Once the
/// lease runs out, the takeover marks it `damaged` (the reason names the checkpoint) and
/// takes over the readable run behind it.
pub async fn a_damaged_checkpoint_stays_local(make: Make) {
    let Some(s) = make_subject(make, Duration::from_millis(200)).await else {
        return;
    };
    let store = s.store();
    let runs = park_runs(store, 2).await;
    let (bad, good) = (runs[0].run_id().to_owned(), runs[1].run_id().to_owned());
    let mut claims = Vec::new();
    for record in &runs {
        let answer = record.pending().accept("Ada");
        claims.push(store.claim(&answer, "worker-1").await.unwrap());
    }
    for claim in &claims {
        store
            .checkpoint(claim, serde_json::json!({"turns": 1}))
            .await
            .unwrap();
    }
    assert!((s.write_column)(bad.clone(), "checkpoint", Some("[1,".to_owned())).await);
    assert_corrupt(store, &bad, "checkpoint: ").await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let taken = store
        .take_over("worker-2")
        .await
        .unwrap()
        .expect("the good run");
    assert_eq!(taken.run_id, good);
    assert_eq!(taken.checkpoint, Some(serde_json::json!({"turns": 1})));
    assert_eq!(info_of(store, &bad).await.state, RunState::Damaged);
    assert_listed_damaged(store, &bad, "checkpoint: ").await;
}

/// The attack: a parked run's indexed timestamp holds text (SQLite keeps any value in any
/// column). Listing reports that run as damaged, with its id, and lists the others on every
/// page; `get` and a claim of it are `Corrupt`; `list_damaged` lists it. A store whose columns
/// are typed (memory, PostgreSQL) cannot hold the damage at all: its column refuses the text,
/// and the listing is unchanged.
pub async fn a_damaged_timestamp_column_stays_local(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let runs = park_runs(store, 3).await;
    let ids: Vec<String> = runs.iter().map(|r| r.run_id().to_owned()).collect();
    let held = (s.write_column)(ids[1].clone(), "created_at", Some("yesterday".to_owned())).await;
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    let listed: Vec<&str> = page.runs.iter().map(|r| r.run_id.as_str()).collect();
    if !held {
        assert_eq!(listed, [&ids[0], &ids[1], &ids[2]]);
        assert!(page.damaged.is_empty());
        assert!(store.get(&ids[1]).await.unwrap().is_some());
        return;
    }
    assert_eq!(listed, [&ids[0], &ids[2]]);
    assert_eq!(page.damaged.len(), 1, "{page:?}");
    assert_eq!(page.damaged[0].run_id, ids[1]);
    assert!(
        page.damaged[0]
            .reason
            .contains("column `created_at` holds text (\"yesterday\")"),
        "{page:?}"
    );
    // one run a page: the cursor walks the readable runs
    let first = store
        .list_pending(&PendingQuery::new().limit(1))
        .await
        .unwrap();
    assert_eq!(first.runs[0].run_id, ids[0]);
    let next = first.next.clone().expect("a next page");
    let second = store
        .list_pending(&PendingQuery::new().limit(1).after(next))
        .await
        .unwrap();
    assert_eq!(second.runs[0].run_id, ids[2]);
    assert!(second.damaged.is_empty());
    assert_eq!(second.next, None);

    assert_corrupt(store, &ids[1], "column `created_at` holds text").await;
    match store
        .claim(&runs[1].pending().accept("Ada"), "worker-1")
        .await
    {
        Err(StoreError::Corrupt { run_id, .. }) => assert_eq!(run_id, ids[1]),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_listed_damaged(store, &ids[1], "column `created_at` holds text").await;
    // the others go on
    let claim = store
        .claim(&runs[2].pending().accept("Ada"), "worker-1")
        .await
        .unwrap();
    assert_eq!(claim.run_id, ids[2]);
}

/// A row whose state is none a run can be in (a damaged `state` column) is left out of every
/// listing and claim, `get` of it is `Corrupt`, and `list_damaged` lists it with why.
pub async fn a_run_in_an_unknown_state_is_listed_damaged(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let runs = park_runs(store, 2).await;
    let (bad, good) = (runs[0].run_id().to_owned(), runs[1].run_id().to_owned());
    assert!((s.write_column)(bad.clone(), "state", Some("limbo".to_owned())).await);
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(
        page.runs
            .iter()
            .map(|r| r.run_id.as_str())
            .collect::<Vec<_>>(),
        [good.as_str()]
    );
    assert_corrupt(store, &bad, "unknown state `limbo`").await;
    let damaged = store.list_damaged(100).await.unwrap();
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert_eq!(damaged[0].run_id, bad);
    assert_eq!(damaged[0].state, "limbo");
    assert_eq!(damaged[0].at, None);
    assert!(
        damaged[0].reason.contains("unknown state `limbo`"),
        "{damaged:?}"
    );
    assert!(store.claim_next("worker-1").await.unwrap().is_none());
}
