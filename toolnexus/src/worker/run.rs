//! [`Worker::run`]: three loops side by side until shutdown, then a drain. The claim loop claims
//! while there is room and work (each claim starts a task that, once its run is done, claims
//! the next itself while work is left) and sleeps until a wake-up; the deadline loop sleeps
//! until the nearest deadline and expires what is due. Apart, so expiry never queues behind
//! claims: a worker kept busy by a backlog of answered runs still expires each request on
//! time. The heartbeat loop records that the worker is alive every `HEARTBEAT_EVERY`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::stats::bump;
use super::{Worker, WorkerStats};
use crate::store::{HEARTBEAT_EVERY, StoreError};

/// The first wait after a store failure, or after a deadline that passed with nothing to do;
/// also the shortest time between two looks for deadlines.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// A doubling wait, from [`FIRST_BACKOFF`] up to a ceiling.
pub(super) struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    pub(super) fn new(max: Duration) -> Self {
        Self {
            next: FIRST_BACKOFF,
            max,
        }
    }

    pub(super) fn take(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(self.max);
        now
    }

    fn reset(&mut self) {
        self.next = FIRST_BACKOFF;
    }
}

/// What the deadline loop found.
enum Due {
    /// Nothing due: sleep this long at most.
    In(Duration),
    /// Requests expired: their runs wait for a worker; look again at once.
    Expired,
    /// A deadline passed with nothing to expire (a lapsed lease): a worker with room takes
    /// the run over; look again after this doubling wait.
    Lapsed(Duration),
}

impl Worker {
    /// Drives the store's runs until `shutdown` completes (see the [module docs](super)), then
    /// stops claiming, lets the runs in flight finish for up to the [grace](super::WorkerBuilder::grace),
    /// releases the rest, and returns what it did.
    ///
    /// Store failures never end it: it logs them, backs off and tries again.
    pub async fn run(&self, shutdown: impl Future<Output = ()> + Send) -> WorkerStats {
        let span = tracing::info_span!("toolnexus.worker", worker = %self.inner.config.name);
        self.run_inner(shutdown).instrument(span).await
    }

    async fn run_inner(&self, shutdown: impl Future<Output = ()> + Send) -> WorkerStats {
        let config = &self.inner.config;
        // a store may start listening on its first wait: before the first look
        self.inner.store.wait_for_work(Duration::ZERO).await;
        tracing::info!(concurrency = config.concurrency, "worker: started");
        let stop = CancellationToken::new();
        // the deadline loop tells the claim loop when runs became due
        let due = Notify::new();
        let mut tasks = JoinSet::new();
        let stop_runs = CancellationToken::new();
        tokio::join!(
            async {
                shutdown.await;
                stop.cancel();
            },
            self.deadlines(&stop, &due),
            self.claims(&stop, &due, &mut tasks, &stop_runs),
            self.heartbeats(&stop),
            self.deliveries(&stop),
        );
        tracing::info!(
            in_flight = tasks.len(),
            grace = ?config.grace,
            "worker: shutting down; no more claims"
        );
        let drained = tokio::time::timeout(config.grace, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            stop_runs.cancel();
            while tasks.join_next().await.is_some() {}
        }
        tracing::info!("worker: stopped");
        self.inner.stats.snapshot()
    }

    /// The delivery loop, when the worker was given a deliverer: the store's notifications,
    /// until shutdown ([`Deliverer::run`](crate::notify::Deliverer::run)).
    async fn deliveries(&self, stop: &CancellationToken) {
        if let Some(deliverer) = &self.inner.deliverer {
            deliverer.run(stop.cancelled()).await;
        }
    }

