//! The run cases: park, claim, lease, expiry, paging, halts again, waiting for a change; rows
//! a store cannot use are in `rows`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::request::DeclineReason;
use toolnexus::store::{PendingQuery, RunState, StoreError};
use toolnexus::{Answer, RunStatus};

use super::{Agent, LEASE, Make, make_subject};

/// Park, look up by run id and request id, claim, resume, finish, delete.
pub async fn park_get_claim_finish(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let request = record.pending().clone();
    let before = SystemTime::now() - Duration::from_millis(5);
    let parked = store.park(record.clone()).await.unwrap();
    assert_eq!(parked.request_id, request.id);
    assert_eq!(parked.kind, "input");
    assert_eq!(parked.prompt, "What is your name?");
    assert_eq!(parked.state, RunState::Parked);
    assert_eq!(parked.lease, None);
    assert_eq!(parked.expires_at, None);
    assert!(parked.created_at >= before, "{parked:?}");

    let by_id = store.get(&parked.run_id).await.unwrap().expect("stored");
    assert_eq!(by_id.info, parked);
    assert_eq!(by_id.record, record);
    assert_eq!(by_id.answer, None);
    assert!(by_id.result.is_none());
    let by_request = store
        .get_by_request(&request.id)
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(by_request.info, parked);
    assert!(store.get("run-nope").await.unwrap().is_none());
    assert!(store.get_by_request("sus-nope").await.unwrap().is_none());

    let answer = request.accept("Ada");
    let claim = store.claim(&answer, "worker-1").await.unwrap();
    assert_eq!(claim.run_id, parked.run_id);
    assert_eq!(claim.record, record);
    assert_eq!(claim.answer, answer);
    assert_eq!(claim.lease.owner, "worker-1");
    assert!(!claim.taken_over);
    assert_eq!(claim.checkpoint, None);
    assert_eq!(claim.token, 1);
    let claimed = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(claimed.info.state, RunState::Claimed);
    assert_eq!(claimed.info.lease.as_ref().unwrap().owner, "worker-1");
    assert!(claimed.info.version > parked.version);
    assert_eq!(claimed.answer, Some(answer.clone()));
    assert!(
        store
            .list_pending(&PendingQuery::new())
            .await
            .unwrap()
            .runs
            .is_empty()
    );

    store.checkpoint(&claim, json!({"step": 1})).await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.text, r#"done: hello "Ada""#);
    let finished = store.finish(&claim, result.clone()).await.unwrap();
    assert_eq!(finished.state, RunState::Finished);
    assert_eq!(finished.lease, None);
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.result, Some(result.clone()));
    assert_eq!(stored.info.state, RunState::Finished);

    // the same answer again, or a finish by a stale claim, changes nothing
    match store.claim(&answer, "worker-2").await {
        Err(StoreError::AlreadyAnswered {
            run_id,
            request_id,
            state,
        }) => {
            assert_eq!(run_id, parked.run_id);
            assert_eq!(request_id, answer.id);
            assert_eq!(state, RunState::Finished);
        }
        other => panic!("expected AlreadyAnswered, got {other:?}"),
    }
    assert_eq!(
        store.finish(&claim, result).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: parked.run_id.clone()
        }
    );
    assert_eq!(
        store.claim(&Answer::ok("sus-nope"), "w").await.unwrap_err(),
        StoreError::NotFound {
            key: "sus-nope".to_owned()
        }
    );
    assert!(
        store
            .wait_finished(&parked.run_id, Duration::ZERO)
            .await
            .unwrap()
            .is_some()
    );

    assert!(store.delete(&parked.run_id).await.unwrap());
    assert!(store.get(&parked.run_id).await.unwrap().is_none());
    assert!(!store.delete(&parked.run_id).await.unwrap());
}

/// A record is parked once; a second park is a conflict that changes nothing.
pub async fn park_twice_is_a_conflict(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let parked = s.store().park(record.clone()).await.unwrap();
    let err = s.store().park(record).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "run `{}` is already stored: a parked run is parked once",
            parked.run_id
        )
    );
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info, parked);
}

/// 100 concurrent claimants of one request, over every handle: exactly one wins.
pub async fn concurrent_claims_one_winner(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    let parked = s.store().park(record).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..100 {
        let store = Arc::clone(&s.handles[i % s.handles.len()]);
        let answer = answer.clone();
        tasks.push(tokio::spawn(async move {
            store.claim(&answer, &format!("worker-{i}")).await
        }));
    }
    let mut winners = Vec::new();
    let mut refused = 0;
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(claim) => winners.push((i, claim)),
            Err(StoreError::AlreadyAnswered {
                run_id,
                request_id,
                state,
            }) => {
                assert_eq!(run_id, parked.run_id);
                assert_eq!(request_id, answer.id);
                assert_eq!(state, RunState::Claimed);
                refused += 1;
            }
            Err(other) => panic!("claimant {i}: unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one claimant wins");
    assert_eq!(refused, 99);
    let (i, claim) = &winners[0];
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.lease.unwrap().owner, format!("worker-{i}"));
    assert_eq!(claim.token, 1);
}

