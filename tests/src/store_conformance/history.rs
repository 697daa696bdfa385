//! The history of answered runs (`list_history`): every run with a request answered or
//! expired, newest request first, paged, with who answered, when, and how the run ended.

use std::time::{Duration, SystemTime};

use toolnexus::store::{HistoryQuery, RunEventKind, RunInfo, RunState, RunStore, StoreError};

use super::{Agent, LEASE, Make, make_subject};

/// Parks the run `agent` halts, a few ms after the last park (so each request is newer).
async fn park(store: &dyn RunStore, agent: &Agent) -> (RunInfo, toolnexus::Request) {
    tokio::time::sleep(Duration::from_millis(3)).await;
    let record = agent.halt().await;
    let request = record.pending().clone();
    (store.park(record).await.unwrap(), request)
}

/// Every page of `query`, in order: each page's run ids, and the whole listing.
async fn pages(store: &dyn RunStore, query: HistoryQuery) -> (Vec<Vec<String>>, Vec<RunInfo>) {
    let mut ids = Vec::new();
    let mut all = Vec::new();
    let mut q = query.clone();
    loop {
        let page = store.list_history(&q).await.unwrap();
        assert!(page.damaged.is_empty(), "{page:?}");
        ids.push(page.runs.iter().map(|r| r.run_id.clone()).collect());
        all.extend(page.runs);
        match page.next {
            Some(next) => q = query.clone().after(next),
            None => return (ids, all),
        }
    }
}

/// A run never answered is not listed; one answered (recorded, resumed and finished, parked
/// again on a later request) or expired is, newest request first, with who answered it, when,
/// and how it ended; pages follow each other without a gap or a repeat; `kind` filters.
pub async fn history_lists_answered_runs_newest_first(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let once = Agent::once();
    let started = SystemTime::now() - Duration::from_millis(5);

    let (waiting, _) = park(store, &once).await;
    let (recorded, q) = park(store, &once).await;
    store.submit(&q.accept("Ada"), "alice").await.unwrap();
    let (finished, q) = park(store, &once).await;
    let claim = store.claim(&q.accept("Bob"), "worker-1").await.unwrap();
    let done = once.resume(&claim.record, claim.answer.clone()).await;
    store.finish(&claim, done).await.unwrap();
    let expiring = Agent {
        kind: "approval".to_owned(),
        expires_ms: Some(-1_000),
        ..Agent::once()
    };
    let (expired, _) = park(store, &expiring).await;
    assert_eq!(
        store.expire().await.unwrap(),
        std::slice::from_ref(&expired.run_id)
    );
    let twice = Agent {
        halts: 2,
        ..Agent::once()
    };
    let (again, first) = park(store, &twice).await;
    let claim = store.claim(&first.accept("Cy"), "worker-2").await.unwrap();
    tokio::time::sleep(Duration::from_millis(3)).await;
    let halted = twice.resume(&claim.record, claim.answer.clone()).await;
    store.finish(&claim, halted).await.unwrap();

    let newest_first = [&again, &expired, &finished, &recorded].map(|r| r.run_id.clone());
    let (ids, all) = pages(store, HistoryQuery::new().limit(3)).await;
    assert_eq!(
        ids,
        [newest_first[..3].to_vec(), newest_first[3..].to_vec()],
        "the unanswered run {} is not listed",
        waiting.run_id
    );
    let (one_page, _) = pages(store, HistoryQuery::new()).await;
    assert_eq!(one_page, [newest_first.to_vec()]);

    // the run parked again: its first request answered by the worker that claimed it
    assert_eq!(all[0].state, RunState::Parked);
    assert_ne!(all[0].request_id, first.id);
    assert_eq!(all[0].answered_by(), None, "its current request waits");
    let answered: Vec<_> = all[0]
        .history
        .iter()
        .filter(|e| e.event == RunEventKind::Answered)
        .map(|e| (e.request.clone(), e.by.clone()))
        .collect();
    assert_eq!(
        answered,
        [(Some(first.id.clone()), Some("worker-2".to_owned()))]
    );
    // expired unanswered
    assert_eq!(all[1].state, RunState::Expired);
    assert_eq!(all[1].answered_by(), None);
    assert_eq!(
        all[1].answer_event().map(|e| e.event),
        Some(RunEventKind::Expired)
    );
    // answered and finished
    assert_eq!(all[2].state, RunState::Finished);
    assert_eq!(all[2].answered_by(), Some("worker-1"));
    assert_eq!(all[2].outcome(), Some("done"));
    // answered, waiting for a worker
    assert_eq!(all[3].state, RunState::Answered);
    assert_eq!(all[3].answered_by(), Some("alice"));
    assert_eq!(all[3].outcome(), None);
    for run in &all {
        let at = run
            .history
            .iter()
            .rev()
            .find(|e| matches!(e.event, RunEventKind::Answered | RunEventKind::Expired))
            .expect("answered or expired")
            .at;
        assert!(at >= started && at <= SystemTime::now(), "{run:?}");
    }

    // only the approvals
    let (approvals, _) = pages(store, HistoryQuery::new().kind("approval")).await;
    assert_eq!(approvals, [vec![expired.run_id.clone()]]);
    // a cursor no page returned
    assert_eq!(
        store
            .list_history(&HistoryQuery::new().after("not-a-cursor"))
            .await
            .unwrap_err(),
        StoreError::Invalid("`not-a-cursor` is not a cursor a history page returned".to_owned())
    );
}
