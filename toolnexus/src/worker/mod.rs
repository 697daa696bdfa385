//! [`Worker`]: drives every stored run that needs a worker, so the host only starts one.
//!
//! A worker is built from a [`RunStore`], the [`Client`] and the [`Toolkit`] the runs were
//! started with; [`Worker::run`] then, until its shutdown future completes:
//!
//! - **resumes answered runs**: answers recorded by anyone ([`RunStore::submit`]: an answer
//!   page, an API, another process) are claimed ([`RunStore::claim_next`]) and resumed
//!   ([`Client::resume_claim`]), which checkpoints and records the outcome;
//! - **expires requests on time**: it sleeps until the nearest deadline
//!   ([`RunStore::next_due`]), a timer rather than a poll, then [expires](RunStore::expire)
//!   what is due, so the model reads `declined/expired: <prompt>` and the run goes on; this
//!   is a loop of its own beside the claims, so a worker kept busy by a backlog of answers
//!   still expires on time, and expired runs are claimed before answered ones;
//! - **takes over runs whose worker died**, from their last checkpoint, once their lease ran
//!   out; a call of a tool that is not idempotent that the dead worker had started is not run
//!   again: the run parks on a [`reconcile`](crate::reconcile) request and a person decides;
//! - **retries a failed resume a bounded number of times**: each failure is recorded with
//!   its error in the run's history ([`RunStore::fail`]), the run is tried again after a
//!   doubling [delay](WorkerBuilder::retry_delay), and after
//!   [`max_attempts`](WorkerBuilder::max_attempts) failures it is given up
//!   ([`RunState::Failed`](crate::store::RunState::Failed));
//! - **gives up a run that keeps crashing its worker**: a resume that kills its worker
//!   process (an abort, a crash in native code, the OOM killer) returns no error to record,
//!   so each takeover after a lapsed lease counts as an attempt too (its history event
//!   carries the attempt number, [`Claim::attempt`](crate::store::Claim::attempt)); the
//!   worker that takes a run over past [`max_attempts`](WorkerBuilder::max_attempts) does
//!   not resume it but ends it [`Failed`](crate::store::RunState::Failed), with the reason
//!   "the run crashed its worker N times" in its history;
//! - **renews the leases** of the runs it holds while they run (a third of the lease, each
//!   time), so a long model call never loses its run; holds at most
//!   [`concurrency`](WorkerBuilder::concurrency) runs at once;
//! - **wakes when told** ([`RunStore::wait_for_work`]: PostgreSQL `LISTEN/NOTIFY` from any
//!   process, an in-process signal for the memory and SQLite stores), and otherwise on a
//!   bounded [poll](WorkerBuilder::poll); when the store fails it backs off (doubling up to
//!   [`max_backoff`](WorkerBuilder::max_backoff)) and never spins;
//! - **says it is alive**: it records a heartbeat in the store when it starts and every
//!   [`HEARTBEAT_EVERY`](crate::store::HEARTBEAT_EVERY) ([`RunStore::heartbeat`]), so an
//!   answer page tells the person whether a worker will take their answer up
//!   ([`RunStore::last_worker_seen`]);
//! - **shuts down gracefully**: once `shutdown` completes it claims nothing more, lets the
//!   runs in flight finish for up to [`grace`](WorkerBuilder::grace), then
//!   [releases](RunStore::release) the ones still running, so another worker goes on at once
//!   instead of after the lease.
//!
//! Each resumed run is a `toolnexus.worker.run` tracing span (run id, worker, whether it was
//! taken over); [`Worker::stats`] counts runs claimed, finished, failed, lost, released and
//! taken over, the queue depth last seen, and the answer-to-resume latency.
//!
//! Many workers, in one process or many, on one store share the work: a run is claimed by
//! one at a time (the store's claim), and a run is finished once (the lease's fencing token).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use toolnexus::store::{MemoryStore, RunState, RunStore};
//! use toolnexus::worker::Worker;
//! use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let ask = FnTool::builder("ask").description("Asks.")
//!     .handler(|_, ctx| async move {
//!         match ctx.answer_data::<String>() {
//!             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
//!             _ => ToolResult::suspended(Request::input("Your name?")),
//!         }
//!     })
//!     .build().unwrap();
//! let toolkit = Toolkit::builder().tool(ask).build().unwrap();
//! let store = Arc::new(MemoryStore::new());
//! let script = [Reply::tool_call("ask", serde_json::json!({})), Reply::text("done")];
//! let client = Client::builder(ScriptedModel::new(script))
//!     .model_name("m")
//!     .store(store.clone())
//!     .build()
//!     .unwrap();
//!
//! // the run halts and parks itself
//! let request = client.run("greet me", &toolkit).await.unwrap().pending.unwrap();
//!
//! // a worker, until shutdown
//! let worker = Worker::builder(store.clone(), client, toolkit).name("worker-1").build();
//! let stop = toolnexus::CancellationToken::new();
//! let running = tokio::spawn({
//!     let (worker, stop) = (worker.clone(), stop.clone());
//!     async move { worker.run(stop.cancelled_owned()).await }
//! });
//!
//! // anyone records the answer; the worker resumes the run
//! let info = store.submit(&request.accept("Ada"), "alice").await.unwrap();
//! let done = store.wait_finished(&info.run_id, Duration::from_secs(5)).await.unwrap().unwrap();
//! assert_eq!(done.result.unwrap().text, "done");
//! assert_eq!(done.info.answered_by(), Some("alice"));
//! assert_eq!(done.info.resumed_by(), Some("worker-1"));
//!
//! stop.cancel();
//! let stats = running.await.unwrap();
//! assert_eq!(stats.finished, 1);
//! # });
//! ```

