//! Rows a store cannot use: a corrupt row stays local to its run, an older record version is
//! refused saying so.

use std::collections::BTreeSet;
use std::time::Duration;

use toolnexus::store::{PendingQuery, RunState, StoreError};

use super::{Agent, LEASE, Make, make_subject};

/// A damaged row gives a clear error naming its run; the other runs are unaffected, and the
/// damaged run is neither claimed nor lost.
pub async fn corrupt_rows_stay_local(make: Make) {
    let s = subject!(make, Duration::from_millis(200));
    let store = s.store();
    let agent = Agent::once();
    let bad = agent.halt().await;
    let good = agent.halt().await;
    let bad_answer = bad.pending().accept("Ada");
    let good_answer = good.pending().accept("Bob");
    let bad_info = store.park(bad).await.unwrap();
    let good_info = store.park(good).await.unwrap();
    (s.write_raw)(
        bad_info.run_id.clone(),
        "{\"version\":1,\"model\":".to_owned(),
    )
    .await;

    match store.get(&bad_info.run_id).await {
        Err(StoreError::Corrupt { run_id, message }) => {
            assert_eq!(run_id, bad_info.run_id);
            assert!(
                message.starts_with("invalid persisted run: not a pending-run record"),
                "{message}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(matches!(
        store.claim(&bad_answer, "worker-1").await,
        Err(StoreError::Corrupt { run_id, .. }) if run_id == bad_info.run_id
    ));
    // still parked, listed from its columns
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(
        pending
            .runs
            .iter()
            .map(|r| r.run_id.clone())
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([bad_info.run_id.clone(), good_info.run_id.clone()])
    );
    let claim = store.claim(&good_answer, "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    store.finish(&claim, result).await.unwrap();
    assert_eq!(
        store
            .get(&good_info.run_id)
            .await
            .unwrap()
            .unwrap()
            .info
            .state,
        RunState::Finished
    );
    // a damaged run never blocks takeovers of the others
    let third = agent.halt().await;
    let third_answer = third.pending().accept("Cy");
    let third_info = store.park(third).await.unwrap();
    let claim = store.claim(&third_answer, "worker-1").await.unwrap();
    (s.write_raw)(third_info.run_id.clone(), "[]".to_owned()).await;
    let fourth = agent.halt().await;
    let fourth_answer = fourth.pending().accept("Di");
    let fourth_info = store.park(fourth).await.unwrap();
    store.claim(&fourth_answer, "worker-1").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let taken = store
        .take_over("worker-2")
        .await
        .unwrap()
        .expect("the readable run");
    assert_eq!(taken.run_id, fourth_info.run_id);
    assert!(store.take_over("worker-2").await.unwrap().is_none());
    assert_eq!(claim.run_id, third_info.run_id);
}

/// A version-1 record, as the first release wrote it.
pub const RECORD_V1: &str = include_str!("../../fixtures/pending_run_v1.json");

/// A row holding a version-1 record (it carries no fingerprint, so it cannot be checked) is
/// refused as that run's corrupt row, saying why; the store's other runs work as before.
pub async fn older_record_version(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let parked = store.park(Agent::once().halt().await).await.unwrap();
    let other = Agent::once().halt().await;
    let request = other.pending().clone();
    store.park(other).await.unwrap();
    (s.write_raw)(parked.run_id.clone(), RECORD_V1.to_owned()).await;
    let err = store.get(&parked.run_id).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        StoreError::Corrupt {
            run_id: parked.run_id.clone(),
            message: "invalid persisted run: record version 1 was written by an earlier release and carries no fingerprint of its halted call, so it cannot be checked: start the run again".to_owned(),
        }
        .to_string()
    );
    let claim = store
        .claim(&request.accept("Ada"), "worker-1")
        .await
        .unwrap();
    let result = Agent::once()
        .resume(&claim.record, claim.answer.clone())
        .await;
    assert_eq!(result.text, r#"done: hello "Ada""#);
    store.finish(&claim, result).await.unwrap();
}
