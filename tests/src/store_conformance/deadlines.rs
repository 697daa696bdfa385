//! An answer counts when it was recorded: the store judges a request's `expiresAt` once, when
//! the answer arrives (a late one is refused, the run expires); an answer it recorded in time
//! stays valid however late a worker resumes the run, and the expiry sweep never expires a run
//! that has its answer.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use toolnexus::store::{RunEventKind, RunState, RunStore, StoreError};
use toolnexus::worker::Worker;
use toolnexus::{CancellationToken, Request};

use super::{Agent, LEASE, Make, make_subject};

/// A worker over `store` that resumes [`Agent`]'s runs, polling every 50 ms, until `stop`.
fn start_worker(
    store: &Arc<dyn RunStore>,
    agent: &Agent,
    name: &str,
    stop: &CancellationToken,
) -> tokio::task::JoinHandle<toolnexus::worker::WorkerStats> {
    let worker = Worker::builder(Arc::clone(store), agent.client(), Agent::toolkit())
        .name(name)
        .poll(Duration::from_millis(50))
        .build();
    let stop = stop.clone();
    tokio::spawn(async move { worker.run(stop.cancelled_owned()).await })
}

/// Sleeps until `at` (now when it passed).
async fn sleep_until(at: SystemTime) {
    tokio::time::sleep(at.duration_since(SystemTime::now()).unwrap_or_default()).await;
}

