//! The `Worker` on every store (memory, SQLite, PostgreSQL when `TOOLNEXUS_PG_URL` is set):
//! resuming recorded answers, expiring requests on time, taking over lapsed runs, renewing
//! leases, holding at most N runs, shutting down gracefully, backing off when the store fails.

mod behaviour;
mod crashes;
mod escalation;
mod failing;
mod notify;
mod processes;
mod reconcile;
mod retries;
mod rules;
mod together;
mod votes;

// last: what this binary skipped (its tests that need a missing component pass without running)
toolnexus_tests::skip_summary!();

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use toolnexus::store::{MemoryStore, RunStore, SqliteStore};
use toolnexus::worker::{Worker, WorkerStats};
use toolnexus::{CancellationToken, Client, Toolkit};

/// A store under test and what keeps it alive (a temporary file, a schema).
pub(crate) struct Backend {
    pub(crate) name: &'static str,
    pub(crate) store: Arc<dyn RunStore>,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every store available here, fresh and empty, with this lease.
pub(crate) async fn stores(test: &str, lease: Duration) -> Vec<Backend> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "toolnexus-worker-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = SqliteStore::open(dir.join("runs.db"))
        .await
        .unwrap()
        .with_lease(lease);
    let mut all = vec![
        Backend {
            name: "memory",
            store: Arc::new(MemoryStore::new().with_lease(lease)),
            _guard: None,
        },
        Backend {
            name: "sqlite",
            store: Arc::new(sqlite),
            _guard: Some(Box::new(TempDir(dir))),
        },
    ];
    if let Some(url) = toolnexus_tests::pg::url(test) {
        let (store, guard) = toolnexus_tests::pg::fresh_store(&url, "worker").await;
        all.push(Backend {
            name: "postgres",
            store: Arc::new(store.with_lease(lease)),
            _guard: Some(Box::new(guard)),
        });
    }
    all
}

/// Every store available here, fresh and empty, with a 30 s lease (no take-over in a test).
pub(crate) async fn every_store(test: &str) -> Vec<Backend> {
    stores(test, Duration::from_secs(30)).await
}

/// A worker running on a task until [`Running::stop`].
pub(crate) struct Running {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<WorkerStats>,
}

impl Running {
    /// Stops the worker (graceful shutdown) and returns its stats.
    pub(crate) async fn stop(self) -> WorkerStats {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("the worker stops")
            .expect("the worker does not panic")
    }
}

/// Starts `worker` on a task.
pub(crate) fn start(worker: Worker) -> Running {
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { worker.run(stop.cancelled_owned()).await }
    });
    Running { stop, task }
}

/// A worker over `store` with `client` and `toolkit`, named `name`, polling every 200 ms.
pub(crate) fn worker(store: &Backend, client: Client, toolkit: Toolkit, name: &str) -> Worker {
    Worker::builder(Arc::clone(&store.store), client, toolkit)
        .name(name)
        .poll(Duration::from_millis(200))
        .build()
}

/// Starts the `run_worker` process (`helpers run_worker`) with `args` and `env` (stdin and stdout piped; its stdout
/// lines read on a thread), once it says `ready`: the process and its later lines.
pub(crate) fn run_worker(
    args: &[&str],
    env: &[(&str, &str)],
    name: &str,
) -> (Child, Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_helpers"))
        .arg("run_worker")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts");
    let out = child.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let ready = lines
        .recv_timeout(Duration::from_secs(30))
        .expect("the worker says ready");
    assert_eq!(ready, "ready", "{name}");
    (child, lines)
}

/// Records `by`'s acceptance (`data`) of request `id` in `s`'s store.
pub(crate) async fn accept(s: &Backend, id: &str, data: &str, by: &str) {
    s.store
        .submit(&toolnexus::Answer::accept(id, data), by)
        .await
        .unwrap();
}

/// Run `run_id` of `s`'s store once it finished (20 s at most).
pub(crate) async fn finished(s: &Backend, run_id: &str) -> toolnexus::store::StoredRun {
    s.store
        .wait_finished(run_id, Duration::from_secs(20))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{}: the run did not finish", s.name))
}

/// Claims the next answered run of `s`'s store as `worker` and resumes it with `client` and
/// `toolkit` to its next stop.
pub(crate) async fn resume_next(
    s: &Backend,
    worker: &str,
    client: &Client,
    toolkit: &Toolkit,
) -> toolnexus::RunResult {
    let claim = s.store.claim_next(worker).await.unwrap().expect("answered");
    client
        .resume_claim(s.store.as_ref(), &claim, toolkit)
        .await
        .unwrap()
}
