//! The notification outbox: what a store writes, in the same transaction as a park, for a
//! worker to deliver (see [`notify`](crate::notify)).
//!
//! A store built with [notifier names](crate::store::MemoryStore::with_notifiers) writes one
//! [`Notification`] per name each time a run parks (a first park, and a finish that parks the
//! run again on a new request), in the transaction that parks it: a park that commits has its
//! notifications, a park that fails has none. A deliverer then
//! [claims](Outbox::claim_notifications) the due ones under a lease (like a run's claim: a
//! deliverer that dies mid-delivery leaves its lease to run out, and another claims the
//! notification again), delivers each, and [records the attempt](Outbox::record_attempt) in
//! the notification's row and, in the same transaction, in the run's history
//! ([`RunEventKind::Notified`]).
//!
//! # The life of a notification
//!
//! ```text
//! park ──> pending ──claim──> pending, leased ──delivered──> delivered
//!            ^                  │   │   └──answered already / run gone──> skipped
//!            └──retry (at)──────┘   └──last attempt failed──> given_up
//!            └──lease runs out (the deliverer died)──┘
//! ```
//!
//! Escalation and votes (governed approvals) are not built yet: a park writes the
//! [`NotifyReason::Parked`] notifications; [`NotifyReason::Escalated`] and
//! [`NotifyReason::NeedsVotes`] are the reasons their notifications will carry, through the
//! same outbox (`notification_id` keeps them apart from the park's).

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::util::BoxFuture;

use super::{RunEvent, RunEventKind, StoreResult};

pub(crate) mod decide;
mod engine;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) mod sql;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use engine::{OutboxDriver, Step, outbox_of, with_notifiers};
pub(crate) use table::MemRows;

/// Why a notification was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotifyReason {
    /// The run parked on a request: someone should answer it.
    Parked,
    /// The request escalated to another group ([`Request::escalate_to`](crate::Request::escalate_to)):
    /// its new approvers should answer it.
    Escalated,
    /// The request still needs votes (governed approvals; not written yet).
    NeedsVotes,
}

crate::util::names! {
    NotifyReason { Parked => "parked", Escalated => "escalated", NeedsVotes => "needs_votes" }
    /// As stored: `parked`, `escalated`, `needs_votes`.
    pub fn as_str;
    /// The reason stored as `s`; `None` for a reason this release does not know.
    pub fn parse;
}

/// Where a notification is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotificationState {
    /// Waiting for a (first or next) attempt.
    Pending,
    /// A notifier took it.
    Delivered,
    /// Its last attempt failed: no deliverer tries again.
    GivenUp,
    /// Not sent: the request was answered (or the run was gone) before it was delivered.
    Skipped,
}

crate::util::names! {
    NotificationState {
        Pending => "pending",
        Delivered => "delivered",
        GivenUp => "given_up",
        Skipped => "skipped",
    }
    /// As stored: `pending`, `delivered`, `given_up`, `skipped`.
    pub fn as_str;
    /// The state stored as `s` (the SQL stores' column).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn parse;
}

/// One notification of the outbox: one request, one notifier.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notification {
    /// Its id, the same on every attempt: a receiver drops a notification whose id it saw
    /// already (delivery is at least once). `<request id>.<reason>.<notifier>`.
    pub id: String,
    /// The run that waits.
    pub run_id: String,
    /// The request it waits on.
    pub request_id: String,
    /// The notifier that delivers it (a name the store was built with).
    pub notifier: String,
    /// Why it was written (`parked`; a reason this release does not know reads as `parked`).
    pub reason: NotifyReason,
    /// When the park wrote it.
    pub created_at: SystemTime,
    /// Where it is.
    pub state: NotificationState,
    /// How many attempts were begun (a claim begins one; the attempt a claim hands out is
    /// this number).
    pub attempts: u32,
    /// When it is due next (pending).
    pub next_at: SystemTime,
    /// The error of the last failed attempt.
    pub last_error: Option<String>,
    /// The deliverer holding it, while leased.
    pub lease_owner: Option<String>,
}

