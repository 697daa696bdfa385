//! What a worker did: counters, the queue depth it last saw, and the answer-to-resume
//! latencies of its recent claims.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many recent latencies the percentiles are taken over.
const KEPT: usize = 10_000;

/// A snapshot of a [`Worker`](super::Worker)'s work ([`Worker::stats`](super::Worker::stats),
/// and what [`Worker::run`](super::Worker::run) returns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerStats {
    /// Runs claimed (answered runs, expired ones, and takeovers).
    pub claimed: u64,
    /// Of those, runs taken over after another worker's lease ran out (or a failed
    /// resume's retry delay).
    pub taken_over: u64,
    /// Runs resumed to their end or to their next request, and recorded.
    pub finished: u64,
    /// Resumes that failed (the model, a tool's host or the store failed): each is recorded
    /// in the run's history, and the run is tried again after the retry delay (or given up).
    pub failed: u64,
    /// Of those, runs given up after their last allowed attempt
    /// ([`RunState::Failed`](crate::store::RunState::Failed)).
    pub gave_up: u64,
    /// Runs another worker took over while this one ran them (their outcome is the other's).
    pub lost: u64,
    /// Runs handed back unfinished at shutdown.
    pub released: u64,
    /// Requests this worker expired (their runs resume with `declined/expired`).
    pub expired: u64,
    /// Store calls that failed (each followed by a back-off).
    pub store_errors: u64,
    /// Runs in flight now.
    pub in_flight: u64,
    /// Runs waiting for a worker when it last looked ([`RunStore::waiting`](crate::store::RunStore::waiting)).
    pub queue_depth: u64,
    /// Answer-to-resume latencies measured (one per claim whose answer time is known).
    pub latencies: u64,
    /// The median of the last 10,000 of them.
    pub latency_p50: Option<Duration>,
    /// Their 99th percentile.
    pub latency_p99: Option<Duration>,
    /// Their largest.
    pub latency_max: Option<Duration>,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) claimed: AtomicU64,
    pub(super) taken_over: AtomicU64,
    pub(super) finished: AtomicU64,
    pub(super) failed: AtomicU64,
    pub(super) gave_up: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) released: AtomicU64,
    pub(super) expired: AtomicU64,
    pub(super) store_errors: AtomicU64,
    pub(super) in_flight: AtomicU64,
    pub(super) queue_depth: AtomicU64,
    latencies: AtomicU64,
    recent: Mutex<VecDeque<Duration>>,
}

pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    pub(super) fn latency(&self, latency: Duration) {
        bump(&self.latencies);
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back(latency);
    }

    pub(super) fn snapshot(&self) -> WorkerStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut recent: Vec<Duration> = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        recent.sort_unstable();
        WorkerStats {
            claimed: get(&self.claimed),
            taken_over: get(&self.taken_over),
            finished: get(&self.finished),
            failed: get(&self.failed),
            gave_up: get(&self.gave_up),
            lost: get(&self.lost),
            released: get(&self.released),
            expired: get(&self.expired),
            store_errors: get(&self.store_errors),
            in_flight: get(&self.in_flight),
            queue_depth: get(&self.queue_depth),
            latencies: get(&self.latencies),
            latency_p50: percentile(&recent, 50),
            latency_p99: percentile(&recent, 99),
            latency_max: recent.last().copied(),
        }
    }
}

/// The `p`th percentile of sorted samples (nearest rank).
pub(crate) fn percentile(sorted: &[Duration], p: usize) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let ms = |n: u64| Duration::from_millis(n);
        let samples: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&samples, 50), Some(ms(50)));
        assert_eq!(percentile(&samples, 99), Some(ms(99)));
        assert_eq!(percentile(&[ms(7)], 99), Some(ms(7)));
        assert_eq!(percentile(&[], 50), None);
    }
}
