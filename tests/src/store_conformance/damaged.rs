//! Bad rows stay local: a row a worker cannot read leaves the claimable set as `damaged`
//! (with why, in its history) and never blocks the others.

use std::time::Duration;

use toolnexus::store::{RunEventKind, RunInfo, RunState, RunStore, StoreError};

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