/// A claim whose lease runs out is taken over, with its answer and last checkpoint; the old
/// worker's claim is then dead.
pub async fn lease_expiry_and_takeover(make: Make) {
    let s = subject!(make, Duration::from_millis(300));
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let answer = record.pending().accept("Ada");
    let parked = store.park(record).await.unwrap();
    let mut first = store.claim(&answer, "worker-1").await.unwrap();
    store.checkpoint(&first, json!({"step": 1})).await.unwrap();
    assert!(
        store.take_over("worker-2").await.unwrap().is_none(),
        "the lease holds"
    );

    tokio::time::sleep(Duration::from_millis(450)).await;
    let taken = s.handles[s.handles.len() - 1]
        .take_over("worker-2")
        .await
        .unwrap()
        .expect("the lease ran out");
    assert_eq!(taken.run_id, parked.run_id);
    assert!(taken.taken_over);
    assert_eq!(taken.answer, answer);
    assert_eq!(taken.checkpoint, Some(json!({"step": 1})));
    assert_eq!(taken.lease.owner, "worker-2");
    assert_eq!(taken.token, 2);
    assert!(store.take_over("worker-3").await.unwrap().is_none());

    let lost = StoreError::LeaseLost {
        run_id: parked.run_id.clone(),
    };
    assert_eq!(
        store
            .checkpoint(&first, json!({"step": 2}))
            .await
            .unwrap_err(),
        lost
    );
    assert_eq!(store.renew(&mut first).await.unwrap_err(), lost);
    let result = agent.resume(&taken.record, taken.answer.clone()).await;
    assert_eq!(
        store.finish(&first, result.clone()).await.unwrap_err(),
        lost
    );
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(
        stored.checkpoint,
        Some(json!({"step": 1})),
        "the dead claim wrote nothing"
    );

    let done = store.finish(&taken, result).await.unwrap();
    assert_eq!(done.state, RunState::Finished);
}

/// A claim renewed before its lease runs out is not taken over.
pub async fn renewed_lease_is_kept(make: Make) {
    let s = subject!(make, Duration::from_millis(400));
    let store = s.store();
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    store.park(record).await.unwrap();
    let mut claim = store.claim(&answer, "worker-1").await.unwrap();
    let first_until = claim.lease.until;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        store.renew(&mut claim).await.unwrap();
    }
    assert!(claim.lease.until > first_until);
    assert!(store.take_over("worker-2").await.unwrap().is_none());
}

/// A request past `expiresAt` refuses its answer; the run resumes with `declined/expired`.
pub async fn expiry(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let expired_agent = Agent {
        expires_ms: Some(-10_000),
        ..Agent::once()
    };
    let lasting = Agent {
        expires_ms: Some(3_600_000),
        ..Agent::once()
    };
    let late = expired_agent.halt().await;
    let swept = expired_agent.halt().await;
    let fine = lasting.halt().await;
    let late_answer = late.pending().accept("Ada");
    let late_info = store.park(late).await.unwrap();
    assert!(late_info.expires_at.unwrap() < SystemTime::now());
    let swept_info = store.park(swept).await.unwrap();
    let fine_info = store.park(fine).await.unwrap();

    assert_eq!(
        store.claim(&late_answer, "worker-1").await.unwrap_err(),
        StoreError::Expired {
            run_id: late_info.run_id.clone()
        }
    );
    let late_row = store.get(&late_info.run_id).await.unwrap().unwrap();
    assert_eq!(late_row.info.state, RunState::Expired);
    assert_eq!(
        late_row.answer,
        Some(Answer::decline(
            &late_info.request_id,
            DeclineReason::Expired
        ))
    );
    // a second answer to it is refused the same way
    assert!(matches!(
        store.claim(&late_answer, "worker-2").await,
        Err(StoreError::Expired { .. })
    ));

    assert_eq!(
        store.expire().await.unwrap(),
        vec![swept_info.run_id.clone()]
    );
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    assert_eq!(
        store
            .get(&fine_info.run_id)
            .await
            .unwrap()
            .unwrap()
            .info
            .state,
        RunState::Parked
    );

    let mut resumed = BTreeSet::new();
    while let Some(claim) = store.take_over("sweeper").await.unwrap() {
        assert!(!claim.answer.ok);
        assert_eq!(claim.answer.reason, Some(DeclineReason::Expired));
        let result = expired_agent
            .resume(&claim.record, claim.answer.clone())
            .await;
        assert_eq!(result.text, "done: declined/expired: What is your name?");
        store.finish(&claim, result).await.unwrap();
        resumed.insert(claim.run_id);
    }
    assert_eq!(
        resumed,
        BTreeSet::from([late_info.run_id.clone(), swept_info.run_id.clone()])
    );
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(
        pending.runs.iter().map(|r| &r.run_id).collect::<Vec<_>>(),
        [&fine_info.run_id]
    );
}