impl Notification {
    /// The id of the notification of `request_id` for `notifier`, written for `reason`.
    pub fn id_for(request_id: &str, reason: NotifyReason, notifier: &str) -> String {
        format!("{request_id}.{}.{notifier}", reason.as_str())
    }

    /// The id of the notification for `notifier` that step `step` (from 1) of the escalation
    /// of `request_id` writes: `<request>.escalated.<step>.<notifier>`, so each step notifies
    /// each notifier once.
    pub fn escalation_id(request_id: &str, step: u32, notifier: &str) -> String {
        format!(
            "{request_id}.{}.{step}.{notifier}",
            NotifyReason::Escalated.as_str()
        )
    }
}

/// How one attempt at a notification ended, as a deliverer records it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Attempt {
    /// The notifier took it.
    Delivered,
    /// It failed; try again at `at`.
    Retry {
        /// Why it failed.
        error: String,
        /// When to try again.
        at: SystemTime,
    },
    /// It failed, and it was the last attempt.
    GaveUp {
        /// Why the last attempt failed.
        error: String,
    },
    /// Not sent, and never will be: the request was answered, or the run is gone.
    Skipped {
        /// Why.
        why: String,
    },
}

impl Attempt {
    /// The notification's state after this attempt.
    pub fn state(&self) -> NotificationState {
        match self {
            Self::Delivered => NotificationState::Delivered,
            Self::Retry { .. } => NotificationState::Pending,
            Self::GaveUp { .. } => NotificationState::GivenUp,
            Self::Skipped { .. } => NotificationState::Skipped,
        }
    }

    /// The `outcome` of its history event: `delivered`, `retry`, `given_up`, `skipped`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retry { .. } => "retry",
            Self::GaveUp { .. } => "given_up",
            Self::Skipped { .. } => "skipped",
        }
    }

    pub(crate) fn error(&self) -> Option<&str> {
        match self {
            Self::Delivered => None,
            Self::Retry { error, .. } | Self::GaveUp { error } => Some(error),
            Self::Skipped { why } => Some(why),
        }
    }

    /// When the notification is due next (only a retry is).
    pub(crate) fn next_at(&self) -> Option<SystemTime> {
        match self {
            Self::Retry { at, .. } => Some(*at),
            _ => None,
        }
    }

    /// The run's history event of this attempt at `n` (`by`: the notifier, `attempt`: which
    /// attempt, `outcome`, `error`), at `now_ms`.
    pub(crate) fn event(&self, n: &Notification, now_ms: i64) -> RunEvent {
        let event = RunEvent::new(RunEventKind::Notified, now_ms)
            .request(&n.request_id)
            .by(&n.notifier)
            .attempt(n.attempts)
            .outcome(self.outcome());
        match self.error() {
            Some(e) => event.error(e),
            None => event,
        }
    }
}

/// The outbox of a store built with notifier names (see the [module docs](self)): what a
/// deliverer ([`notify::Deliverer`](crate::notify::Deliverer), or a
/// [`Worker`](crate::worker::Worker) given notifiers) claims and records. Object-safe.
pub trait Outbox: Send + Sync + fmt::Debug {
    /// The notifier names the store writes a notification for at each park.
    fn notifier_names(&self) -> &[String];

    /// Claims up to `limit` notifications for the `notifiers` named that are due (pending,
    /// `next_at` passed, and not leased, or leased by a deliverer whose lease ran out), for
    /// `owner`, for `lease`, oldest due first; each
    /// claim begins an attempt ([`Notification::attempts`] counts it). Concurrent callers
    /// never get the same notification while its lease holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](super::StoreError::Backend) when the database fails.
    fn claim_notifications<'a>(
        &'a self,
        owner: &'a str,
        notifiers: &'a [String],
        limit: usize,
        lease: Duration,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>>;

