//! A worker process of the multi-process worker tests (`tests/tests/worker/processes.rs`): a
//! `toolnexus::worker::Worker` over a PostgreSQL schema or a SQLite file, resuming the runs of
//! `store_conformance::Agent` with an `ask` tool whose answered retry has a side effect: one
//! row in the `effects` table of the same database.
//!
//! ```text
//! run_worker postgres <url> <schema> <name> <lease ms> <concurrency> <poll ms>
//! run_worker sqlite <file> - <name> <lease ms> <concurrency> <poll ms>
//! ```
//!
//! Prints `ready` once it works; shuts down gracefully when its stdin closes (stop claiming,
//! drain, release), then prints `stats <json>`. With `RUN_WORKER_PAUSE_MS`, it pauses that
//! long after each side effect, before the checkpoint that records it (the crash window), so
//! a test that kills it lands there. With `RUN_WORKER_ABORT`, the tool aborts the process
//! after its side effect (a resume that crashes its worker every time); with
//! `RUN_WORKER_MAX_ATTEMPTS`, the worker's `max_attempts`. The tool says it is idempotent (a
//! crash re-runs it), unless `RUN_WORKER_NOT_IDEMPOTENT` is set (a crash inside it parks the
//! run on a `reconcile` request). With `RUN_WORKER_EDITABLE_PAY`, the runs are
//! `store_conformance::EditedPay`'s instead: a `pay` tool (not idempotent, its approvals
//! editable) whose approved run writes the side effect and pauses the same way. With
//! `RUN_WORKER_NOTIFY_URL`, the store writes a notification for the notifier `hook` at each
//! park, and the worker delivers them (a `notify::Deliverer`, the worker's lease and poll) as
//! webhooks signed with `receivers::SECRET` to that URL. With `RUN_WORKER_PAUSE_BEFORE_MS`,
//! `ask` pauses that long before its side effect (a worker killed there has not run it).

