//! [`Deliverer`]: claims the due notifications of a store's outbox, hands each to its
//! notifier, and records the attempt.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::{Notice, Notifier, NotifyError};
use crate::store::{Attempt, Notification, Outbox, RunState, RunStore, StoreError, StoreResult};

/// The default number of attempts at one notification before it is given up: 8 (with the
/// default delays, the last one about 2 minutes after the first).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 8;

/// The default wait before the second attempt: 1 second, doubling with each failure, at
/// most [`MAX_RETRY_DELAY`].
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(1);

/// The longest wait between two attempts: 10 minutes.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(10 * 60);

/// The default lease of a claimed notification: 60 seconds. A deliverer that dies mid-delivery
/// leaves it to another deliverer after that; an attempt that takes longer is cut off at
/// 80% of the lease, so a live deliverer never loses its lease mid-delivery.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// Makes the link to a request's answer page from its id.
type Links = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Delivers a store's notifications; see the [module docs](super). Cheap to clone.
#[derive(Clone)]
pub struct Deliverer {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn RunStore>,
    notifiers: HashMap<String, Arc<dyn Notifier>>,
    names: Vec<String>,
    links: Option<Links>,
    name: String,
    max_attempts: u32,
    retry_delay: Duration,
    lease: Duration,
    batch: usize,
    poll: Duration,
    stats: Counters,
}

#[derive(Default)]
struct Counters {
    delivered: AtomicU64,
    retried: AtomicU64,
    given_up: AtomicU64,
    skipped: AtomicU64,
    lost: AtomicU64,
}

/// What a [`Deliverer`] has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DelivererStats {
    /// Notifications a notifier took.
    pub delivered: u64,
    /// Attempts that failed and will be tried again.
    pub retried: u64,
    /// Notifications given up (their last attempt failed).
    pub given_up: u64,
    /// Notifications not sent: answered before their delivery, or their run was gone.
    pub skipped: u64,
    /// Attempts whose lease another deliverer had taken by the time they were recorded.
    pub lost: u64,
}

impl fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deliverer")
            .field("name", &self.inner.name)
            .field("notifiers", &self.inner.names)
            .field("max_attempts", &self.inner.max_attempts)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Deliverer`]; see [`Deliverer::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct DelivererBuilder {
    inner: Inner,
}

impl fmt::Debug for DelivererBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelivererBuilder")
            .field("notifiers", &self.inner.names)
            .finish_non_exhaustive()
    }
}

impl DelivererBuilder {
    /// Delivers the notifications written for `name` (a name the store was built with)
    /// through `notifier`.
    pub fn notifier(mut self, name: impl Into<String>, notifier: Arc<dyn Notifier>) -> Self {
        let name = name.into();
        if !self.inner.names.contains(&name) {
            self.inner.names.push(name.clone());
        }
        self.inner.notifiers.insert(name, notifier);
        self
    }

    /// Makes each notice's [link](Notice::link) from the request id: a signed link to the
    /// answer page, e.g. `inbox.link(id, ttl)` under the page's public address.
    pub fn links(mut self, f: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.inner.links = Some(Arc::new(f));
        self
    }

    /// The deliverer's name (default `deliverer-<unique id>`): the owner of its leases.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.inner.name = name.into();
        self
    }

    /// How many attempts one notification gets before it is given up (default
    /// [`DEFAULT_MAX_ATTEMPTS`]; at least 1). An attempt cut short by a dead deliverer counts:
    /// a notification whose deliverers keep dying in it is given up too, not claimed without
    /// end.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.inner.max_attempts = n.max(1);
        self
    }

    /// The wait before the second attempt (default [`DEFAULT_RETRY_DELAY`]); it doubles with
    /// each failure, up to [`MAX_RETRY_DELAY`].
    pub fn retry_delay(mut self, first: Duration) -> Self {
        self.inner.retry_delay = first;
        self
    }

    /// How long a claimed notification is this deliverer's (default [`DEFAULT_LEASE`]; at
    /// least 100 ms): how late a notification whose deliverer died is delivered.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.inner.lease = lease.max(Duration::from_millis(100));
        self
    }

    /// The longest [`run`](Deliverer::run) sleeps when nothing wakes it (default 1 second; at
    /// least 10 ms): how late it notices a park made by another process.
    pub fn poll(mut self, every: Duration) -> Self {
        self.inner.poll = every.max(Duration::from_millis(10));
        self
    }

    /// Finishes the deliverer.
    pub fn build(self) -> Deliverer {
        Deliverer {
            inner: Arc::new(self.inner),
        }
    }
}

