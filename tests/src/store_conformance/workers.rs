//! The workers' heartbeats: a store keeps each worker's latest heartbeat and names the one
//! seen last; a running `Worker` records its own.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolnexus::CancellationToken;
use toolnexus::store::{WORKER_GONE_AFTER, WorkerSeen};
use toolnexus::worker::Worker;

use super::{Agent, LEASE, Make, make_subject};

/// A moment with whole milliseconds (the SQL stores keep milliseconds).
fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_800_000_000_000 + ms)
}

/// No worker seen on a fresh store; each heartbeat moves its worker's time forward (never
/// back), the latest of all workers is named, from every handle onto the store.
pub async fn heartbeats_name_the_worker_seen_last(make: Make) {
    let s = subject!(make);
    let store = s.store();
    assert_eq!(store.last_worker_seen().await.unwrap(), None);
    store.heartbeat("w-1", at(1_000)).await.unwrap();
    assert_eq!(
        store.last_worker_seen().await.unwrap(),
        Some(WorkerSeen::new("w-1", at(1_000)))
    );
    let other = s.handles.last().unwrap().as_ref();
    other.heartbeat("w-2", at(2_000)).await.unwrap();
    // an older heartbeat (a clock behind, a late write) does not move a worker back
    other.heartbeat("w-2", at(1_500)).await.unwrap();
    store.heartbeat("w-1", at(500)).await.unwrap();
    for handle in &s.handles {
        assert_eq!(
            handle.last_worker_seen().await.unwrap(),
            Some(WorkerSeen::new("w-2", at(2_000)))
        );
    }
    store.heartbeat("w-1", at(3_000)).await.unwrap();
    assert_eq!(
        other.last_worker_seen().await.unwrap(),
        Some(WorkerSeen::new("w-1", at(3_000)))
    );
    // running: at most WORKER_GONE_AFTER old
    let seen = WorkerSeen::new("w-1", at(3_000));
    assert!(seen.is_running_at(at(3_000) + WORKER_GONE_AFTER));
    assert!(!seen.is_running_at(at(3_001) + WORKER_GONE_AFTER));
}

/// A `Worker` records its heartbeat as it starts, under its name, with the time it runs at.
pub async fn a_running_worker_records_its_heartbeat(make: Make) {
    let s = subject!(make);
    let before = SystemTime::now() - Duration::from_millis(1);
    let agent = Agent::once();
    let worker = Worker::builder(s.handles[0].clone(), agent.client(), Agent::toolkit())
        .name("w-beating")
        .poll(Duration::from_millis(50))
        .build();
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (worker, stop) = (worker.clone(), stop.clone());
        async move { worker.run(stop.cancelled_owned()).await }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let seen = loop {
        if let Some(seen) = s.store().last_worker_seen().await.unwrap() {
            break seen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no heartbeat after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    stop.cancel();
    running.await.unwrap();
    assert_eq!(seen.worker, "w-beating");
    assert!(
        seen.at >= before && seen.is_running_at(SystemTime::now()),
        "{seen:?}"
    );
}
