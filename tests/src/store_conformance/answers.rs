//! Answers recorded apart from resuming: `submit` (with `claim`'s checks, one winner), who
//! answered and the run's history; the workers' queue is in `queue`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::Answer;
use toolnexus::request::DeclineReason;
use toolnexus::store::{RunEventKind, RunState, RunStore, StoreError};

use super::{Agent, LEASE, Make, make_subject};

/// The kinds of a run's history, in order.
pub(super) async fn kinds(store: &dyn RunStore, run_id: &str) -> Vec<RunEventKind> {
    store
        .get(run_id)
        .await
        .unwrap()
        .expect("stored")
        .info
        .history
        .iter()
        .map(|e| e.event)
        .collect()
}

/// `submit` records the answer and who gave it without resuming; `claim_next` hands the run
/// to a worker with that answer; the history reads requested, answered by, claimed by,
/// finished.
pub async fn submit_records_the_answer_and_who(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let request = record.pending().clone();
    let parked = store.park(record.clone()).await.unwrap();
    assert_eq!(parked.attempts, 0);
    assert_eq!(parked.history.len(), 1);
    assert_eq!(parked.history[0].event, RunEventKind::Requested);
    assert_eq!(
        parked.history[0].request.as_deref(),
        Some(request.id.as_str())
    );
    assert_eq!(parked.answered_by(), None);

    let before = SystemTime::now() - Duration::from_millis(5);
    let answer = request.accept("Ada");
    let info = store.submit(&answer, "alice@example.com").await.unwrap();
    assert_eq!(info.state, RunState::Answered);
    assert_eq!(info.run_id, parked.run_id);
    assert_eq!(info.answered_by(), Some("alice@example.com"));
    assert!(info.answered_at().unwrap() >= before);
    assert_eq!(info.attempts, 0);
    assert_eq!(info.resumed_by(), None);
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info, info);
    assert_eq!(stored.answer, Some(answer.clone()));
    // answered, not pending: the list no longer shows it
    let page = store
        .list_pending(&toolnexus::store::PendingQuery::new())
        .await
        .unwrap();
    assert!(page.runs.is_empty(), "{page:?}");

    // single use: a second submit and a claim both lose
    for refused in [
        store.submit(&request.accept("Bob"), "bob").await.map(drop),
        store.claim(&request.accept("Bob"), "w").await.map(drop),
    ] {
        assert_eq!(
            refused.unwrap_err(),
            StoreError::AlreadyAnswered {
                run_id: parked.run_id.clone(),
                request_id: request.id.clone(),
                state: RunState::Answered
            }
        );
    }
    assert_eq!(
        StoreError::AlreadyAnswered {
            run_id: "r".to_owned(),
            request_id: "q".to_owned(),
            state: RunState::Answered
        }
        .to_string(),
        "request `q` of run `r` was already answered (the run is answered now)"
    );

    let claim = store.claim_next("worker-1").await.unwrap().expect("a run");
    assert_eq!(claim.run_id, parked.run_id);
    assert_eq!(claim.answer, answer);
    assert_eq!(claim.record, record);
    assert!(!claim.taken_over);
    assert_eq!(claim.lease.owner, "worker-1");
    assert_eq!(claim.token, 1);
    assert_eq!(claim.answered_at, info.answered_at());
    assert!(store.claim_next("worker-2").await.unwrap().is_none());

    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.text, r#"done: hello "Ada""#);
    let done = store.finish(&claim, result).await.unwrap();
    assert_eq!(done.state, RunState::Finished);
    assert_eq!(done.attempts, 1);
    assert_eq!(done.resumed_by(), Some("worker-1"));
    assert_eq!(done.answered_by(), Some("alice@example.com"));
    assert_eq!(done.outcome(), Some("done"));
    assert_eq!(
        kinds(store, &parked.run_id).await,
        [
            RunEventKind::Requested,
            RunEventKind::Answered,
            RunEventKind::Claimed,
            RunEventKind::Finished
        ]
    );
    let history = &store
        .get(&parked.run_id)
        .await
        .unwrap()
        .unwrap()
        .info
        .history;
    assert_eq!(history[2].by.as_deref(), Some("worker-1"));
    assert!(history.windows(2).all(|w| w[0].at <= w[1].at));
    // a history reads as JSON
    let json = serde_json::to_value(&history[1]).unwrap();
    assert_eq!(json["event"], "answered");
    assert_eq!(json["by"], "alice@example.com");
    assert_eq!(json["request"], json!(request.id));
    assert!(json["at"].is_i64());
}

