//! The `Worker` against the bare loop it replaces, on the same store and in the same run:
//!
//! - per run: a worker (concurrency 1) resuming a batch of answered runs, against a loop that
//!   calls `claim_next` and `Client::resume_claim` directly (what a host wrote by hand before
//!   the worker), on the memory store, SQLite, and PostgreSQL when `TOOLNEXUS_PG_URL` is set;
//!   the ratio worker / bare is measured interleaved, batch by batch (`ratio::interleaved`),
//!   and printed after divan's table (target: at most 1.2);
//! - runs/s on PostgreSQL with 1, 2 and 4 workers (each its own store and connection pool,
//!   as separate processes would have; concurrency 8 each), resuming a batch of answered runs.
//!
//! Each batch's runs are parked and answered before its timer starts; the timer stops when
//! the last run of the batch is finished.
//!
//! `cargo bench -p toolnexus-tests --bench worker`

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use divan::Bencher;
use divan::counter::ItemsCount;
use toolnexus::store::{MemoryStore, PostgresStore, RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus::{CancellationToken, Client, Toolkit};
use toolnexus_tests::pg::{SchemaGuard, fresh_schema};
use toolnexus_tests::ratio::{benchmarking, interleaved};
use toolnexus_tests::store_conformance::Agent;

/// Runs per batch of the per-run comparison.
const BATCH: usize = 50;
/// Rounds of the interleaved comparison.
const ROUNDS: usize = 21;
/// Runs per batch of the PostgreSQL throughput benchmark.
const THROUGHPUT_BATCH: usize = 400;

fn main() {
    divan::main();
    if benchmarking() {
        report_ratios();
    }
}

fn pg_url() -> Option<String> {
    std::env::var("TOOLNEXUS_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A store under benchmark, with what keeps it alive.
struct Bench {
    rt: tokio::runtime::Runtime,
    store: Arc<dyn RunStore>,
    client: Client,
    toolkit: Toolkit,
    /// The PostgreSQL URL and schema, for more stores on it.
    pg: Option<(String, String)>,
    _keep: Option<Box<dyn std::any::Any>>,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Bench {
    fn new(kind: &str) -> Option<Self> {
        let rt = runtime();
        let mut pg = None;
        let (store, keep): (Arc<dyn RunStore>, Option<Box<dyn std::any::Any>>) = match kind {
            "memory" => (Arc::new(MemoryStore::new()), None),
            "sqlite" => {
                let dir = std::env::temp_dir().join(fresh_schema("toolnexus-bench-worker"));
                std::fs::create_dir_all(&dir).expect("dir");
                let store = rt
                    .block_on(SqliteStore::open(dir.join("runs.db")))
                    .expect("sqlite");
                (Arc::new(store), Some(Box::new(TempDir(dir))))
            }
            _ => {
                let url = pg_url()?;
                let schema = fresh_schema("bench_worker");
                let store = rt
                    .block_on(PostgresStore::connect_in_schema(&url, &schema))
                    .expect("postgres");
                pg = Some((url.clone(), schema.clone()));
                (Arc::new(store), Some(Box::new(SchemaGuard { url, schema })))
            }
        };
        Some(Self {
            rt,
            store,
            client: Agent::once().client(),
            toolkit: Agent::toolkit(),
            pg,
            _keep: keep,
        })
    }

    /// Parks `n` runs and records their answers (untimed).
    fn answered(&mut self, n: usize) {
        let records: Vec<_> = (0..n)
            .map(|_| self.rt.block_on(Agent::once().halt()))
            .collect();
        let store = Arc::clone(&self.store);
        self.rt.block_on(async move {
            for record in records {
                let request = record.pending().clone();
                store.park(record).await.expect("park");
                store
                    .submit(&request.accept("Ada"), "bench")
                    .await
                    .expect("submit");
            }
        });
    }

    /// The bare loop: `claim_next` and `resume_claim` until nothing is left; its time.
    fn bare(&self) -> Duration {
        let (store, client, toolkit) = (&self.store, &self.client, &self.toolkit);
        self.rt.block_on(async {
            let start = Instant::now();
            let mut n = 0;
            while let Some(claim) = store.claim_next("bare").await.expect("claim_next") {
                client
                    .resume_claim(store.as_ref(), &claim, toolkit)
                    .await
                    .expect("resume");
                n += 1;
            }
            assert_eq!(n, BATCH);
            start.elapsed()
        })
    }

    /// `workers` workers (`concurrency` runs each) until `n` runs are finished; their time.
    fn workers(&self, n: usize, workers: &[Arc<dyn RunStore>], concurrency: usize) -> Duration {
        let workers: Vec<Worker> = workers
            .iter()
            .enumerate()
            .map(|(i, store)| {
                Worker::builder(Arc::clone(store), self.client.clone(), self.toolkit.clone())
                    .name(format!("bench-{i}"))
                    .concurrency(concurrency)
                    .build()
            })
            .collect();
        self.rt.block_on(async {
            let stop = CancellationToken::new();
            let start = Instant::now();
            let running: Vec<_> = workers
                .iter()
                .map(|w| {
                    let (w, stop) = (w.clone(), stop.clone());
                    tokio::spawn(async move { w.run(stop.cancelled_owned()).await })
                })
                .collect();
            let total = u64::try_from(n).expect("small");
            while workers.iter().map(|w| w.stats().finished).sum::<u64>() < total {
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
            let took = start.elapsed();
            stop.cancel();
            for r in running {
                r.await.expect("worker");
            }
            took
        })
    }

    /// One worker, concurrency 1, until the batch is finished; its time.
    fn worker(&self) -> Duration {
        let store = [Arc::clone(&self.store)];
        self.workers(BATCH, &store, 1)
    }

    /// More stores on the same PostgreSQL schema (each its own pool, like another process).
    fn more_stores(&self, n: usize) -> Vec<Arc<dyn RunStore>> {
        let (url, schema) = self.pg.clone().expect("a PostgreSQL bench");
        (0..n)
            .map(|_| {
                let store = self
                    .rt
                    .block_on(PostgresStore::connect_in_schema(&url, &schema))
                    .expect("store");
                Arc::new(store) as Arc<dyn RunStore>
            })
            .collect()
    }
}

/// The ratio worker / bare loop per run on each store, interleaved batch by batch.
fn report_ratios() {
    for kind in ["memory", "sqlite", "postgres"] {
        let Some(b) = Bench::new(kind) else {
            println!("worker: {kind}: not measured (TOOLNEXUS_PG_URL is not set)");
            continue;
        };
        let b = RefCell::new(b);
        let mut worker = || {
            b.borrow_mut().answered(BATCH);
            b.borrow().worker()
        };
        let mut bare = || {
            b.borrow_mut().answered(BATCH);
            b.borrow().bare()
        };
        let m = interleaved(ROUNDS, &mut [&mut worker, &mut bare]);
        let per_run = |s: f64| s * 1e6 / f64::from(u32::try_from(BATCH).unwrap_or(1));
        println!(
            "worker: {kind}: a worker (concurrency 1) / the bare claim_next + resume_claim loop, per run: {:.3}x (median of {ROUNDS} interleaved rounds of {BATCH} runs; median {:.0} us vs {:.0} us per run)",
            m.ratios[0],
            per_run(m.medians[0]),
            per_run(m.medians[1]),
        );
    }
}

/// Times `run` over batches of `n` answered runs (parked and answered before each timer).
fn bench_batches(bencher: Bencher<'_, '_>, kind: &str, n: usize, run: impl Fn(&Bench) -> Duration) {
    let Some(b) = Bench::new(kind) else {
        eprintln!(
            "notice: the worker bench on {kind} measures nothing: TOOLNEXUS_PG_URL is not set"
        );
        return;
    };
    let b = RefCell::new(b);
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| b.borrow_mut().answered(n))
        .bench_local_values(|()| run(&b.borrow()));
}

/// The bare loop (`claim_next` + `resume_claim`), a batch of answered runs.
#[divan::bench(args = ["memory", "sqlite", "postgres"], sample_count = 10, sample_size = 1)]
fn bare_resume_claim_loop(bencher: Bencher<'_, '_>, kind: &str) {
    bench_batches(bencher, kind, BATCH, Bench::bare);
}

/// One worker (concurrency 1), the same batch.
#[divan::bench(args = ["memory", "sqlite", "postgres"], sample_count = 10, sample_size = 1)]
fn worker_concurrency_1(bencher: Bencher<'_, '_>, kind: &str) {
    bench_batches(bencher, kind, BATCH, Bench::worker);
}

/// Runs/s on PostgreSQL with this many workers (each its own store, concurrency 8).
#[divan::bench(args = [1, 2, 4], sample_count = 5, sample_size = 1)]
fn postgres_workers(bencher: Bencher<'_, '_>, workers: usize) {
    let Some(b) = Bench::new("postgres") else {
        eprintln!("notice: postgres_workers measures nothing: TOOLNEXUS_PG_URL is not set");
        return;
    };
    let stores = b.more_stores(workers);
    let b = RefCell::new(b);
    bencher
        .counter(ItemsCount::new(THROUGHPUT_BATCH))
        .with_inputs(|| b.borrow_mut().answered(THROUGHPUT_BATCH))
        .bench_local_values(|()| b.borrow().workers(THROUGHPUT_BATCH, &stores, 8));
}
