//! Workers' heartbeats: each [`Worker`](crate::worker::Worker) records in its store that it is
//! alive ([`RunStore::heartbeat`](super::RunStore::heartbeat)), so an answer page can tell
//! "a worker will take it up" from "answered; no worker has taken it up"
//! ([`RunStore::last_worker_seen`](super::RunStore::last_worker_seen)).

use std::time::{Duration, SystemTime};

/// How often a running worker records its heartbeat: 10 seconds.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

/// How long after its last heartbeat a worker still counts as running: 30 seconds (three
/// missed heartbeats).
pub const WORKER_GONE_AFTER: Duration = Duration::from_secs(30);

/// The worker seen last by a store: its name and its last heartbeat.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerSeen {
    /// The worker's [name](crate::worker::Worker::name).
    pub worker: String,
    /// When it last recorded that it is alive (millisecond precision in the SQL stores).
    pub at: SystemTime,
}

impl WorkerSeen {
    /// The worker `worker`, seen `at`.
    pub fn new(worker: impl Into<String>, at: SystemTime) -> Self {
        Self {
            worker: worker.into(),
            at,
        }
    }

    /// Whether the worker counts as running at `now`: its last heartbeat is at most
    /// [`WORKER_GONE_AFTER`] old.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use toolnexus::store::WorkerSeen;
    ///
    /// let now = SystemTime::now();
    /// assert!(WorkerSeen::new("w", now - Duration::from_secs(5)).is_running_at(now));
    /// assert!(!WorkerSeen::new("w", now - Duration::from_secs(60)).is_running_at(now));
    /// ```
    pub fn is_running_at(&self, now: SystemTime) -> bool {
        now.duration_since(self.at)
            .map_or(true, |age| age <= WORKER_GONE_AFTER)
    }
}