/// A claim records its owner as the answerer, and a run that halts again keeps its whole
/// history; the answerer of its new request is nobody yet.
pub async fn claim_and_halt_again_keep_history(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let record = agent.halt().await;
    let first = record.pending().clone();
    let parked = store.park(record).await.unwrap();
    let claim = store.claim(&first.accept("Ada"), "host-1").await.unwrap();
    assert!(claim.answered_at.is_some());
    let halted = agent.resume(&claim.record, claim.answer.clone()).await;
    let again = store.finish(&claim, halted).await.unwrap();
    assert_eq!(again.state, RunState::Parked);
    assert_ne!(again.request_id, first.id);
    assert_eq!(again.answered_by(), None);
    assert_eq!(again.resumed_by(), Some("host-1"));
    // no attempt at the new request's answer yet
    assert_eq!(again.attempts, 0);
    let events: Vec<_> = again
        .history
        .iter()
        .map(|e| (e.event, e.request.clone(), e.by.clone()))
        .collect();
    assert_eq!(
        events,
        [
            (RunEventKind::Requested, Some(first.id.clone()), None),
            (
                RunEventKind::Answered,
                Some(first.id.clone()),
                Some("host-1".to_owned())
            ),
            (RunEventKind::Claimed, None, Some("host-1".to_owned())),
            (
                RunEventKind::Requested,
                Some(again.request_id.clone()),
                None
            ),
        ]
    );
    let answered = store
        .submit(&Answer::accept(&again.request_id, "Bob"), "bob")
        .await
        .unwrap();
    assert_eq!(answered.answered_by(), Some("bob"));
    assert_eq!(answered.run_id, parked.run_id);
}

