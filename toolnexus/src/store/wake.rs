//! [`Wake`]: how a store tells the workers of this process that a run may need one.

#[cfg(feature = "sqlite")]
use std::collections::HashMap;
#[cfg(feature = "sqlite")]
use std::path::{Path, PathBuf};
#[cfg(feature = "sqlite")]
use std::sync::{Arc, Mutex, PoisonError, Weak};
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

    /// The wake-up shared by every store of this process opened on the database file at
    /// `path` (so two `SqliteStore::open`s of one file wake each other's workers).
    #[cfg(feature = "sqlite")]
    pub(crate) fn for_file(path: &Path) -> Arc<Self> {
        static FILES: Mutex<Option<HashMap<PathBuf, Weak<Wake>>>> = Mutex::new(None);
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut files = FILES.lock().unwrap_or_else(PoisonError::into_inner);
        let files = files.get_or_insert_with(HashMap::new);
        files.retain(|_, wake| wake.strong_count() > 0);
        if let Some(wake) = files.get(&key).and_then(Weak::upgrade) {
            return wake;
        }
        let wake = Arc::new(Self::default());
        files.insert(key, Arc::downgrade(&wake));
        wake
    }
}
