//! What a worker does with the runs of each store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use toolnexus::store::{RunEventKind, RunState};
use toolnexus::worker::Worker;
use toolnexus::{Client, FnModel, ModelRequest, Reply, Role};
use toolnexus_tests::store_conformance::Agent;

use super::{start, stores, worker};

/// A client whose model first waits `delay` (counting the calls in flight, keeping the
/// most), then answers like [`Agent::once`]'s.
fn slow_client(delay: Duration, now: Arc<AtomicUsize>, most: Arc<AtomicUsize>) -> Client {
    let model = FnModel::new(move |req: ModelRequest| {
        let (now, most) = (Arc::clone(&now), Arc::clone(&most));
        async move {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            now.fetch_sub(1, Ordering::SeqCst);
            let last = req
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::Tool)
                .and_then(|m| m.content.clone())
                .unwrap_or_default();
            Reply::text(format!("done: {last}"))
        }
    });
    Client::builder(model)
        .model_name("conformance")
        .build()
        .unwrap()
}

/// Answers submitted by anyone are resumed by the worker, at most `concurrency` at once; each
/// run's history names who answered and which worker resumed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resumes_submitted_answers_at_most_n_at_once() {
    for s in stores(
        "resumes_submitted_answers_at_most_n_at_once",
        Duration::from_secs(30),
    )
    .await
    {
        let agent = Agent::once();
        let mut runs = Vec::new();
        for _ in 0..12 {
            let record = agent.halt().await;
            let request = record.pending().clone();
            runs.push((s.store.park(record).await.unwrap().run_id, request));
        }
        let (now, most) = Default::default();
        let client = slow_client(Duration::from_millis(50), now, Arc::clone(&most));
        let w = Worker::builder(Arc::clone(&s.store), client, Agent::toolkit())
            .name("w-1")
            .concurrency(3)
            .build();
        let running = start(w);
        for (i, (_, request)) in runs.iter().enumerate() {
            s.store
                .submit(&request.accept(format!("user-{i}")), &format!("desk-{i}"))
                .await
                .unwrap();
        }
        for (i, (run_id, _)) in runs.iter().enumerate() {
            let done = s
                .store
                .wait_finished(run_id, Duration::from_secs(20))
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{}: run {i} did not finish", s.name));
            assert_eq!(
                done.result.unwrap().text,
                format!("done: hello \"user-{i}\""),
                "{}",
                s.name
            );
            assert_eq!(done.info.answered_by(), Some(format!("desk-{i}").as_str()));
            assert_eq!(done.info.resumed_by(), Some("w-1"));
            assert_eq!(done.info.attempts, 1);
            assert_eq!(done.info.outcome(), Some("done"));
        }
        let stats = running.stop().await;
        assert_eq!(stats.claimed, 12, "{}: {stats:?}", s.name);
        assert_eq!(stats.finished, 12, "{}", s.name);
        assert_eq!((stats.failed, stats.lost, stats.released), (0, 0, 0));
        assert_eq!(stats.latencies, 12);
        assert!(stats.latency_p99.is_some());
        assert_eq!(stats.in_flight, 0);
        assert_eq!(most.load(Ordering::SeqCst), 3, "{}: concurrency", s.name);
    }
}

/// A request that nobody answers expires at its `expiresAt`: the worker's timer fires, the
/// model reads `declined/expired: <prompt>`, within a second of the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expires_requests_on_time() {
    for s in stores("expires_requests_on_time", Duration::from_secs(30)).await {
        let agent = Agent::once();
        let running = start(worker(&s, agent.client(), Agent::toolkit(), "w-exp"));
        // a poll of 200 ms; the deadlines are further apart than that, so only the timer
        // can meet them to the millisecond
        let mut parked = Vec::new();
        for ms in [700, 1300] {
            let record = Agent {
                expires_ms: Some(ms),
                ..Agent::once()
            }
            .halt()
            .await;
            parked.push(s.store.park(record).await.unwrap());
        }
        for info in &parked {
            let done = s
                .store
                .wait_finished(&info.run_id, Duration::from_secs(10))
                .await
                .unwrap()
                .expect("the expired run finishes");
            assert_eq!(
                done.result.unwrap().text,
                "done: declined/expired: What is your name?"
            );
            let expires = info.expires_at.unwrap();
            let finished = done
                .info
                .history
                .iter()
                .find(|e| e.event == RunEventKind::Finished)
                .unwrap()
                .at;
            let late = finished.duration_since(expires).unwrap_or_default();
            println!(
                "worker: {} resumed an expired request {late:?} after its expiresAt",
                s.name
            );
            assert!(late < Duration::from_secs(1), "{}: {late:?} late", s.name);
            assert!(finished >= expires);
        }
        let stats = running.stop().await;
        assert_eq!(stats.expired, 2, "{}: {stats:?}", s.name);
        assert_eq!(stats.finished, 2);
    }
}

