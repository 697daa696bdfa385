//! Answer-to-resume latency on PostgreSQL: `RUNS` runs are parked, two workers (each its own
//! `PostgresStore` on the schema, as two processes would have; LISTEN/NOTIFY wakes them) wait
//! for work, and the runs' answers are submitted at a steady `RATE` per second (each submit
//! on a task of its own, started on its tick, so a slow one does not hold back the next).
//! For each answer the latency is from `RunStore::submit` returning to the worker's resume
//! running the answered tool; p50, p90, p99 and the maximum are printed (target: p99 at
//! most 50 ms).
//!
//! Public API only (`Worker`, `PostgresStore`, `RunStore::park`/`submit`), so it measures the
//! same thing whatever the store's internals. Needs `TOOLNEXUS_PG_URL`
//! (`scripts/postgres.sh start`); without it, it says so and exits (a bench, not a test).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench answer_resume`
//! (`TOOLNEXUS_BENCH_RUNS` sets the number of runs, 1000 by default: ten seconds at 100/s.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::store::{PostgresStore, RunStore};
use toolnexus::worker::Worker;
use toolnexus::{CancellationToken, FnTool, Request, ToolResult, Toolkit};
use toolnexus_tests::pg::{SchemaGuard, fresh_schema};
use toolnexus_tests::store_conformance::Agent;

/// Answers submitted per second.
const RATE: u64 = 100;
/// Runs parked and answered, unless `TOOLNEXUS_BENCH_RUNS` says otherwise.
const RUNS: usize = 1000;
/// Workers, each with its own store (connection pool and listener).
const WORKERS: usize = 2;

/// When each answered request's tool started running again, by request id.
type Resumed = Arc<Mutex<HashMap<String, Instant>>>;

fn main() {
    let Some(url) = std::env::var("TOOLNEXUS_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!(
            "answer_resume: TOOLNEXUS_PG_URL is not set, nothing measured; eval \"$(scripts/postgres.sh start)\" to run it"
        );
        return;
    };
    let runs = std::env::var("TOOLNEXUS_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RUNS);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let schema = fresh_schema("bench_answer_resume");
    let _guard = SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let latencies = rt.block_on(measure(&url, &schema, runs));
    report(runs, &latencies);
}

/// The `ask` tool of [`Agent`]: suspends on a fresh call; answered, it notes when it ran.
fn toolkit(resumed: &Resumed) -> Toolkit {
    let resumed = Arc::clone(resumed);
    let ask = FnTool::builder("ask")
        .description("Asks the user a question.")
        .handler(move |_args, ctx| {
            let reply = match ctx.answer() {
                Some(answer) => {
                    let at = Instant::now();
                    resumed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(answer.id.clone(), at);
                    ToolResult::success("hello")
                }
                None => ToolResult::suspended(Request::input("What is your name?")),
            };
            async move { reply }
        })
        .build()
        .expect("the ask tool builds");
    Toolkit::builder()
        .tool(ask)
        .build()
        .expect("the toolkit builds")
}

async fn measure(url: &str, schema: &str, runs: usize) -> Vec<Duration> {
    let store: Arc<dyn RunStore> = Arc::new(
        PostgresStore::connect_in_schema(url, schema)
            .await
            .expect("the store connects"),
    );
    let mut requests = Vec::with_capacity(runs);
    for _ in 0..runs {
        let record = Agent::once().halt().await;
        requests.push(record.pending().clone());
        store.park(record).await.expect("park");
    }

    let resumed: Resumed = Arc::default();
    let stop = CancellationToken::new();
    let mut workers = Vec::with_capacity(WORKERS);
    for i in 0..WORKERS {
        let own: Arc<dyn RunStore> = Arc::new(
            PostgresStore::connect_in_schema(url, schema)
                .await
                .expect("a worker's store connects"),
        );
        let worker = Worker::builder(own, Agent::once().client(), toolkit(&resumed))
            .name(format!("bench-{i}"))
            .concurrency(8)
            .build();
        let stop = stop.clone();
        workers.push(tokio::spawn(async move {
            worker.run(stop.cancelled_owned()).await
        }));
    }
    // the workers find nothing to do and wait on their listeners
    tokio::time::sleep(Duration::from_millis(500)).await;

    let every = Duration::from_nanos(1_000_000_000 / RATE);
    let start = tokio::time::Instant::now();
    let mut submits = Vec::with_capacity(runs);
    for (i, request) in requests.into_iter().enumerate() {
        tokio::time::sleep_until(start + every * u32::try_from(i).expect("few runs")).await;
        let store = Arc::clone(&store);
        submits.push(tokio::spawn(async move {
            let answer = request.accept(json!("Ada"));
            store.submit(&answer, "bench").await.expect("submit");
            (answer.id, Instant::now())
        }));
    }
    let mut submitted = Vec::with_capacity(runs);
    for s in submits {
        submitted.push(s.await.expect("a submit"));
    }
    let offered = start.elapsed();

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = resumed.lock().unwrap_or_else(PoisonError::into_inner).len();
        if n >= runs {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {n} of {runs} runs resumed within a minute"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.cancel();
    for w in workers {
        w.await.expect("a worker");
    }
    println!(
        "answer_resume: {runs} answers submitted in {offered:.2?} ({:.1}/s offered)",
        rate(runs, offered)
    );
    let resumed = resumed.lock().unwrap_or_else(PoisonError::into_inner);
    let mut latencies: Vec<Duration> = submitted
        .iter()
        .map(|(id, at)| {
            let ran = resumed.get(id).expect("every answered run resumed");
            // a resume can start before the submit's reply reached the submitter
            ran.saturating_duration_since(*at)
        })
        .collect();
    latencies.sort();
    latencies
}

#[allow(clippy::cast_precision_loss)] // counts far below 2^52
fn rate(n: usize, took: Duration) -> f64 {
    n as f64 / took.as_secs_f64()
}

/// The latency at quantile `q` (nearest rank) of sorted `latencies`.
fn quantile(latencies: &[Duration], q: f64) -> Duration {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )] // a rank within the slice
    let rank = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len());
    latencies[rank - 1]
}

fn report(runs: usize, latencies: &[Duration]) {
    println!(
        "answer-to-resume latency, PostgreSQL, {WORKERS} workers, {RATE} answers/s, {runs} runs: p50 {:.2?}, p90 {:.2?}, p99 {:.2?}, max {:.2?} (target p99 <= 50 ms)",
        quantile(latencies, 0.50),
        quantile(latencies, 0.90),
        quantile(latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
    );
}
