//! LISTEN/NOTIFY: one listening connection per store, started on first wait, whose
//! notifications (the changed run's id) wake [`RunStore::wait_change`] instead of polling.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls};

use super::{PostgresStore, pg};
use crate::store::{RunInfo, StoreResult, Wake, now_ms};

/// How often a waiter re-reads its run even without a notification (a lost listener
/// connection degrades to this).
const WAIT_RECHECK: Duration = Duration::from_secs(1);

pub(super) struct Listener {
    // kept alive: dropping the client ends the LISTEN session
    _client: tokio_postgres::Client,
    changes: broadcast::Sender<String>,
    /// Told on each notification of the work channel (a run may need a worker).
    pub(super) work: Arc<Wake>,
}

impl PostgresStore {
    /// The LISTEN connection, started on first use.
    async fn listener(&self) -> StoreResult<&Listener> {
        self.listener
            .get_or_try_init(|| async {
                let (client, mut connection) =
                    self.config.connect(NoTls).await.map_err(|e| pg(&e))?;
                let (changes, _) = broadcast::channel(4096);
                let sender = changes.clone();
                let work = Arc::clone(&self.work);
                let woken = Arc::clone(&work);
                let work_channel = self.work_channel.clone();
                tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(message) = messages.next().await {
                        match message {
                            Ok(AsyncMessage::Notification(n)) if n.channel() == &*work_channel => {
                                woken.notify();
                            }
                            Ok(AsyncMessage::Notification(n)) => {
                                let _ = sender.send(n.payload().to_owned());
                            }
                            Ok(_) => {}
                            Err(_) => break,
                        }
                    }
                });
                client
                    .batch_execute(&format!(
                        "LISTEN \"{}\"; LISTEN \"{}\"",
                        self.channel, self.work_channel
                    ))
                    .await
                    .map_err(|e| pg(&e))?;
                Ok(Listener {
                    _client: client,
                    changes,
                    work,
                })
            })
            .await
    }

    /// The body of [`RunStore::wait_for_work`](crate::store::RunStore::wait_for_work): waits
    /// for a notification on the work channel (from any process), or `timeout`. Without a
    /// listening connection it sleeps `timeout` (the caller's poll).
    pub(super) async fn wait_for_work_now(&self, timeout: Duration) {
        match self.listener().await {
            Ok(listener) => listener.work.wait(timeout).await,
            Err(e) => {
                tracing::warn!(error = %e, "run store: cannot listen for work; polling");
                tokio::time::sleep(timeout).await;
            }
        }
    }

    /// The body of [`RunStore::wait_change`](crate::store::RunStore::wait_change): registers
    /// as a waiter of the run (so its changes notify), waits, and deregisters. A waiter whose
    /// future is dropped leaves its row behind: the run's changes then notify for nothing
    /// until the run is deleted, which costs time, never correctness.
    pub(super) async fn wait_change_now(
        &self,
        run_id: &str,
        version: u64,
        timeout: Duration,
    ) -> StoreResult<Option<RunInfo>> {
        let waiter = crate::id::unique("wait");
        self.client()
            .await?
            .execute(
                "INSERT INTO run_waiters (run_id, waiter, since) VALUES ($1, $2, $3)",
                &[&run_id, &waiter, &now_ms()],
            )
            .await
            .map_err(|e| pg(&e))?;
        let changed = self.wait_registered(run_id, version, timeout).await;
        self.client()
            .await?
            .execute(
                "DELETE FROM run_waiters WHERE run_id = $1 AND waiter = $2",
                &[&run_id, &waiter],
            )
            .await
            .map_err(|e| pg(&e))?;
        changed
    }

    /// Subscribes, reads, then waits for this run's notification (re-reading now and then).
    async fn wait_registered(
        &self,
        run_id: &str,
        version: u64,
        timeout: Duration,
    ) -> StoreResult<Option<RunInfo>> {
        let deadline = tokio::time::Instant::now() + timeout;
        // subscribe before reading, so a change between the read and the wait is not missed
        let mut changes = self.listener().await?.changes.subscribe();
        loop {
            let info = self.info(run_id).await?;
            if info.version > version {
                return Ok(Some(info));
            }
            loop {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    return Ok(None);
                }
                let wait = WAIT_RECHECK.min(deadline - now);
                match tokio::time::timeout(wait, changes.recv()).await {
                    Ok(Ok(id)) if id != run_id => {}
                    // this run changed, notifications were dropped, or time to re-read
                    _ => break,
                }
            }
        }
    }
}