mod drive;
mod run;
mod stats;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::client::Client;
use crate::store::RunStore;
use crate::toolkit::Toolkit;

pub use stats::WorkerStats;

/// The default number of runs a worker holds at once: 16.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// The default longest sleep of a worker that nobody wakes: 1 second.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// The default time runs in flight get to finish once shutdown begins: 30 seconds.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// The default longest wait after the store failed: 30 seconds.
pub const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The default number of times a worker tries to resume one answer before it gives the run
/// up: 5.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

/// The default wait before the first retry of a failed resume: 1 second (doubling with each
/// failure, at most [`MAX_RETRY_DELAY`]).
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(1);

/// The longest wait between two attempts of a failed resume: 15 minutes.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(15 * 60);

/// Drives the stored runs that need a worker; see the [module docs](self). Cheap to clone;
/// clones share the stats.
#[derive(Clone)]
pub struct Worker {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn RunStore>,
    client: Client,
    toolkit: Toolkit,
    config: Config,
    stats: stats::Counters,
    /// notify: the deliverer of the store's outbox this worker runs, if any
    deliverer: Option<crate::notify::Deliverer>,
}

#[derive(Clone, Debug)]
struct Config {
    name: String,
    concurrency: usize,
    poll: Duration,
    grace: Duration,
    max_backoff: Duration,
    max_attempts: u32,
    retry_delay: Duration,
}

impl fmt::Debug for Worker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("store", &self.inner.store)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Worker`]; see [`Worker::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct WorkerBuilder {
    store: Arc<dyn RunStore>,
    client: Client,
    toolkit: Toolkit,
    config: Config,
    deliverer: Option<crate::notify::Deliverer>,
}

impl fmt::Debug for WorkerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Starts a worker over `store`; it resumes runs with `client` and `toolkit` (the client
    /// and tools the runs were started with).
    pub fn builder(store: Arc<dyn RunStore>, client: Client, toolkit: Toolkit) -> WorkerBuilder {
        WorkerBuilder {
            store,
            client,
            toolkit,
            config: Config {
                name: crate::id::unique("worker"),
                concurrency: DEFAULT_CONCURRENCY,
                poll: DEFAULT_POLL,
                grace: DEFAULT_GRACE,
                max_backoff: DEFAULT_MAX_BACKOFF,
                max_attempts: DEFAULT_MAX_ATTEMPTS,
                retry_delay: DEFAULT_RETRY_DELAY,
            },
            deliverer: None,
        }
    }

    /// The worker's name: the owner of its claims, in each run's history.
    pub fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// What the worker has done so far.
    pub fn stats(&self) -> WorkerStats {
        self.inner.stats.snapshot()
    }
}

impl WorkerBuilder {
    /// The worker's name (default `worker-<unique id>`): the owner of its claims. Give each
    /// worker its own.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.config.name = name.into();
        self
    }

    /// How many runs the worker holds at once (default [`DEFAULT_CONCURRENCY`]; at least 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.config.concurrency = n.max(1);
        self
    }

    /// The longest the worker sleeps when nobody wakes it (default [`DEFAULT_POLL`]): how
    /// late it can notice work a store cannot tell it of (a SQLite file written by another
    /// process). At least 10 ms.
    pub fn poll(mut self, every: Duration) -> Self {
        self.config.poll = every.max(Duration::from_millis(10));
        self
    }

    /// How long runs in flight may go on once shutdown begins (default [`DEFAULT_GRACE`]);
    /// the ones still running then are released for another worker.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.config.grace = grace;
        self
    }

    /// The longest wait after the store failed (default [`DEFAULT_MAX_BACKOFF`]); waits start
    /// at 50 ms and double.
    pub fn max_backoff(mut self, max: Duration) -> Self {
        self.config.max_backoff = max.max(Duration::from_millis(50));
        self
    }

    /// How many times one answer's resume is tried before the run is given up (default
    /// [`DEFAULT_MAX_ATTEMPTS`]; at least 1). A failed resume (the model, a tool's host or the
    /// store failed) is recorded in the run's history with its error
    /// ([`RunStore::fail`]); the run is then retried from its last checkpoint, by any worker,
    /// after the [retry delay](Self::retry_delay), until this many attempts failed: then it
    /// becomes [`RunState::Failed`](crate::store::RunState::Failed) and no worker resumes it
    /// again.
    ///
    /// A resume that crashed its worker (taken over once its lease ran out, with no outcome
    /// recorded) counts as an attempt too: a run that kills every worker process that
    /// resumes it is given up, not taken over without end. Give every worker of a store the
    /// same number.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.config.max_attempts = n.max(1);
        self
    }

    /// The wait before the first retry of a failed resume (default [`DEFAULT_RETRY_DELAY`]);
    /// it doubles with each failure of the same answer, up to [`MAX_RETRY_DELAY`].
    pub fn retry_delay(mut self, first: Duration) -> Self {
        self.config.retry_delay = first;
        self
    }

    /// Also delivers the store's notifications with `deliverer` (a loop of its own beside
    /// the claims, until shutdown): see [`notify`](crate::notify).
    pub fn deliverer(mut self, deliverer: crate::notify::Deliverer) -> Self {
        self.deliverer = Some(deliverer);
        self
    }

    /// Finishes the worker; nothing runs until [`Worker::run`].
    pub fn build(self) -> Worker {
        Worker {
            inner: Arc::new(Inner {
                store: self.store,
                client: self.client,
                toolkit: self.toolkit,
                config: self.config,
                stats: stats::Counters::default(),
                deliverer: self.deliverer,
            }),
        }
    }
}
