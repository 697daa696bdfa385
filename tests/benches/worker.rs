//! The `Worker` against the bare loop it replaces, on the same store and in the same run:
//!
//! - per run: a worker (concurrency 1) resuming a batch of answered runs, against a loop that
//!   calls `claim_next` and `Client::resume_claim` directly (what a host wrote by hand before
//!   the worker), spawned on the same runtime as the worker's runs are, on the memory store,
//!   SQLite, and PostgreSQL when `TOOLNEXUS_PG_URL` is set (a bare loop run on the bench's
//!   main thread, where the runs were just parked, read them from that core's cache: on a
//!   2-vCPU machine it took 54 us a run there against 93 us on a runtime thread, and the
//!   worker's ratio swung between 1.15x and 1.7x from one process to the next with which
//!   core its thread ran on; pinned to one CPU, 1.03x);
//!   the ratio worker / bare is measured interleaved, batch by batch (`ratio::interleaved`),
//!   and printed after divan's table (target: at most 1.2);
//! - runs/s on PostgreSQL with 1, 2 and 4 workers (each its own store and connection pool,
//!   as separate processes would have; concurrency 8 each), resuming a batch of answered runs.
//!
//! Each batch's runs are parked and answered before its timer starts; the timer stops when
//! the last run of the batch is finished: both sides go through one [`Finishes`] store that
//! counts the `finish` calls and wakes the timer at the last (a worker's timer once polled
//! its stats every 200 us, on tokio's 1 ms timer: up to a millisecond per batch that was the
//! poll's, not the worker's).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench worker`

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use divan::Bencher;
use divan::counter::ItemsCount;
use serde_json::Value;
use tokio::sync::Notify;
use toolnexus::store::{
    Claim, ConversationStore, DamagedRun, MemoryStore, Page, PendingQuery, PostgresStore, RunInfo,
    RunStore, SqliteStore, StoreResult, StoredRun,
};
use toolnexus::worker::Worker;
use toolnexus::{Answer, BoxFuture, CancellationToken, Client, PendingRun, RunResult, Toolkit};
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

/// A store that counts the runs finished through it (`finish` calls that succeeded) and wakes
/// whoever waits for a number of them, once, when it is reached (not at every finish: a
/// wake-up per run would cost the measured side a thread's wake-up per run); every call goes
/// straight to the store it wraps.
#[derive(Debug)]
struct Finishes {
    inner: Arc<dyn RunStore>,
    finished: AtomicUsize,
    /// The count a waiter waits for.
    target: AtomicUsize,
    told: Notify,
}

impl Finishes {
    fn new(inner: Arc<dyn RunStore>) -> Self {
        Self {
            inner,
            finished: AtomicUsize::new(0),
            target: AtomicUsize::new(usize::MAX),
            told: Notify::new(),
        }
    }

    /// Waits until `n` runs were finished through this store.
    async fn reach(&self, n: usize) {
        self.target.store(n, Ordering::SeqCst);
        loop {
            let told = self.told.notified();
            if self.finished.load(Ordering::SeqCst) >= n {
                return;
            }
            told.await;
        }
    }
}

impl RunStore for Finishes {
    fn park(&self, record: PendingRun) -> BoxFuture<'_, StoreResult<RunInfo>> {
        self.inner.park(record)
    }
    fn get<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        self.inner.get(run_id)
    }
    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        self.inner.get_by_request(request_id)
    }
    fn claim<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        self.inner.claim(answer, owner)
    }
    fn submit<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        self.inner.submit(answer, answered_by)
    }
    fn claim_next<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        self.inner.claim_next(owner)
    }
    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.release(claim)
    }
    fn fail<'a>(
        &'a self,
        claim: &'a Claim,
        error: &'a str,
        retry_at: Option<SystemTime>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.fail(claim, error, retry_at)
    }
    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        self.inner.next_due()
    }
    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>> {
        self.inner.waiting()
    }
    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        self.inner.wait_for_work(timeout)
    }
    fn take_over<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        self.inner.take_over(owner)
    }
    fn renew<'a>(&'a self, claim: &'a mut Claim) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.renew(claim)
    }
    fn checkpoint<'a>(&'a self, claim: &'a Claim, state: Value) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.checkpoint(claim, state)
    }
    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        result: RunResult,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            let info = self.inner.finish(claim, result).await?;
            let n = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= self.target.load(Ordering::SeqCst) {
                self.told.notify_waiters();
            }
            Ok(info)
        })
    }
    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>> {
        self.inner.list_pending(query)
    }
    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>> {
        self.inner.list_damaged(limit)
    }
    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        self.inner.expire()
    }
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.delete(run_id)
    }
    fn conversations(&self) -> Option<&dyn ConversationStore> {
        self.inner.conversations()
    }
    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        self.inner.info(run_id)
    }
    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        self.inner.wait_change(run_id, version, timeout)
    }
    fn wait_finished<'a>(
        &'a self,
        run_id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        self.inner.wait_finished(run_id, timeout)
    }
}