/// The wait after `failures` failed attempts (1 or more): `first`, doubled per earlier
/// failure, at most [`MAX_RETRY_DELAY`].
fn retry_delay(first: Duration, failures: u32) -> Duration {
    crate::util::doubling_delay(first, failures, MAX_RETRY_DELAY)
}

impl Deliverer {
    /// A deliverer of `store`'s outbox; add a [notifier](DelivererBuilder::notifier) per name
    /// the store was built with.
    pub fn builder(store: Arc<dyn RunStore>) -> DelivererBuilder {
        DelivererBuilder {
            inner: Inner {
                store,
                notifiers: HashMap::new(),
                names: Vec::new(),
                links: None,
                name: crate::id::unique("deliverer"),
                max_attempts: DEFAULT_MAX_ATTEMPTS,
                retry_delay: DEFAULT_RETRY_DELAY,
                lease: DEFAULT_LEASE,
                batch: 16,
                poll: Duration::from_secs(1),
                stats: Counters::default(),
            },
        }
    }

    /// What it has done so far.
    pub fn stats(&self) -> DelivererStats {
        let s = &self.inner.stats;
        DelivererStats {
            delivered: s.delivered.load(Ordering::Relaxed),
            retried: s.retried.load(Ordering::Relaxed),
            given_up: s.given_up.load(Ordering::Relaxed),
            skipped: s.skipped.load(Ordering::Relaxed),
            lost: s.lost.load(Ordering::Relaxed),
        }
    }

    fn outbox(&self) -> StoreResult<&dyn Outbox> {
        self.inner.store.outbox().ok_or_else(|| {
            StoreError::Invalid(
                "the store writes no notifications: build it `with_notifiers([..])`".to_owned(),
            )
        })
    }

