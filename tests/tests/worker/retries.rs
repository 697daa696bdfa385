//! A resume that keeps failing is not retried forever: each failure is recorded with its
//! error in the run's history, the run is tried again after a doubling delay (by any worker,
//! from its last checkpoint), and after the worker's `max_attempts` it is given up
//! (`RunState::Failed`), never resumed again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::store::RunEventKind::{self, Answered, Claimed, Failed, Requested, TakenOver};
use toolnexus::store::RunState;
use toolnexus::worker::Worker;
use toolnexus::{Client, FnModel, ModelRequest, Reply, Role};
use toolnexus_tests::store_conformance::Agent;

use super::{start, stores};

/// A client whose model fails its first `failing` calls ("the model is down (call n)"), then
/// answers like [`Agent::once`]'s; `calls` counts them.
fn failing_client(failing: usize, calls: Arc<AtomicUsize>) -> Client {
    let model = FnModel::new(move |req: ModelRequest| {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n <= failing {
                return Err(format!("the model is down (call {n})"));
            }
            let last = req
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::Tool)
                .and_then(|m| m.content.clone())
                .unwrap_or_default();
            Ok(Reply::text(format!("done: {last}")))
        }
    });
    Client::builder(model)
        .model_name("conformance")
        .build()
        .unwrap()
}