/// Of many concurrent submitters (across handles), exactly one is recorded; the others get
/// `AlreadyAnswered`.
pub async fn concurrent_submits_one_recorded(make: Make) {
    let s = subject!(make);
    let agent = Agent::once();
    let record = agent.halt().await;
    let request = record.pending().clone();
    let run_id = s.store().park(record).await.unwrap().run_id;
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = Arc::clone(&s.handles[i % s.handles.len()]);
        let answer = request.accept(format!("user-{i}"));
        tasks.push(tokio::spawn(async move {
            (i, store.submit(&answer, &format!("user-{i}")).await)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            (i, Ok(info)) => {
                assert_eq!(info.answered_by(), Some(format!("user-{i}").as_str()));
                winners.push(i);
            }
            (
                _,
                Err(StoreError::AlreadyAnswered {
                    run_id: r,
                    request_id,
                    state,
                }),
            ) => {
                assert_eq!(r, run_id);
                assert_eq!(request_id, request.id);
                assert_eq!(state, RunState::Answered);
            }
            (_, Err(e)) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let stored = s.store().get(&run_id).await.unwrap().unwrap();
    assert_eq!(
        stored.answer.unwrap().data,
        Some(json!(format!("user-{}", winners[0])))
    );
    let answered = stored
        .info
        .history
        .iter()
        .filter(|e| e.event == RunEventKind::Answered)
        .count();
    assert_eq!(answered, 1);
}

/// `submit` refuses what `claim` refuses: an unknown request, an expired one (which it marks
/// expired), a damaged record (which stays parked).
pub async fn submit_checks_like_claim(make: Make) {
    let s = subject!(make);
    let store = s.store();
    assert_eq!(
        store
            .submit(&Answer::ok("sus-nope"), "a")
            .await
            .unwrap_err(),
        StoreError::NotFound {
            key: "sus-nope".to_owned()
        }
    );
    let expired = Agent {
        expires_ms: Some(-1_000),
        ..Agent::once()
    }
    .halt()
    .await;
    let late = expired.pending().accept("Ada");
    let info = store.park(expired).await.unwrap();
    assert_eq!(
        store.submit(&late, "alice").await.unwrap_err(),
        StoreError::Expired {
            run_id: info.run_id.clone()
        }
    );
    let row = store.get(&info.run_id).await.unwrap().unwrap();
    assert_eq!(row.info.state, RunState::Expired);
    assert_eq!(row.info.answered_by(), None);
    assert_eq!(
        row.answer,
        Some(Answer::decline(&info.request_id, DeclineReason::Expired))
    );
    assert_eq!(
        kinds(store, &info.run_id).await,
        [RunEventKind::Requested, RunEventKind::Expired]
    );

    let agent = Agent::once();
    let bad = agent.halt().await;
    let bad_answer = bad.pending().accept("Ada");
    let bad_info = store.park(bad).await.unwrap();
    (s.write_raw)(bad_info.run_id.clone(), "[]".to_owned()).await;
    assert!(matches!(
        store.submit(&bad_answer, "alice").await,
        Err(StoreError::Corrupt { run_id, .. }) if run_id == bad_info.run_id
    ));
    let pending = store
        .list_pending(&toolnexus::store::PendingQuery::new())
        .await
        .unwrap();
    let still = pending
        .runs
        .iter()
        .find(|r| r.run_id == bad_info.run_id)
        .expect("still parked");
    assert_eq!(still.state, RunState::Parked);
    assert_eq!(still.history.len(), 1, "{:?}", still.history);
}

/// One error per situation: an answer to a request that was answered already is
/// `AlreadyAnswered` (naming the run and the request), whichever request of the run it was (the
/// one it waits on, an earlier one, the last one of a finished run) and whoever won the race;
/// an answer to a request no run made (or a deleted run's) is `NotFound`. `claim` and `submit`
/// agree.
pub async fn answered_and_unknown_requests_are_told_apart(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let record = agent.halt().await;
    let first = record.pending().clone();
    let run_id = store.park(record).await.unwrap().run_id;
    let already = |request_id: &str, state| StoreError::AlreadyAnswered {
        run_id: run_id.clone(),
        request_id: request_id.to_owned(),
        state,
    };

    let second = race_then_park_again(&s, &agent, &first, &run_id).await;

    // the earlier request, while the run waits on the next one
    let again = first.accept("Eve");
    assert_eq!(
        store.claim(&again, "late").await.unwrap_err(),
        already(&first.id, RunState::Parked)
    );
    assert_eq!(
        store.submit(&again, "late").await.unwrap_err(),
        already(&first.id, RunState::Parked)
    );
    // nothing changed: the run still waits on its second request
    let stored = store.get(&run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Parked);
    assert_eq!(stored.info.request_id, second);

    // the last request, once the run finished
    let claim = store
        .claim(&Answer::accept(&second, "Bob"), "host")
        .await
        .unwrap();
    let done = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(
        store.finish(&claim, done).await.unwrap().state,
        RunState::Finished
    );
    let last = Answer::accept(&second, "Bob");
    assert_eq!(
        store.claim(&last, "late").await.unwrap_err(),
        already(&second, RunState::Finished)
    );
    assert_eq!(
        store.submit(&again, "late").await.unwrap_err(),
        already(&first.id, RunState::Finished)
    );
    assert_eq!(
        already(&first.id, RunState::Finished).to_string(),
        format!(
            "request `{}` of run `{run_id}` was already answered (the run is finished now)",
            first.id
        )
    );

    // never made, and made by a run that was deleted since
    let never = StoreError::NotFound {
        key: "sus-never".to_owned(),
    };
    assert_eq!(
        store
            .claim(&Answer::ok("sus-never"), "a")
            .await
            .unwrap_err(),
        never
    );
    assert_eq!(
        store
            .submit(&Answer::ok("sus-never"), "a")
            .await
            .unwrap_err(),
        never
    );
    assert!(store.delete(&run_id).await.unwrap());
    for (answer, id) in [(&again, &first.id), (&last, &second)] {
        assert_eq!(
            store.claim(answer, "a").await.unwrap_err(),
            StoreError::NotFound { key: id.clone() }
        );
    }
}

/// Eight claimants of `first` across the subject's handles; the winner resumes at once and
/// parks on its next request, whose id this returns. Every loser gets `AlreadyAnswered` for
/// `first`, the run claimed or parked again by then.
async fn race_then_park_again(
    s: &super::Subject,
    agent: &Agent,
    first: &toolnexus::Request,
    run_id: &str,
) -> String {
    // eight claimants across handles; the winner resumes at once and parks on its next request
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = Arc::clone(&s.handles[i % s.handles.len()]);
        let answer = first.accept(format!("user-{i}"));
        let agent = agent.clone();
        tasks.push(tokio::spawn(async move {
            let claim = store.claim(&answer, &format!("host-{i}")).await?;
            let halted = agent.resume(&claim.record, claim.answer.clone()).await;
            Ok::<_, StoreError>(store.finish(&claim, halted).await.unwrap())
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(info) => winners.push(info),
            // the loser's run is claimed, or parked again on its next request
            Err(StoreError::AlreadyAnswered {
                run_id: r,
                request_id,
                state,
            }) => {
                assert_eq!(
                    (r.as_str(), request_id.as_str()),
                    (run_id, first.id.as_str())
                );
                assert!(
                    matches!(state, RunState::Claimed | RunState::Parked),
                    "{state}"
                );
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let second = winners[0].request_id.clone();
    assert_ne!(second, first.id);
    second
}