    /// Claims the notifications due now (for this deliverer's notifiers), delivers them side
    /// by side, records each attempt, and goes on while there are due ones; returns how many
    /// attempts it made.
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] when the store has no outbox; [`StoreError::Backend`] when the
    /// store fails.
    pub async fn deliver_due(&self) -> StoreResult<usize> {
        let outbox = self.outbox()?;
        let inner = &*self.inner;
        let mut made = 0;
        loop {
            let claimed = outbox
                .claim_notifications(&inner.name, &inner.names, inner.batch, inner.lease)
                .await?;
            let n = claimed.len();
            futures_util::future::join_all(claimed.iter().map(|c| self.attempt(outbox, c))).await;
            made += n;
            if n < inner.batch {
                return Ok(made);
            }
        }
    }

    /// One attempt at `n`, recorded.
    async fn attempt(&self, outbox: &dyn Outbox, n: &Notification) {
        let inner = &*self.inner;
        let attempt = if n.attempts > inner.max_attempts {
            // the attempts before were begun and never recorded: each deliverer died in it
            Attempt::GaveUp {
                error: format!(
                    "{} attempts were begun and the last ones never ended (their deliverers died): given up",
                    n.attempts - 1
                ),
            }
        } else {
            match self.notice(n).await {
                Ok(notice) => self.send(n, &notice).await,
                Err(skip) => skip,
            }
        };
        let counter = match &attempt {
            Attempt::Delivered => &inner.stats.delivered,
            Attempt::Retry { .. } => &inner.stats.retried,
            Attempt::GaveUp { .. } => &inner.stats.given_up,
            Attempt::Skipped { .. } => &inner.stats.skipped,
        };
        match outbox.record_attempt(n, &inner.name, &attempt).await {
            Ok(()) => {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            Err(StoreError::LeaseLost { .. }) => {
                inner.stats.lost.fetch_add(1, Ordering::Relaxed);
                tracing::info!(notification = %n.id, "notify: another deliverer has the notification now");
            }
            Err(e) => tracing::warn!(
                notification = %n.id,
                error = %e,
                "notify: cannot record an attempt; the notification is tried again after its lease"
            ),
        }
    }

    /// The notice of `n`, or the attempt that skips it (answered already, run gone) or
    /// fails (its run cannot be read).
    async fn notice(&self, n: &Notification) -> Result<Notice, Attempt> {
        let run = match self.inner.store.get(&n.run_id).await {
            Ok(Some(run)) => run,
            Ok(None) => {
                return Err(Attempt::Skipped {
                    why: "the run is gone".to_owned(),
                });
            }
            Err(e) => return Err(self.failed(n, &NotifyError::retry(e.to_string()))),
        };
        if run.info.request_id != n.request_id || run.info.state != RunState::Parked {
            return Err(Attempt::Skipped {
                why: format!(
                    "the request was answered before its delivery (the run is {})",
                    run.info.state.as_str()
                ),
            });
        }
        // as it stands now: an escalation's notice names the group and deadline it moved to
        let request = run
            .record
            .pending()
            .clone()
            .standing_now(run.info.approvers.as_deref(), run.info.expires_at);
        Ok(Notice {
            notification: n.clone(),
            request: serde_json::to_value(&request).unwrap_or_default(),
            prompt: request.prompt.clone(),
            kind: run.info.kind.clone(),
            waits_for: run.record.principal().map(str::to_owned),
            link: self.inner.links.as_ref().and_then(|f| f(&n.request_id)),
        })
    }

    /// Hands `notice` to its notifier, within 80% of the lease.
    async fn send(&self, n: &Notification, notice: &Notice) -> Attempt {
        let inner = &*self.inner;
        let Some(notifier) = inner.notifiers.get(&n.notifier) else {
            return self.failed(
                n,
                &NotifyError::retry(format!("this deliverer has no notifier `{}`", n.notifier)),
            );
        };
        let limit = inner.lease.mul_f64(0.8);
        match tokio::time::timeout(limit, notifier.deliver(notice)).await {
            Ok(Ok(())) => Attempt::Delivered,
            Ok(Err(e)) => self.failed(n, &e),
            Err(_) => self.failed(
                n,
                &NotifyError::retry(format!("the notifier took longer than {limit:?}")),
            ),
        }
    }

    /// A failed attempt at `n`: retried after the doubling delay, or given up when it was the
    /// last or the error is permanent.
    fn failed(&self, n: &Notification, e: &NotifyError) -> Attempt {
        let inner = &*self.inner;
        if e.is_permanent() || n.attempts >= inner.max_attempts {
            tracing::error!(notification = %n.id, attempts = n.attempts, error = %e, "notify: a notification is given up");
            Attempt::GaveUp {
                error: e.to_string(),
            }
        } else {
            let wait = retry_delay(inner.retry_delay, n.attempts.max(1));
            tracing::warn!(notification = %n.id, attempt = n.attempts, retry_in = ?wait, error = %e, "notify: a delivery failed; it is tried again");
            Attempt::Retry {
                error: e.to_string(),
                at: SystemTime::now() + wait,
            }
        }
    }

    /// Delivers until `shutdown` completes: [`deliver_due`](Self::deliver_due), then sleeps
    /// until the next notification is due, a park in this process wakes it, or the
    /// [poll](DelivererBuilder::poll) passes. Store failures are logged and retried after a
    /// doubling wait (at most 30 s); they never end it. An attempt in flight at shutdown
    /// finishes first.
    pub async fn run(&self, shutdown: impl Future<Output = ()> + Send) {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut backoff = Duration::from_millis(50);
        loop {
            let wait = match self.deliver_due().await {
                Ok(_) => {
                    backoff = Duration::from_millis(50);
                    self.until_next().await
                }
                Err(e) => {
                    tracing::warn!(error = %e, "notify: the outbox cannot be read; trying again");
                    let wait = backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                    wait
                }
            };
            let sleep = async {
                match self.outbox() {
                    Ok(outbox) => outbox.wait_for_notifications(wait).await,
                    Err(_) => tokio::time::sleep(wait).await,
                }
            };
            tokio::select! {
                biased;
                () = &mut shutdown => return,
                () = sleep => {}
            }
        }
    }

    /// How long to sleep: until the next notification is due, at most the poll.
    async fn until_next(&self) -> Duration {
        let poll = self.inner.poll;
        let Ok(outbox) = self.outbox() else {
            return poll;
        };
        match outbox.next_notification_due().await {
            Ok(Some(at)) => at
                .duration_since(SystemTime::now())
                .unwrap_or_default()
                .clamp(Duration::from_millis(10), poll),
            Ok(None) | Err(_) => poll,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_double_up_to_the_ceiling() {
        // the doubling is `util::doubling_delay`'s (tested there); here the deliverer's ceiling
        let s = Duration::from_secs;
        assert_eq!(retry_delay(s(1), 3), s(4));
        assert_eq!(retry_delay(s(1), 40), s(10 * 60));
    }
}
