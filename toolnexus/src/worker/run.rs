//! [`Worker::run`]: claim while there is room and work, sleep until the nearest deadline or a
//! wake-up, back off when the store fails, drain at shutdown.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::stats::bump;
use super::{Worker, WorkerStats};
use crate::store::StoreError;

/// The first wait after a store failure, or after a deadline that passed with nothing to do.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// A doubling wait, from [`FIRST_BACKOFF`] up to a ceiling.
struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    fn new(max: Duration) -> Self {
        Self {
            next: FIRST_BACKOFF,
            max,
        }
    }

    fn take(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(self.max);
        now
    }

    fn reset(&mut self) {
        self.next = FIRST_BACKOFF;
    }
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
        let inner = &*self.inner;
        let config = &inner.config;
        let store = inner.store.as_ref();
        let permits = Arc::new(Semaphore::new(config.concurrency));
        let stop_runs = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let mut failures = Backoff::new(config.max_backoff);
        let mut idle = Backoff::new(config.poll);
        tokio::pin!(shutdown);
        // a store may start listening on its first wait: before the first look
        store.wait_for_work(Duration::ZERO).await;
        tracing::info!(concurrency = config.concurrency, "worker: started");
        let mut depth_read: Option<tokio::time::Instant> = None;
        loop {
            let mut failed: Option<StoreError> = None;
            // the nearest deadline first, full or not: what is due expires now (so any worker
            // with room takes its runs before answered ones); then sleep until the next one
            let mut wait = config.poll;
            match self.deadline(&mut idle).await {
                Ok(Some(until)) => wait = until,
                // requests expired: look again right after the claims
                Ok(None) => wait = Duration::ZERO,
                Err(e) => failed = Some(e),
            }
            if failed.is_none() && permits.available_permits() == 0 {
                // full: nothing to claim until a run ends or a deadline comes
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    Some(_) = tasks.join_next() => {}
                    () = tokio::time::sleep(wait.max(FIRST_BACKOFF)) => {}
                }
                continue;
            }
            // claim while there is room and work
            while failed.is_none()
                && let Ok(permit) = Arc::clone(&permits).try_acquire_owned()
            {
                match store.claim_next(&config.name).await {
                    Ok(Some(claim)) => {
                        idle.reset();
                        tasks.spawn(self.clone().drive(claim, permit, stop_runs.clone()));
                    }
                    Ok(None) => break,
                    Err(e) => failed = Some(e),
                }
            }
            if let Some(e) = failed {
                bump(&inner.stats.store_errors);
                wait = failures.take();
                tracing::warn!(error = %e, retry_in = ?wait, "worker: the run store failed");
            } else {
                failures.reset();
                // the queue depth, read at most once a poll
                if depth_read.is_none_or(|at| at.elapsed() >= config.poll) {
                    depth_read = Some(tokio::time::Instant::now());
                    if let Ok(depth) = store.waiting().await {
                        inner.stats.queue_depth.store(depth, Ordering::Relaxed);
                    }
                }
            }
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                () = store.wait_for_work(wait) => {}
            }
        }
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
        inner.stats.snapshot()
    }

    /// How long to sleep before the next look: until the nearest deadline (at most the poll),
    /// `None` when requests were just expired (look again at once). A deadline that passed
    /// with nothing to expire (a lapsed lease, taken once there is room) waits a doubling
    /// while (reset by a claim), so a worker never spins on it.
    async fn deadline(&self, idle: &mut Backoff) -> Result<Option<Duration>, StoreError> {
        let inner = &*self.inner;
        let now = SystemTime::now();
        let Some(due) = inner.store.next_due().await? else {
            idle.reset();
            return Ok(Some(inner.config.poll));
        };
        if let Ok(left) = due.duration_since(now)
            && !left.is_zero()
        {
            idle.reset();
            return Ok(Some(left.min(inner.config.poll)));
        }
        let expired = inner.store.expire().await?;
        if !expired.is_empty() {
            idle.reset();
            inner
                .stats
                .expired
                .fetch_add(u64::try_from(expired.len()).unwrap_or(0), Ordering::Relaxed);
            tracing::info!(runs = expired.len(), "worker: requests expired");
            return Ok(None);
        }
        Ok(Some(idle.take()))
    }
}