    /// Records how the attempt at `n` (as claimed by `owner`) ended, in its row and, in the
    /// same transaction, as a [`Notified`](RunEventKind::Notified) event of its run's history.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`](super::StoreError::LeaseLost) when the notification is no
    /// longer `owner`'s attempt (its lease ran out and another deliverer claimed it).
    fn record_attempt<'a>(
        &'a self,
        n: &'a Notification,
        owner: &'a str,
        attempt: &'a Attempt,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// The notifications of a run, oldest first: what its page or status shows (delivered,
    /// pending, given up).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](super::StoreError::Backend) when the database fails.
    fn notifications<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Vec<Notification>>>;

    /// When the nearest pending notification is due (its `next_at`, or its lease's end while
    /// leased); `None` when none is pending.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](super::StoreError::Backend) when the database fails.
    fn next_notification_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>>;

    /// Waits until this process parked a run with notifications, or `timeout` passes (a
    /// hint: a deliverer then claims).
    fn wait_for_notifications(&self, timeout: Duration) -> BoxFuture<'_, ()>;
}

/// What a store keeps for its outbox: the notifier names, and the in-process wake-up of the
/// deliverers (the memory store's rows too).
#[derive(Default)]
pub(crate) struct OutboxState {
    pub(crate) names: Vec<String>,
    pub(crate) wake: super::Wake,
    pub(crate) rows: std::sync::Mutex<MemRows>,
}

impl fmt::Debug for OutboxState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.names).finish()
    }
}

impl OutboxState {
    /// A state for these notifier names, checked: each non-empty, at most 64 bytes of ASCII
    /// letters, digits, `-` and `_`, none twice.
    pub(crate) fn of(names: impl IntoIterator<Item = impl Into<String>>) -> StoreResult<Self> {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        for (i, name) in names.iter().enumerate() {
            let good = !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !good {
                return Err(super::StoreError::Invalid(format!(
                    "`{name}` is not a notifier name: use 1 to 64 ASCII letters, digits, `-` or `_`"
                )));
            }
            if names[..i].contains(name) {
                return Err(super::StoreError::Invalid(format!(
                    "notifier `{name}` is named twice"
                )));
            }
        }
        Ok(Self {
            names,
            ..Self::default()
        })
    }

    /// The notifications a park of `request_id` for run `run_id` at `now_ms` writes: one per
    /// notifier.
    pub(crate) fn park_rows(
        &self,
        run_id: &str,
        request_id: &str,
        now_ms: i64,
    ) -> Vec<Notification> {
        let at = super::from_millis(now_ms);
        self.names
            .iter()
            .map(|name| Notification {
                id: Notification::id_for(request_id, NotifyReason::Parked, name),
                run_id: run_id.to_owned(),
                request_id: request_id.to_owned(),
                notifier: name.clone(),
                reason: NotifyReason::Parked,
                created_at: at,
                state: NotificationState::Pending,
                attempts: 0,
                next_at: at,
                last_error: None,
                lease_owner: None,
            })
            .collect()
    }

    /// The notifications step `step` of the escalation of `request_id` (run `run_id`) writes at
    /// `now_ms`: one per notifier, each `<request>.escalated.<step>.<notifier>`
    /// ([`Notification::escalation_id`]).
    pub(crate) fn escalation_rows(
        &self,
        run_id: &str,
        request_id: &str,
        step: u32,
        now_ms: i64,
    ) -> Vec<Notification> {
        self.park_rows(run_id, request_id, now_ms)
            .into_iter()
            .map(|mut n| {
                n.id = Notification::escalation_id(request_id, step, &n.notifier);
                n.reason = NotifyReason::Escalated;
                n
            })
            .collect()
    }

    /// Tells this process's deliverers that a park wrote notifications (after it committed).
    pub(crate) fn parked(&self) {
        if !self.names.is_empty() {
            self.wake.notify();
        }
    }
}
