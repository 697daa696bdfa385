//! [`Wake`]: how a store tells the workers of this process that a run may need one.

use std::time::Duration;

use tokio::sync::Notify;

/// A wake-up for the workers of this process: every waiting worker wakes, and when none
/// waits, the next one to wait returns at once (a wake-up is never lost between a worker's
/// look at the store and its wait; a spare one costs one look).
#[derive(Debug, Default)]
pub(crate) struct Wake(Notify);

impl Wake {
    pub(crate) fn notify(&self) {
        self.0.notify_waiters();
        self.0.notify_one();
    }

    /// Waits for a wake-up or `timeout`.
    pub(crate) async fn wait(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.0.notified()).await;
    }
}
