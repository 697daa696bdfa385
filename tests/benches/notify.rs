//! Park to delivery: how long after a park its notification reaches the notifier, with a
//! `Worker` running a `notify::Deliverer` on the same store, on SQLite and on PostgreSQL
//! (`TOOLNEXUS_PG_URL`; skipped with a notice without it). One run is parked at a time and
//! the next only after the last was delivered, so each figure is one notification's way
//! alone: the park's commit, the deliverer's wake-up (in-process: the store wakes it), its
//! claim, the notifier's call and the attempt recorded. The notifier is in-process (it
//! records when it was called): the figure is the outbox's and the deliverer's, not a
//! network's. Prints p50 and p99 over `ROUNDS` parks, then divan's table of the same loop.
//!
//! `cargo bench -p toolnexus-tests --bench notify`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use divan::Bencher;
use tokio::sync::Notify;
use toolnexus::CancellationToken;
use toolnexus::notify::{BoxFuture, Deliverer, Notice, Notifier, NotifyError};
use toolnexus::store::{PostgresStore, RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus_tests::pg::SchemaGuard;
use toolnexus_tests::store_conformance::Agent;

/// Parks measured per store for the printed percentiles.
const ROUNDS: usize = 300;

/// Tells the bench when it was called.
struct Stamp {
    at: Mutex<Option<Instant>>,
    told: Notify,
}

impl Notifier for Stamp {
    fn deliver<'a>(&'a self, _notice: &'a Notice) -> BoxFuture<'a, Result<(), NotifyError>> {
        Box::pin(async move {
            *self.at.lock().unwrap() = Some(Instant::now());
            self.told.notify_one();
            Ok(())
        })
    }
}

/// A store with the notifier `stamp`, a running worker delivering through it, and a
/// runtime to drive them.
struct Rig {
    rt: tokio::runtime::Runtime,
    store: Arc<dyn RunStore>,
    stamp: Arc<Stamp>,
    stop: CancellationToken,
    _guard: Option<Box<dyn std::any::Any>>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Rig {
    fn new(kind: &str) -> Option<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (store, guard): (Arc<dyn RunStore>, Option<Box<dyn std::any::Any>>) =
            rt.block_on(async {
                if kind == "sqlite" {
                    let dir = std::env::temp_dir()
                        .join(format!("toolnexus-bench-notify-{}", std::process::id()));
                    let _ = std::fs::remove_dir_all(&dir);
                    std::fs::create_dir_all(&dir).expect("dir");
                    let store = SqliteStore::open(dir.join("runs.db"))
                        .await
                        .expect("store")
                        .with_notifiers(["stamp"])
                        .expect("name");
                    Some((Arc::new(store) as Arc<dyn RunStore>, None))
                } else {
                    let url = std::env::var("TOOLNEXUS_PG_URL")
                        .ok()
                        .filter(|u| !u.is_empty())?;
                    let (store, guard): (PostgresStore, SchemaGuard) =
                        toolnexus_tests::pg::fresh_store(&url, "bench_notify").await;
                    let store = store.with_notifiers(["stamp"]).expect("name");
                    Some((
                        Arc::new(store) as Arc<dyn RunStore>,
                        Some(Box::new(guard) as Box<dyn std::any::Any>),
                    ))
                }
            })?;
        let stamp = Arc::new(Stamp {
            at: Mutex::new(None),
            told: Notify::new(),
        });
        let deliverer = Deliverer::builder(store.clone())
            .notifier("stamp", stamp.clone())
            .build();
        let agent = Agent::once();
        let worker = Worker::builder(store.clone(), agent.client(), Agent::toolkit())
            .deliverer(deliverer)
            .build();
        let stop = CancellationToken::new();
        rt.spawn({
            let stop = stop.clone();
            async move { worker.run(stop.cancelled_owned()).await }
        });
        Some(Self {
            rt,
            store,
            stamp,
            stop,
            _guard: guard,
        })
    }

    /// Parks one run and waits for its delivery; returns the time from the park's call to the
    /// notifier's.
    fn one(&self, record: toolnexus::PendingRun) -> Duration {
        self.rt.block_on(async {
            *self.stamp.at.lock().unwrap() = None;
            let started = Instant::now();
            self.store.park(record).await.expect("park");
            loop {
                if let Some(at) = *self.stamp.at.lock().unwrap() {
                    return at - started;
                }
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), self.stamp.told.notified()).await;
            }
        })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn report(kind: &str) {
    let Some(rig) = Rig::new(kind) else {
        eprintln!("notice: notify measures nothing on {kind}: TOOLNEXUS_PG_URL is not set");
        return;
    };
    let records: Vec<_> = (0..ROUNDS)
        .map(|_| rig.rt.block_on(Agent::once().halt()))
        .collect();
    let mut times: Vec<Duration> = records.into_iter().map(|r| rig.one(r)).collect();
    times.sort();
    println!(
        "notify: park to delivery with a worker on {kind}, {ROUNDS} parks: p50 {:.2} ms, p99 {:.2} ms",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0
    );
}

fn main() {
    report("sqlite");
    report("postgres");
    divan::main();
}

fn bench(bencher: Bencher<'_, '_>, kind: &str) {
    let Some(rig) = Rig::new(kind) else {
        return;
    };
    bencher
        .with_inputs(|| rig.rt.block_on(Agent::once().halt()))
        .bench_local_values(|record| rig.one(record));
}

/// Park to delivery on SQLite.
#[divan::bench(sample_count = 100, sample_size = 1)]
fn park_to_delivery_sqlite(bencher: Bencher<'_, '_>) {
    bench(bencher, "sqlite");
}

/// Park to delivery on PostgreSQL.
#[divan::bench(sample_count = 50, sample_size = 1)]
fn park_to_delivery_postgres(bencher: Bencher<'_, '_>) {
    bench(bencher, "postgres");
}