    /// The heartbeat loop: records in the store that this worker is alive, now and every
    /// [`HEARTBEAT_EVERY`], so an answer page can tell whether a worker will take an answer up
    /// ([`RunStore::last_worker_seen`](crate::store::RunStore::last_worker_seen)). A failed
    /// heartbeat is logged and tried again at the next beat.
    async fn heartbeats(&self, stop: &CancellationToken) {
        let inner = &*self.inner;
        while !stop.is_cancelled() {
            if let Err(e) = inner
                .store
                .heartbeat(&inner.config.name, SystemTime::now())
                .await
            {
                bump(&inner.stats.store_errors);
                tracing::warn!(error = %e, "worker: cannot record its heartbeat");
            }
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep(HEARTBEAT_EVERY) => {}
            }
        }
    }

    /// The claim loop: claims while there is room and work, then sleeps until a run ends, the
    /// store or the deadline loop tells of work, or the poll passes.
    async fn claims(
        &self,
        stop: &CancellationToken,
        due: &Notify,
        tasks: &mut JoinSet<()>,
        stop_runs: &CancellationToken,
    ) {
        let inner = &*self.inner;
        let config = &inner.config;
        let store = inner.store.as_ref();
        let permits = Arc::new(Semaphore::new(config.concurrency));
        let mut failures = Backoff::new(config.max_backoff);
        let mut depth_read: Option<tokio::time::Instant> = None;
        while !stop.is_cancelled() {
            let mut failed: Option<StoreError> = None;
            while let Ok(permit) = Arc::clone(&permits).try_acquire_owned() {
                match store.claim_next(&config.name).await {
                    Ok(Some(claim)) => {
                        tasks.spawn(self.clone().drive_chain(
                            claim,
                            permit,
                            stop.clone(),
                            stop_runs.clone(),
                        ));
                    }
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
                if stop.is_cancelled() {
                    return;
                }
            }
            let wait = if let Some(e) = failed {
                bump(&inner.stats.store_errors);
                let wait = failures.take();
                tracing::warn!(error = %e, retry_in = ?wait, "worker: the run store failed");
                wait
            } else {
                failures.reset();
                // the queue depth, read at most once a poll
                if depth_read.is_none_or(|at| at.elapsed() >= config.poll) {
                    depth_read = Some(tokio::time::Instant::now());
                    if let Ok(depth) = store.waiting().await {
                        inner.stats.queue_depth.store(depth, Ordering::Relaxed);
                    }
                }
                config.poll
            };
            // full: only a run's end makes room (or the poll, to read the depth again)
            let full = permits.available_permits() == 0;
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                () = due.notified() => {}
                () = store.wait_for_work(wait), if !full => {}
                () = tokio::time::sleep(wait), if full => {}
            }
        }
    }

    /// The deadline loop: sleeps until the nearest deadline (a timer, not a poll; woken early
    /// when the store tells of a change, at most once per [`FIRST_BACKOFF`]), expires what is
    /// due, and tells the claim loop.
    async fn deadlines(&self, stop: &CancellationToken, due: &Notify) {
        let inner = &*self.inner;
        let mut failures = Backoff::new(inner.config.max_backoff);
        let mut idle = Backoff::new(inner.config.poll);
        while !stop.is_cancelled() {
            let looked = tokio::time::Instant::now();
            let wait = match self.deadline(&mut idle).await {
                Ok(Due::In(left)) => {
                    failures.reset();
                    left
                }
                Ok(Due::Expired) => {
                    failures.reset();
                    due.notify_one();
                    continue;
                }
                Ok(Due::Lapsed(wait)) => {
                    failures.reset();
                    due.notify_one();
                    wait
                }
                Err(e) => {
                    bump(&inner.stats.store_errors);
                    let wait = failures.take();
                    tracing::warn!(error = %e, retry_in = ?wait, "worker: the run store failed");
                    wait
                }
            };
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = inner.store.wait_for_work(wait) => {
                    // a wake-up (a run parked, say, with a nearer deadline): look again, but
                    // not more often than every FIRST_BACKOFF
                    tokio::select! {
                        biased;
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep_until(looked + FIRST_BACKOFF.min(wait)) => {}
                    }
                }
            }
        }
    }

    /// Looks for the nearest deadline, and expires what is due. A deadline that passed with
    /// nothing to expire (a lapsed lease, taken once there is room) waits a doubling while
    /// (reset once something is due later or expires), so the loop never spins on it.
    async fn deadline(&self, idle: &mut Backoff) -> Result<Due, StoreError> {
        let inner = &*self.inner;
        let now = SystemTime::now();
        let Some(due) = inner.store.next_due().await? else {
            idle.reset();
            return Ok(Due::In(inner.config.poll));
        };
        if let Ok(left) = due.duration_since(now)
            && !left.is_zero()
        {
            idle.reset();
            return Ok(Due::In(left.min(inner.config.poll)));
        }
        let expired = inner.store.expire().await?;
        if !expired.is_empty() {
            idle.reset();
            inner
                .stats
                .expired
                .fetch_add(u64::try_from(expired.len()).unwrap_or(0), Ordering::Relaxed);
            tracing::info!(runs = expired.len(), "worker: requests expired");
            return Ok(Due::Expired);
        }
        Ok(Due::Lapsed(idle.take()))
    }
}