/// The kinds of a history, in order.
fn kinds(history: &[toolnexus::store::RunEvent]) -> Vec<RunEventKind> {
    history.iter().map(|e| e.event).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gives_up_a_run_whose_resume_keeps_failing() {
    // a lease far longer than the test: only the retry delay brings the run back
    for s in stores(
        "gives_up_a_run_whose_resume_keeps_failing",
        Duration::from_secs(60),
    )
    .await
    {
        let calls = Arc::new(AtomicUsize::new(0));
        let worker = Worker::builder(
            Arc::clone(&s.store),
            failing_client(usize::MAX, Arc::clone(&calls)),
            Agent::toolkit(),
        )
        .name("w-fail")
        .poll(Duration::from_millis(200))
        .max_attempts(3)
        .retry_delay(Duration::from_millis(100))
        .build();
        let running = start(worker);
        let record = Agent::once().halt().await;
        let request = record.pending().clone();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store
            .submit(&request.accept("Ada"), "desk")
            .await
            .unwrap();
        let run = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run was not given up", s.name));
        // nothing tries it again
        tokio::time::sleep(Duration::from_millis(500)).await;
        let stats = running.stop().await;

        assert_eq!(run.info.state, RunState::Failed, "{}", s.name);
        assert!(run.result.is_none(), "{}", s.name);
        assert_eq!(run.info.outcome(), Some("failed"), "{}", s.name);
        assert_eq!(calls.load(Ordering::SeqCst), 3, "{}: model calls", s.name);
        let failures = run.info.failures();
        assert_eq!(failures.len(), 3, "{}: {failures:?}", s.name);
        for (i, error) in failures.iter().enumerate() {
            assert!(
                error.contains(&format!("the model is down (call {})", i + 1)),
                "{}: failure {i}: {error}",
                s.name
            );
        }
        assert_eq!(
            kinds(&run.info.history),
            [
                Requested, Answered, Claimed, Failed, TakenOver, Failed, TakenOver, Failed
            ],
            "{}",
            s.name
        );
        let failed: Vec<_> = run
            .info
            .history
            .iter()
            .filter(|e| e.event == Failed)
            .collect();
        assert!(failed.iter().all(|e| e.by.as_deref() == Some("w-fail")));
        assert_eq!(failed[2].outcome.as_deref(), Some("failed"));
        assert_eq!(failed[0].outcome, None);
        // the delays: 100 ms, then 200 ms (each from a failure to the retry's claim)
        let at = |kind, n| {
            run.info
                .history
                .iter()
                .filter(|e| e.event == kind)
                .nth(n)
                .unwrap()
                .at
        };
        let waited = |n| at(TakenOver, n).duration_since(at(Failed, n)).unwrap();
        assert!(waited(0) >= Duration::from_millis(100), "{}", s.name);
        assert!(waited(1) >= Duration::from_millis(200), "{}", s.name);
        assert_eq!(run.info.attempts, 3, "{}", s.name);
        assert_eq!(
            (stats.failed, stats.gave_up),
            (3, 1),
            "{}: {stats:?}",
            s.name
        );
        assert_eq!(stats.finished, 0, "{}", s.name);
        // a given-up run takes no answer, and no worker claims it
        assert!(s.store.claim_next("another").await.unwrap().is_none());
        assert_eq!(s.store.waiting().await.unwrap(), 0, "{}", s.name);
        assert_eq!(s.store.next_due().await.unwrap(), None, "{}", s.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retries_a_failing_resume_until_it_succeeds() {
    for s in stores(
        "retries_a_failing_resume_until_it_succeeds",
        Duration::from_secs(60),
    )
    .await
    {
        let calls = Arc::new(AtomicUsize::new(0));
        let worker = Worker::builder(
            Arc::clone(&s.store),
            failing_client(2, Arc::clone(&calls)),
            Agent::toolkit(),
        )
        .name("w-retry")
        .poll(Duration::from_millis(200))
        .max_attempts(3)
        .retry_delay(Duration::from_millis(50))
        .build();
        let running = start(worker);
        let record = Agent::once().halt().await;
        let request = record.pending().clone();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store
            .submit(&request.accept("Ada"), "desk")
            .await
            .unwrap();
        let run = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
        let stats = running.stop().await;

        assert_eq!(run.info.state, RunState::Finished, "{}", s.name);
        assert_eq!(
            run.result.unwrap().text,
            "done: hello \"Ada\"",
            "{}",
            s.name
        );
        assert_eq!(run.info.outcome(), Some("done"), "{}", s.name);
        assert_eq!(run.info.failures().len(), 2, "{}", s.name);
        assert_eq!(calls.load(Ordering::SeqCst), 3, "{}", s.name);
        assert_eq!(run.info.attempts, 3, "{}", s.name);
        assert_eq!((stats.failed, stats.gave_up, stats.finished), (2, 0, 1));
    }
}

/// Attempts never exceed the maximum: a run whose first answer was resumed (one claim) halts
/// again, and the resume of its second answer keeps failing; the worker allows 5 attempts.
/// The run is given up after 5 attempts at that answer, and its `attempts` says 5 (it counted
/// every claim of the run's life before, 6), as do the events: no takeover or failure names
/// an attempt past 5.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attempts_never_exceed_the_maximum() {
    for s in stores("attempts_never_exceed_the_maximum", Duration::from_secs(60)).await {
        // asks twice; once both answers are in, the model is down
        let model = FnModel::new(|req: ModelRequest| async move {
            let results = req.messages.iter().filter(|m| m.role == Role::Tool).count();
            if results < 2 {
                Ok(Reply::tool_call("ask", serde_json::json!({})))
            } else {
                Err("the model is down".to_owned())
            }
        });
        let client = Client::builder(model)
            .model_name("conformance")
            .build()
            .unwrap();
        let worker = Worker::builder(Arc::clone(&s.store), client.clone(), Agent::toolkit())
            .name("w-max")
            .poll(Duration::from_millis(50))
            .max_attempts(5)
            .retry_delay(Duration::from_millis(10))
            .build();
        let running = start(worker);
        let halted = client
            .run("Greet me twice.", &Agent::toolkit())
            .await
            .unwrap();
        let first = halted.pending.clone().unwrap();
        let run_id = s
            .store
            .park(toolnexus::PendingRun::try_from(halted).unwrap())
            .await
            .unwrap()
            .run_id;
        s.store.submit(&first.accept("Ada"), "desk").await.unwrap();
        // the first answer's resume halts again
        let second = loop {
            let info = s.store.info(&run_id).await.unwrap().unwrap();
            if info.state == RunState::Parked && info.request_id != first.id {
                assert_eq!(
                    info.attempts, 0,
                    "{}: no attempt at the new request yet",
                    s.name
                );
                break info.request_id;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let answer = toolnexus::Answer::accept(&second, "Bea");
        s.store.submit(&answer, "desk").await.unwrap();
        let run = s
            .store
            .wait_finished(&run_id, Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run was not given up", s.name));
        let stats = running.stop().await;

        assert_eq!(run.info.state, RunState::Failed, "{}", s.name);
        assert_eq!(run.info.failures().len(), 5, "{}", s.name);
        assert_eq!(run.info.attempts, 5, "{}: {:?}", s.name, run.info.history);
        let numbered: Vec<(RunEventKind, Option<u32>)> = run
            .info
            .history
            .iter()
            .skip_while(|e| e.request.as_deref() != Some(second.as_str()))
            .filter(|e| e.attempt.is_some())
            .map(|e| (e.event, e.attempt))
            .collect();
        assert_eq!(
            numbered,
            [
                (Failed, Some(1)),
                (TakenOver, Some(2)),
                (Failed, Some(2)),
                (TakenOver, Some(3)),
                (Failed, Some(3)),
                (TakenOver, Some(4)),
                (Failed, Some(4)),
                (TakenOver, Some(5)),
                (Failed, Some(5)),
            ],
            "{}",
            s.name
        );
        assert_eq!(
            (stats.failed, stats.gave_up),
            (5, 1),
            "{}: {stats:?}",
            s.name
        );
    }
}