/// Pages of `list_pending` cover every parked run once, in order; filters by kind, age and
/// expiry.
pub async fn paging_and_filters(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let mut approvals = BTreeSet::new();
    let mut expiring = BTreeSet::new();
    let mut all = Vec::new();
    for i in 0..25 {
        let agent = Agent {
            kind: if i % 3 == 0 { "approval" } else { "input" }.to_owned(),
            expires_ms: (i % 5 == 0).then_some(600_000),
            ..Agent::once()
        };
        let info = store.park(agent.halt().await).await.unwrap();
        if i % 3 == 0 {
            approvals.insert(info.run_id.clone());
        }
        if i % 5 == 0 {
            expiring.insert(info.run_id.clone());
        }
        all.push(info);
    }
    // one claimed run is not pending
    let claimed = all.remove(7);
    let answer = Answer::accept(&claimed.request_id, "x");
    store.claim(&answer, "w").await.unwrap();
    approvals.remove(&claimed.run_id);
    expiring.remove(&claimed.run_id);

    let mut seen = Vec::new();
    let mut query = PendingQuery::new().limit(10);
    let mut pages = 0;
    loop {
        let page = store.list_pending(&query).await.unwrap();
        pages += 1;
        assert!(page.runs.len() <= 10);
        seen.extend(page.runs);
        match page.next {
            Some(cursor) => query = PendingQuery::new().limit(10).after(cursor),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut expected = all.clone();
    expected.sort_by(|a, b| (a.created_at, &a.run_id).cmp(&(b.created_at, &b.run_id)));
    assert_eq!(seen, expected);

    let ids = |runs: Vec<toolnexus::store::RunInfo>| -> BTreeSet<String> {
        runs.into_iter().map(|r| r.run_id).collect()
    };
    let page = store
        .list_pending(&PendingQuery::new().kind("approval"))
        .await
        .unwrap();
    assert_eq!(ids(page.runs), approvals);
    let page = store
        .list_pending(
            &PendingQuery::new().expiring_before(SystemTime::now() + Duration::from_secs(3600)),
        )
        .await
        .unwrap();
    assert_eq!(ids(page.runs), expiring);
    let page = store
        .list_pending(&PendingQuery::new().older_than(Duration::from_secs(3600)))
        .await
        .unwrap();
    assert!(page.runs.is_empty());
    let page = store
        .list_pending(
            &PendingQuery::new().created_before(SystemTime::now() + Duration::from_secs(1)),
        )
        .await
        .unwrap();
    assert_eq!(page.runs.len(), 24);
    assert_eq!(page.next, None);
    let err = store
        .list_pending(&PendingQuery::new().after("garbage"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "`garbage` is not a cursor a page returned");
}

/// A run that halts again after its claim parks again on its new request, same run id.
pub async fn halts_again_after_its_claim(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let record = agent.halt().await;
    let first = record.pending().clone();
    let parked = store.park(record).await.unwrap();
    let claim = store.claim(&first.accept("Ada"), "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.status, RunStatus::Pending);
    let second = result.pending.clone().unwrap();
    assert_ne!(second.id, first.id);
    let again = store.finish(&claim, result).await.unwrap();
    assert_eq!(again.run_id, parked.run_id);
    assert_eq!(again.state, RunState::Parked);
    assert_eq!(again.request_id, second.id);
    assert_eq!(again.lease, None);
    assert!(again.version > parked.version);

    let stored = store.get_by_request(&second.id).await.unwrap().unwrap();
    assert_eq!(stored.info, again);
    assert_eq!(
        stored.answer, None,
        "the used answer is gone with its request"
    );
    assert_eq!(stored.checkpoint, None);
    // the first request still finds its run (which waits on the second now), and an answer to
    // it was answered already
    let by_first = store.get_by_request(&first.id).await.unwrap().unwrap();
    assert_eq!(by_first.info, again);
    assert_eq!(
        store.claim(&first.accept("Ada"), "w").await.unwrap_err(),
        StoreError::AlreadyAnswered {
            run_id: parked.run_id.clone(),
            request_id: first.id.clone(),
            state: RunState::Parked
        }
    );
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(pending.runs, vec![again]);

    let claim = store
        .claim(&second.accept("Bob"), "worker-2")
        .await
        .unwrap();
    assert_eq!(claim.token, 2);
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.text, r#"done: hello "Bob""#);
    assert_eq!(
        store.finish(&claim, result).await.unwrap().state,
        RunState::Finished
    );
}

/// A host waiting on a run learns when an answer claims it.
pub async fn wait_change_wakes_on_claim(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    let parked = s.store().park(record).await.unwrap();
    let waiter = Arc::clone(&s.handles[s.handles.len() - 1]);
    let run_id = parked.run_id.clone();
    let wait = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let info = waiter
            .wait_change(&run_id, parked.version, Duration::from_secs(10))
            .await;
        (info, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.store().claim(&answer, "worker-1").await.unwrap();
    let (info, elapsed) = wait.await.unwrap();
    let info = info.unwrap().expect("woken before the timeout");
    assert_eq!(info.state, RunState::Claimed);
    assert!(elapsed < Duration::from_secs(2), "waited {elapsed:?}");
    let none = s
        .store()
        .wait_change(&info.run_id, info.version, Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(none, None);
    assert!(
        s.store()
            .wait_finished(&info.run_id, Duration::from_millis(50))
            .await
            .unwrap()
            .is_none()
    );
}