/// An approval answered before its deadline, by a `submit` (and one by a `claim` that dies
/// with its worker), resumed only after the deadline passed: the expiry sweep leaves both runs
/// alone, and a worker that starts after the deadline runs the approved tool for each. An
/// answer that comes after the deadline is refused and its run reads `declined/expired`.
pub async fn an_answer_recorded_in_time_counts_however_late_it_is_resumed(make: Make) {
    let lease = Duration::from_millis(300);
    let s = subject!(make, lease);
    let store = &s.handles[0];
    let agent = Agent {
        kind: "approval".to_owned(),
        expires_ms: Some(1_000),
        ..Agent::once()
    };
    let submitted = agent.halt().await;
    let claimed = agent.halt().await;
    let late = agent.halt().await;
    let deadline = submitted
        .pending()
        .expires_at_time()
        .expect("a deadline")
        .max(late.pending().expires_at_time().unwrap());
    let requests: Vec<Request> = [&submitted, &claimed, &late]
        .map(|r| r.pending().clone())
        .into();
    let mut ids = Vec::new();
    for record in [submitted, claimed, late] {
        ids.push(store.park(record).await.unwrap().run_id);
    }

    // in time: one answer recorded by a submit, one by a claim whose worker then dies
    store
        .submit(&requests[0].accept("Ada"), "desk")
        .await
        .unwrap();
    let dead = store
        .claim(&requests[1].accept("Bea"), "worker-dead")
        .await
        .unwrap();
    assert!(dead.answered_at.is_some_and(|at| at < deadline));

    // the deadline passes; the sweep expires only the run nobody answered
    sleep_until(deadline + Duration::from_millis(50)).await;
    assert_eq!(store.expire().await.unwrap(), vec![ids[2].clone()]);
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    assert_eq!(
        store.submit(&requests[2].accept("Cy"), "desk").await,
        Err(StoreError::Expired {
            run_id: ids[2].clone()
        }),
        "an answer after the deadline is refused"
    );
    for (id, state) in ids.iter().zip([RunState::Answered, RunState::Claimed]) {
        assert_eq!(store.info(id).await.unwrap().unwrap().state, state);
    }

    // a worker that starts after the deadline (and after the dead one's lease lapsed)
    sleep_until(SystemTime::now() + lease).await;
    let stop = CancellationToken::new();
    let worker = start_worker(store, &agent, "worker-late", &stop);
    let mut texts = Vec::new();
    for id in &ids {
        let run = store
            .wait_finished(id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        texts.push(run.result.expect("a result").text);
        let answered = run
            .info
            .history
            .iter()
            .filter(|e| e.event == RunEventKind::Answered)
            .count();
        let expired = run
            .info
            .history
            .iter()
            .filter(|e| e.event == RunEventKind::Expired)
            .count();
        assert_eq!(answered + expired, 1, "{:?}", run.info.history);
    }
    stop.cancel();
    worker.await.unwrap();
    assert_eq!(
        texts,
        [
            "done: hello \"Ada\"",
            "done: hello \"Bea\"",
            "done: declined/expired: What is your name?"
        ]
    );
}

/// Expiry racing answers: 24 runs whose deadline falls in the middle of a stream of submits,
/// while the expiry sweep runs in a loop on another handle. Every answer `submit` accepted
/// ends with the tool run (resumed after the deadline by a worker that starts late), every one
/// it refused (expired) ends `declined/expired`, and no run is both answered and expired.
pub async fn expiry_racing_submits_honours_every_accepted_answer(make: Make) {
    const RUNS: usize = 24;
    let s = subject!(make);
    let store = &s.handles[0];
    let sweeper_store = Arc::clone(&s.handles[s.handles.len() - 1]);
    let agent = Agent {
        kind: "approval".to_owned(),
        expires_ms: Some(1_500),
        ..Agent::once()
    };
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let record = agent.halt().await;
        let request = record.pending().clone();
        runs.push((store.park(record).await.unwrap().run_id, request));
    }
    let deadline = runs
        .iter()
        .filter_map(|(_, r)| r.expires_at_time())
        .max()
        .unwrap();
    let first = runs
        .iter()
        .filter_map(|(_, r)| r.expires_at_time())
        .min()
        .unwrap();

    // the sweep, as often as it can, from before the first deadline until after the last
    let stop_sweeping = CancellationToken::new();
    let sweeper = {
        let stop = stop_sweeping.clone();
        tokio::spawn(async move {
            let mut swept = 0;
            while !stop.is_cancelled() {
                swept += sweeper_store.expire().await.unwrap().len();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            swept
        })
    };
    // the submits: spread from 300 ms before the first deadline to 200 ms after the last
    let start = first - Duration::from_millis(300);
    let span = deadline + Duration::from_millis(200);
    let spacing = span.duration_since(start).unwrap() / u32::try_from(RUNS).unwrap();
    let mut submits = Vec::new();
    for (i, (_, request)) in runs.iter().enumerate() {
        let (store, request) = (Arc::clone(&s.handles[i % s.handles.len()]), request.clone());
        let at = start + spacing * u32::try_from(i).unwrap();
        submits.push(tokio::spawn(async move {
            sleep_until(at).await;
            let answer = request.accept(format!("user{i}"));
            store.submit(&answer, "desk").await
        }));
    }
    let mut accepted = BTreeMap::new();
    for (i, submit) in submits.into_iter().enumerate() {
        let outcome = submit.await.unwrap();
        match &outcome {
            Ok(info) => assert_eq!(info.state, RunState::Answered),
            Err(StoreError::Expired { run_id }) => assert_eq!(run_id, &runs[i].0),
            Err(e) => panic!("submit {i}: {e}"),
        }
        accepted.insert(i, outcome.is_ok());
    }
    sleep_until(deadline + Duration::from_millis(150)).await;
    stop_sweeping.cancel();
    let swept = sweeper.await.unwrap();

    // a worker that starts after every deadline passed resumes them all
    let stop = CancellationToken::new();
    let worker = start_worker(store, &agent, "worker-late", &stop);
    let mut ran = 0;
    for (i, (run_id, _)) in runs.iter().enumerate() {
        let run = store
            .wait_finished(run_id, Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("run {i} ends"));
        let text = run.result.expect("a result").text;
        let kinds: Vec<RunEventKind> = run.info.history.iter().map(|e| e.event).collect();
        let answered = kinds.contains(&RunEventKind::Answered);
        let expired = kinds.contains(&RunEventKind::Expired);
        assert!(answered != expired, "run {i}: {kinds:?}");
        if accepted[&i] {
            assert!(answered, "run {i}: accepted but {kinds:?}");
            assert_eq!(text, format!("done: hello \"user{i}\""), "run {i}");
            ran += 1;
        } else {
            assert!(expired, "run {i}: refused but {kinds:?}");
            assert_eq!(
                text, "done: declined/expired: What is your name?",
                "run {i}"
            );
        }
    }
    stop.cancel();
    worker.await.unwrap();
    // the race was a race: some answers came in time, some after the deadline
    assert!(ran > 0 && ran < RUNS, "{ran} of {RUNS} accepted");
    assert!(
        swept > 0,
        "the sweep expired the runs nobody answered in time"
    );
}