/// A run claimed by a worker that died is taken over once its lease runs out, and finished
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn takes_over_a_dead_workers_run() {
    for s in stores("takes_over_a_dead_workers_run", Duration::from_millis(400)).await {
        let agent = Agent::once();
        let record = agent.halt().await;
        let answer = record.pending().accept("Ada");
        let info = s.store.park(record).await.unwrap();
        s.store.submit(&answer, "alice").await.unwrap();
        // the dead worker: claims, then nothing
        let dead = s.store.claim_next("dead").await.unwrap().unwrap();
        let started = Instant::now();
        let running = start(worker(&s, agent.client(), Agent::toolkit(), "w-alive"));
        let done = s
            .store
            .wait_finished(&info.run_id, Duration::from_secs(10))
            .await
            .unwrap()
            .expect("taken over");
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "taken over before the lease ran out"
        );
        let kinds: Vec<_> = done.info.history.iter().map(|e| e.event).collect();
        assert_eq!(
            kinds,
            [
                RunEventKind::Requested,
                RunEventKind::Answered,
                RunEventKind::Claimed,
                RunEventKind::TakenOver,
                RunEventKind::Finished
            ],
            "{}",
            s.name
        );
        assert_eq!(done.info.resumed_by(), Some("w-alive"));
        let result = agent.resume(&dead.record, dead.answer.clone()).await;
        assert!(s.store.finish(&dead, result).await.is_err());
        let stats = running.stop().await;
        assert_eq!((stats.taken_over, stats.finished), (1, 1), "{}", s.name);
    }
}

/// A run slower than its lease keeps it: the worker renews the lease, so a second worker
/// never takes it over.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn renews_leases_of_long_runs() {
    for s in stores("renews_leases_of_long_runs", Duration::from_millis(300)).await {
        let agent = Agent::once();
        let record = agent.halt().await;
        let answer = record.pending().accept("Ada");
        let info = s.store.park(record).await.unwrap();
        let slow = slow_client(Duration::from_millis(1200), Arc::default(), Arc::default());
        let first = start(worker(&s, slow.clone(), Agent::toolkit(), "w-slow-1"));
        s.store.submit(&answer, "alice").await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let second = start(worker(&s, slow, Agent::toolkit(), "w-slow-2"));
        let done = s
            .store
            .wait_finished(&info.run_id, Duration::from_secs(10))
            .await
            .unwrap()
            .expect("finished");
        assert_eq!(done.info.attempts, 1, "{}: {:?}", s.name, done.info.history);
        assert_eq!(done.info.resumed_by(), Some("w-slow-1"));
        let (a, b) = (first.stop().await, second.stop().await);
        assert_eq!((a.finished, a.lost, b.claimed), (1, 0, 0), "{}", s.name);
    }
}

/// At shutdown a worker claims nothing more, lets runs in flight finish within the grace,
/// then releases the rest: another worker goes on at once, not after the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn graceful_shutdown_drains_then_releases() {
    for s in stores(
        "graceful_shutdown_drains_then_releases",
        Duration::from_secs(60),
    )
    .await
    {
        let agent = Agent::once();
        let mut runs = Vec::new();
        for _ in 0..2 {
            let record = agent.halt().await;
            let answer = record.pending().accept("Ada");
            runs.push((s.store.park(record).await.unwrap().run_id, answer));
        }
        let now = Arc::new(AtomicUsize::new(0));
        // one run within the grace (300 ms), one far beyond it
        let client = {
            let now = Arc::clone(&now);
            let model = FnModel::new(move |req: ModelRequest| {
                let now = Arc::clone(&now);
                async move {
                    let n = now.fetch_add(1, Ordering::SeqCst);
                    let delay = if n == 0 { 100 } else { 60_000 };
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    Reply::text(format!("done after {} messages", req.messages.len()))
                }
            });
            Client::builder(model).model_name("m").build().unwrap()
        };
        let w = Worker::builder(Arc::clone(&s.store), client, Agent::toolkit())
            .name("w-leaving")
            .grace(Duration::from_millis(300))
            .build();
        let running = start(w);
        for (_, answer) in &runs {
            s.store.submit(answer, "alice").await.unwrap();
        }
        // both in flight
        let deadline = Instant::now() + Duration::from_secs(5);
        while now.load(Ordering::SeqCst) < 2 {
            assert!(Instant::now() < deadline, "{}: both runs start", s.name);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let stopping = Instant::now();
        let stats = running.stop().await;
        let took = stopping.elapsed();
        assert!(took < Duration::from_secs(5), "{}: {took:?}", s.name);
        assert_eq!(
            (stats.finished, stats.released),
            (1, 1),
            "{}: {stats:?}",
            s.name
        );
        let run_states: Vec<RunState> = {
            let mut v = Vec::new();
            for (id, _) in &runs {
                v.push(s.store.get(id).await.unwrap().unwrap().info.state);
            }
            v.sort_by_key(|st| st.as_str());
            v
        };
        assert_eq!(
            run_states,
            [RunState::Answered, RunState::Finished],
            "{}",
            s.name
        );
        // the next worker goes on at once (the lease is 60 s)
        let next = start(worker(&s, agent.client(), Agent::toolkit(), "w-next"));
        for (id, _) in &runs {
            let done = s
                .store
                .wait_finished(id, Duration::from_secs(5))
                .await
                .unwrap()
                .expect("finished by the next worker at once");
            assert_eq!(done.info.state, RunState::Finished);
        }
        let next_stats = next.stop().await;
        assert_eq!(next_stats.finished, 1, "{}", s.name);
    }
}
