//! The workers' queue: `claim_next` (takeovers first, then answered runs, never one run
//! twice), `release`, `next_due` and `wait_for_work`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::PendingRun;
use toolnexus::request::DeclineReason;
use toolnexus::store::{RunEventKind, RunState, StoreError};

use super::answers::kinds;
use super::{Agent, LEASE, Make, make_subject};

/// `claim_next` takes expired and lapsed runs first, then answered ones oldest first; many
/// workers at once never get one run twice.
pub async fn claim_next_order_and_one_owner(make: Make) {
    let s = subject!(make, Duration::from_millis(300));
    let store = s.store();
    let agent = Agent::once();
    let mut answered = Vec::new();
    for i in 0..12 {
        let record = agent.halt().await;
        let answer = record.pending().accept(format!("u{i}"));
        let info = store.park(record).await.unwrap();
        store.submit(&answer, "desk").await.unwrap();
        answered.push(info.run_id);
    }
    let expiring = Agent {
        expires_ms: Some(-1_000),
        ..Agent::once()
    }
    .halt()
    .await;
    let expired = store.park(expiring).await.unwrap();
    assert_eq!(store.expire().await.unwrap(), vec![expired.run_id.clone()]);

    let first = store.claim_next("w0").await.unwrap().expect("a run");
    assert_eq!(first.run_id, expired.run_id, "the expired run first");
    assert!(first.taken_over);
    assert_eq!(first.answer.reason, Some(DeclineReason::Expired));
    let second = store.claim_next("w0").await.unwrap().expect("a run");
    assert_eq!(second.run_id, answered[0], "then the oldest answered");
    assert!(!second.taken_over);

    // the rest, by 6 workers on every handle at once
    let mut tasks = Vec::new();
    for w in 0..6 {
        let store = Arc::clone(&s.handles[w % s.handles.len()]);
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(claim) = store.claim_next(&format!("w{}", w + 1)).await.unwrap() {
                got.push(claim);
            }
            got
        }));
    }
    let mut claims = vec![first, second];
    for task in tasks {
        claims.extend(task.await.unwrap());
    }
    let all: Vec<String> = claims[2..].iter().map(|c| c.run_id.clone()).collect();
    let unique: BTreeSet<_> = all.iter().cloned().collect();
    assert_eq!(unique.len(), all.len(), "a run was claimed twice: {all:?}");
    assert_eq!(unique, answered[1..].iter().cloned().collect());

    // a lapsed lease: the run goes to the next worker, as a takeover
    tokio::time::sleep(Duration::from_millis(400)).await;
    let taken = store.claim_next("w9").await.unwrap().expect("a lapsed run");
    assert!(taken.taken_over);
    assert_eq!(
        kinds(store, &taken.run_id).await.last(),
        Some(&RunEventKind::TakenOver)
    );
    let stale = claims
        .iter()
        .find(|c| c.run_id == taken.run_id)
        .expect("a run claimed before");
    let result = agent.resume(&stale.record, stale.answer.clone()).await;
    assert_eq!(
        store.finish(stale, result).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: taken.run_id.clone()
        }
    );
}

/// A released run is answered again, with its checkpoint, for the next worker at once; the
/// releasing claim is dead.
pub async fn release_hands_the_run_back(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let answer = record.pending().accept("Ada");
    let info = store.park(record).await.unwrap();
    store.submit(&answer, "alice").await.unwrap();
    let claim = store.claim_next("leaving").await.unwrap().unwrap();
    store.checkpoint(&claim, json!({"step": 1})).await.unwrap();
    store.release(&claim).await.unwrap();
    let row = store.get(&info.run_id).await.unwrap().unwrap();
    assert_eq!(row.info.state, RunState::Answered);
    assert_eq!(row.info.lease, None);
    assert_eq!(
        kinds(store, &info.run_id).await,
        [
            RunEventKind::Requested,
            RunEventKind::Answered,
            RunEventKind::Claimed,
            RunEventKind::Released
        ]
    );
    assert_eq!(row.info.history[3].by.as_deref(), Some("leaving"));
    assert_eq!(
        store.release(&claim).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: info.run_id.clone()
        }
    );
    let next = store.claim_next("staying").await.unwrap().unwrap();
    assert_eq!(next.run_id, info.run_id);
    assert_eq!(next.answer, answer);
    assert_eq!(next.checkpoint, Some(json!({"step": 1})));
    assert_eq!(next.token, 2);
    let result = agent.resume(&next.record, next.answer.clone()).await;
    assert_eq!(
        store.finish(&claim, result.clone()).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: info.run_id.clone()
        }
    );
    let done = store.finish(&next, result).await.unwrap();
    assert_eq!(done.resumed_by(), Some("staying"));
    // the claim handed back is no attempt
    assert_eq!(done.attempts, 1);

    // a run resuming with declined/expired goes back expired: workers take it first again
    let late = Agent {
        expires_ms: Some(-1_000),
        ..Agent::once()
    }
    .halt()
    .await;
    let late_info = store.park(late).await.unwrap();
    store.expire().await.unwrap();
    let claim = store.claim_next("leaving").await.unwrap().unwrap();
    assert_eq!(claim.run_id, late_info.run_id);
    store.release(&claim).await.unwrap();
    let row = store.get(&late_info.run_id).await.unwrap().unwrap();
    assert_eq!(row.info.state, RunState::Expired);
}

/// `next_due` is the nearest expiry of a parked request or lease end of a claim.
pub async fn next_due_is_the_nearest_deadline(make: Make) {
    let s = subject!(make, Duration::from_secs(30));
    let store = s.store();
    assert_eq!(store.next_due().await.unwrap(), None);
    let agent = Agent::once();
    let plain = agent.halt().await;
    let plain_answer = plain.pending().accept("Ada");
    store.park(plain).await.unwrap();
    assert_eq!(store.next_due().await.unwrap(), None);
    let later: PendingRun = Agent {
        expires_ms: Some(3_600_000),
        ..Agent::once()
    }
    .halt()
    .await;
    let later_at = store.park(later).await.unwrap().expires_at.unwrap();
    assert_eq!(store.next_due().await.unwrap(), Some(later_at));
    let claim = store.claim(&plain_answer, "w").await.unwrap();
    let due = store.next_due().await.unwrap().unwrap();
    assert_eq!(due, claim.lease.until);
    assert!(due < later_at);
}

/// A worker waiting for work on one handle wakes when an answer is submitted on another.
pub async fn wait_for_work_wakes_on_submit(make: Make) {
    let s = subject!(make);
    let agent = Agent::once();
    let record = agent.halt().await;
    let answer = record.pending().accept("Ada");
    s.store().park(record).await.unwrap();
    let waiter = Arc::clone(s.handles.last().unwrap());
    // a store may start listening on its first wait
    waiter.wait_for_work(Duration::ZERO).await;
    while tokio::time::timeout(
        Duration::from_millis(100),
        waiter.wait_for_work(Duration::from_secs(10)),
    )
    .await
    .is_ok()
    {
        // spare wake-ups from the park
    }
    let started = Instant::now();
    let waiting = tokio::spawn(async move {
        waiter.wait_for_work(Duration::from_secs(10)).await;
        Instant::now()
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let submitted = Instant::now();
    s.store().submit(&answer, "alice").await.unwrap();
    let woke = waiting.await.unwrap();
    assert!(woke >= submitted, "woke before the submit");
    assert!(
        woke - started < Duration::from_secs(5),
        "woke after {:?}, not on the submit",
        woke - started
    );
}
