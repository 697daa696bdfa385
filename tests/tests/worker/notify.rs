//! Notifications delivered by worker processes (`run_worker` with `RUN_WORKER_NOTIFY_URL`)
//! to a real HTTP receiver on 127.0.0.1, on SQLite and PostgreSQL: a worker SIGKILLed between
//! the park and the delivery, and one SIGKILLed in the middle of a delivery, lose nothing:
//! the next worker delivers, and the receiver, dropping duplicates by id, handles each once.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::store::{NotificationState, RunStore, SqliteStore};
use toolnexus_tests::receivers::{HttpReceiver, Reply};
use toolnexus_tests::store_conformance::Agent;

/// A store of the test process (it parks the runs) and the `run_worker` arguments onto the
/// same data; `None` when the store is not available here.
struct Place {
    store: Arc<dyn RunStore>,
    args: Vec<String>,
    _guard: Box<dyn std::any::Any + Send>,
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The lease of the workers' notifications: how late a dead worker's delivery is taken up.
const LEASE_MS: &str = "600";

async fn place(kind: &str, test: &str) -> Option<Place> {
    if kind == "sqlite" {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolnexus-notify-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("runs.db");
        let store = SqliteStore::open(&path)
            .await
            .unwrap()
            .with_notifiers(["hook"])
            .unwrap();
        Some(Place {
            store: Arc::new(store),
            args: vec!["sqlite".into(), path.display().to_string(), "-".into()],
            _guard: Box::new(TempDir(dir)),
        })
    } else {
        let url = toolnexus_tests::pg::url(test)?;
        let (store, guard) = toolnexus_tests::pg::fresh_store(&url, "notify").await;
        let args = vec!["postgres".into(), url, guard.schema.clone()];
        Some(Place {
            store: Arc::new(store.with_notifiers(["hook"]).unwrap()),
            args,
            _guard: Box::new(guard),
        })
    }
}

/// Starts `run_worker` `name` onto `place`, delivering to `receiver`, polling every `poll_ms`.
fn worker(
    place: &Place,
    receiver: &HttpReceiver,
    name: &str,
    poll_ms: &str,
) -> std::process::Child {
    let mut args: Vec<&str> = place.args.iter().map(String::as_str).collect();
    args.extend([name, LEASE_MS, "4", poll_ms]);
    let (child, _lines) = super::run_worker(
        &args,
        &[("RUN_WORKER_NOTIFY_URL", receiver.url.as_str())],
        name,
    );
    child
}

fn kill(mut child: std::process::Child) {
    child.kill().expect("SIGKILL");
    let _ = child.wait();
}

/// The notification's state once it is delivered (at most 15 s).
async fn delivered(store: &dyn RunStore, run_id: &str) -> Vec<toolnexus::store::Notification> {
    let outbox = store.outbox().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let ns = outbox.notifications(run_id).await.unwrap();
        if ns.iter().all(|n| n.state == NotificationState::Delivered)
            || tokio::time::Instant::now() >= deadline
        {
            return ns;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A worker that parks nothing itself is killed after a run parked (its notification
/// committed with the park) and before it delivered it (it polls once a minute); the next
/// worker delivers it.
async fn killed_between_the_park_and_the_delivery(kind: &str) {
    let Some(place) = place(kind, "worker::notify").await else {
        return;
    };
    let receiver = HttpReceiver::start(vec![]).await;
    let first = worker(&place, &receiver, "w-first", "60000");
    // its loops run (its heartbeat is in), and its first look at the outbox found nothing
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while place.store.last_worker_seen().await.unwrap().is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first worker never beat"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let info = place.store.park(Agent::once().halt().await).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    kill(first);
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());
    let next = worker(&place, &receiver, "w-next", "50");
    let ns = delivered(place.store.as_ref(), &info.run_id).await;
    kill(next);
    assert_eq!(ns.len(), 1);
    assert_eq!(
        (ns[0].state, ns[0].attempts),
        (NotificationState::Delivered, 1)
    );
    let handled = receiver.handled();
    assert_eq!(handled.len(), 1);
    assert_eq!(handled[0]["notification"], ns[0].id.as_str());
    assert_eq!(handled[0]["request"]["id"], info.request_id.as_str());
}

/// A worker is killed while its delivery is in flight (the receiver took the POST and has
/// not answered); once the lease runs out the next worker delivers it again. The receiver
/// saw the id twice and handles it once.
async fn killed_mid_delivery(kind: &str) {
    let Some(place) = place(kind, "worker::notify").await else {
        return;
    };
    let receiver = HttpReceiver::start(vec![Reply::Stall]).await;
    let first = worker(&place, &receiver, "w-first", "50");
    let info = place.store.park(Agent::once().halt().await).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while receiver.requests().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first worker never posted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    kill(first);
    let next = worker(&place, &receiver, "w-next", "50");
    let ns = delivered(place.store.as_ref(), &info.run_id).await;
    kill(next);
    assert_eq!(
        (ns[0].state, ns[0].attempts),
        (NotificationState::Delivered, 2)
    );
    let requests = receiver.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].0["notification"], requests[1].0["notification"]);
    assert_eq!(receiver.handled().len(), 1);
    // the history has the recorded attempt, by the next worker's notifier
    let history = place
        .store
        .info(&info.run_id)
        .await
        .unwrap()
        .unwrap()
        .history;
    let last = history.last().unwrap();
    assert_eq!(
        (last.by.as_deref(), last.attempt, last.outcome.as_deref()),
        (Some("hook"), Some(2), Some("delivered"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_worker_killed_between_the_park_and_the_delivery_still_delivers() {
    killed_between_the_park_and_the_delivery("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_worker_killed_between_the_park_and_the_delivery_still_delivers() {
    killed_between_the_park_and_the_delivery("postgres").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_worker_killed_mid_delivery_still_delivers_once_per_id() {
    killed_mid_delivery("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_worker_killed_mid_delivery_still_delivers_once_per_id() {
    killed_mid_delivery("postgres").await;
}