/// A store under benchmark, with what keeps it alive.
struct Bench {
    rt: tokio::runtime::Runtime,
    store: Arc<dyn RunStore>,
    /// `store`, counting the runs finished through it.
    finishes: Arc<Finishes>,
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
        let finishes = Arc::new(Finishes::new(Arc::clone(&store)));
        Some(Self {
            rt,
            store,
            finishes,
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
        let (store, client, toolkit) = (
            Arc::clone(&self.finishes),
            self.client.clone(),
            self.toolkit.clone(),
        );
        self.rt.block_on(async move {
            let start = Instant::now();
            // a task of the runtime, as a host's loop (and the worker's runs) would be: both
            // sides read the runs the main thread parked from a runtime thread, so neither
            // gains from the cache of the core that wrote them
            let n = tokio::spawn(async move {
                let mut n = 0;
                while let Some(claim) = store.claim_next("bare").await.expect("claim_next") {
                    client
                        .resume_claim(store.as_ref(), &claim, &toolkit)
                        .await
                        .expect("resume");
                    n += 1;
                }
                n
            })
            .await
            .expect("the bare loop");
            assert_eq!(n, BATCH);
            start.elapsed()
        })
    }

    /// `workers` workers (`concurrency` runs each) until `n` runs are finished; their time.
    /// The workers' stores each count their finished runs.
    fn workers(&self, n: usize, workers: &[Arc<Finishes>], concurrency: usize) -> Duration {
        let before: usize = workers
            .iter()
            .map(|s| s.finished.load(Ordering::SeqCst))
            .sum();
        let stores = workers;
        let workers: Vec<Worker> = workers
            .iter()
            .enumerate()
            .map(|(i, store)| {
                let store: Arc<dyn RunStore> = Arc::clone(store) as Arc<dyn RunStore>;
                Worker::builder(store, self.client.clone(), self.toolkit.clone())
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
            if let [only] = stores {
                only.reach(before + n).await;
            } else {
                // several stores: each wakes at every finish (throughput, not per-run cost)
                for s in stores {
                    s.target.store(0, Ordering::SeqCst);
                }
                loop {
                    let told: Vec<_> = stores.iter().map(|s| s.told.notified()).collect();
                    let done: usize = stores
                        .iter()
                        .map(|s| s.finished.load(Ordering::SeqCst))
                        .sum();
                    if done >= before + n {
                        break;
                    }
                    futures_util::future::select_all(told.into_iter().map(Box::pin)).await;
                }
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
        let store = [Arc::clone(&self.finishes)];
        self.workers(BATCH, &store, 1)
    }

    /// More stores on the same PostgreSQL schema (each its own pool, like another process).
    fn more_stores(&self, n: usize) -> Vec<Arc<Finishes>> {
        let (url, schema) = self.pg.clone().expect("a PostgreSQL bench");
        (0..n)
            .map(|_| {
                let store = self
                    .rt
                    .block_on(PostgresStore::connect_in_schema(&url, &schema))
                    .expect("store");
                Arc::new(Finishes::new(Arc::new(store)))
            })
            .collect()
    }
}

/// The ratio worker / bare loop per run on each store, interleaved batch by batch.
fn report_ratios() {
    // `TOOLNEXUS_BENCH_STORES=memory,sqlite` measures only those (a profile of one store)
    let only = std::env::var("TOOLNEXUS_BENCH_STORES").ok();
    for kind in ["memory", "sqlite", "postgres"] {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|k| k == kind))
        {
            continue;
        }
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