use std::io::BufRead;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolnexus::store::{PostgresStore, RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus::{CancellationToken, FnTool, ToolResult, Toolkit};
use toolnexus_tests::store_conformance::{Agent, EditedPay, editable_pay};

/// Where a side effect is written.
#[derive(Clone)]
enum Effects {
    Postgres(Arc<tokio_postgres::Client>, String),
    Sqlite(std::path::PathBuf),
}

impl Effects {
    async fn record(&self, request_id: &str, worker: &str) -> Result<(), String> {
        match self {
            Self::Postgres(db, sql) => db
                .execute(sql, &[&request_id, &worker])
                .await
                .map(drop)
                .map_err(|e| e.to_string()),
            Self::Sqlite(path) => {
                let (path, request_id, worker) =
                    (path.clone(), request_id.to_owned(), worker.to_owned());
                tokio::task::spawn_blocking(move || {
                    let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
                    conn.busy_timeout(Duration::from_secs(30))
                        .map_err(|e| e.to_string())?;
                    conn.execute(
                        "INSERT INTO effects (request_id, worker) VALUES (?1, ?2)",
                        (&request_id, &worker),
                    )
                    .map(drop)
                    .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| e.to_string())?
            }
        }
    }
}

fn pause() -> Option<Duration> {
    std::env::var("RUN_WORKER_PAUSE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis)
}

/// [`EditedPay`]'s `pay` tool, whose approved run writes its side effect (then pauses, or
/// aborts, as `ask` does) and returns `paid <amount> to <to>`.
fn pay_toolkit(effects: Effects, name: String) -> Toolkit {
    let pay = editable_pay(move |args, ctx| {
        let (effects, name) = (effects.clone(), name.clone());
        async move {
            let Some(answer) = ctx.answer() else {
                return ToolResult::error("the worker only resumes answered runs");
            };
            if let Err(e) = effects.record(&answer.id, &name).await {
                return ToolResult::error(format!("side effect failed: {e}"));
            }
            if let Some(pause) = pause() {
                tokio::time::sleep(pause).await;
            }
            if std::env::var_os("RUN_WORKER_ABORT").is_some() {
                eprintln!("run_worker {name}: the tool aborts the process");
                std::process::abort();
            }
            ToolResult::success(format!("paid {} to {}", args["amount"], args["to"]))
        }
    });
    Toolkit::builder()
        .tool(pay)
        .build()
        .expect("the toolkit builds")
}

/// The `ask` tool of [`Agent`], whose answered retry writes its side effect.
fn toolkit(effects: Effects, name: String) -> Toolkit {
    let mut ask = FnTool::builder("ask").description("Asks the user a question.");
    if std::env::var_os("RUN_WORKER_NOT_IDEMPOTENT").is_none() {
        ask = ask.idempotent();
    }
    let ask = ask
        .handler(move |_, ctx| {
            let (effects, name) = (effects.clone(), name.clone());
            async move {
                let Some(answer) = ctx.answer() else {
                    return ToolResult::error("the worker only resumes answered runs");
                };
                // (a declined answer never reaches the tool: the model reads it)
                if let Some(ms) = std::env::var("RUN_WORKER_PAUSE_BEFORE_MS")
                    .ok()
                    .and_then(|ms| ms.parse().ok())
                {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                if let Err(e) = effects.record(&answer.id, &name).await {
                    return ToolResult::error(format!("side effect failed: {e}"));
                }
                if let Some(pause) = pause() {
                    tokio::time::sleep(pause).await;
                }
                if std::env::var_os("RUN_WORKER_ABORT").is_some() {
                    eprintln!("run_worker {name}: the tool aborts the process");
                    std::process::abort();
                }
                let data = answer.data.clone().unwrap_or_default();
                ToolResult::success(format!("hello {data}"))
            }
        })
        .build()
        .expect("the ask tool builds");
    Toolkit::builder()
        .tool(ask)
        .build()
        .expect("the toolkit builds")
}

/// The deliverer of `RUN_WORKER_NOTIFY_URL`: the notifier `hook`, signed webhooks to `url`.
fn deliverer(
    store: Arc<dyn RunStore>,
    url: &str,
    name: &str,
    lease: Duration,
    poll: Duration,
) -> toolnexus::notify::Deliverer {
    let hook =
        toolnexus::notify::WebhookNotifier::new(url, toolnexus_tests::receivers::SECRET.to_vec())
            .expect("the webhook notifier");
    toolnexus::notify::Deliverer::builder(store)
        .name(name)
        .notifier("hook", Arc::new(hook))
        .lease(lease)
        .poll(poll)
        .retry_delay(Duration::from_millis(50))
        .build()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let [kind, at, schema, name, lease, concurrency, poll] = args.as_slice() else {
        eprintln!(
            "usage: run_worker <postgres|sqlite> <url|file> <schema|-> <name> <lease ms> <concurrency> <poll ms>"
        );
        return ExitCode::from(2);
    };
    let ms = |s: &str| Duration::from_millis(s.parse().expect("milliseconds"));
    let (lease, poll) = (ms(lease), ms(poll));
    let notify_url = std::env::var("RUN_WORKER_NOTIFY_URL").ok();
    let (store, effects): (Arc<dyn RunStore>, Effects) = match kind.as_str() {
        "postgres" => {
            let mut store = PostgresStore::connect_in_schema(at, schema)
                .await
                .expect("the store connects")
                .with_lease(lease);
            if notify_url.is_some() {
                store = store.with_notifiers(["hook"]).expect("a notifier name");
            }
            let (db, conn) = tokio_postgres::connect(at, tokio_postgres::NoTls)
                .await
                .expect("the effects connection");
            tokio::spawn(conn);
            let sql =
                format!("INSERT INTO \"{schema}\".effects (request_id, worker) VALUES ($1, $2)");
            (Arc::new(store), Effects::Postgres(Arc::new(db), sql))
        }
        "sqlite" => {
            let mut store = SqliteStore::open(at)
                .await
                .expect("the store opens")
                .with_lease(lease);
            if notify_url.is_some() {
                store = store.with_notifiers(["hook"]).expect("a notifier name");
            }
            (Arc::new(store), Effects::Sqlite(at.into()))
        }
        other => {
            eprintln!("unknown store `{other}`");
            return ExitCode::from(2);
        }
    };
    let (client, toolkit) = if std::env::var_os("RUN_WORKER_EDITABLE_PAY").is_some() {
        (EditedPay::client(), pay_toolkit(effects, name.clone()))
    } else {
        (Agent::once().client(), toolkit(effects, name.clone()))
    };
    let mut worker = Worker::builder(store.clone(), client, toolkit)
        .name(name.as_str())
        .concurrency(concurrency.parse().expect("a concurrency"))
        .poll(poll)
        .grace(Duration::from_secs(2));
    if let Ok(n) = std::env::var("RUN_WORKER_MAX_ATTEMPTS") {
        worker = worker.max_attempts(n.parse().expect("RUN_WORKER_MAX_ATTEMPTS: a number"));
    }
    if let Some(url) = &notify_url {
        worker = worker.deliverer(deliverer(store, url, name, lease, poll));
    }
    let worker = worker.build();
    let stop = CancellationToken::new();
    // stdin closing is the graceful shutdown
    std::thread::spawn({
        let stop = stop.clone();
        move || {
            for line in std::io::stdin().lock().lines() {
                if line.is_err() {
                    break;
                }
            }
            stop.cancel();
        }
    });
    println!("ready");
    let stats = worker.run(stop.cancelled_owned()).await;
    let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1000.0);
    println!(
        "stats {}",
        json!({
            "claimed": stats.claimed,
            "taken_over": stats.taken_over,
            "finished": stats.finished,
            "failed": stats.failed,
            "gave_up": stats.gave_up,
            "lost": stats.lost,
            "released": stats.released,
            "expired": stats.expired,
            "store_errors": stats.store_errors,
            "latency_p50_ms": ms(stats.latency_p50),
            "latency_p99_ms": ms(stats.latency_p99),
        })
    );
    ExitCode::SUCCESS
}
