//! Telling people that a run waits for them: notifiers, and the deliverer that sends what a
//! store's [outbox](crate::store::outbox) holds, at least once.
//!
//! A store built with notifier names (`with_notifiers(["webhook", "email"])`) writes one
//! notification per name in the transaction of every park. A [`Deliverer`] (run on its own,
//! or by a [`Worker`](crate::worker::Worker) given one with
//! [`WorkerBuilder::deliverer`](crate::worker::WorkerBuilder::deliverer)) claims the due
//! notifications under a lease, hands each to the [`Notifier`] of that name with a [`Notice`]
//! (the request as the contract writes it, the run, who it waits for, a signed link to the
//! answer page), and records each attempt (when, which notifier, the outcome) in the run's
//! history ([`RunEventKind::Notified`](crate::store::RunEventKind::Notified)).
//!
//! - **At least once.** A failed attempt is tried again after a doubling wait
//!   ([`DelivererBuilder::retry_delay`], at most [`MAX_RETRY_DELAY`]); a deliverer that dies
//!   between the park and the delivery, or in the middle of one, leaves the notification to
//!   the next deliverer once its lease runs out ([`DelivererBuilder::lease`]). So a receiver
//!   may see one notification more than once: each carries its [`Notification::id`], the same
//!   on every attempt, and a receiver drops an id it saw already.
//! - **A documented give-up.** After [`DEFAULT_MAX_ATTEMPTS`] attempts (8 unless
//!   [set](DelivererBuilder::max_attempts)), or at once on an error the notifier calls
//!   [permanent](NotifyError::permanent), the notification is
//!   [given up](crate::store::NotificationState::GivenUp): the run's history says so
//!   (outcome `given_up`, with the last error), and
//!   [`Outbox::notifications`](crate::store::Outbox::notifications) lists it.
//! - **Nothing sent for nothing.** A notification whose request was answered (or whose run is
//!   gone) before its delivery is [skipped](crate::store::NotificationState::Skipped).
//!
//! Notifiers of this crate:
#![cfg_attr(feature = "notify-webhook", doc = "[`WebhookNotifier`]")]
#![cfg_attr(not(feature = "notify-webhook"), doc = "`WebhookNotifier`")]
//! (feature `notify-webhook`: a signed JSON POST, or a chat incoming-webhook body) and
#![cfg_attr(feature = "notify-email", doc = "[`EmailNotifier`]")]
#![cfg_attr(not(feature = "notify-email"), doc = "`EmailNotifier`")]
//! (feature `notify-email`: SMTP over lettre, plain text and HTML). A host implements
//! [`Notifier`] for anything else.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use toolnexus::notify::{Deliverer, Notice, Notifier, NotifyError};
//! use toolnexus::store::{MemoryStore, RunStore};
//! use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
//!
//! /// Keeps what it is told: a host's own notifier.
//! #[derive(Default)]
//! struct Keep(Mutex<Vec<String>>);
//!
//! impl Notifier for Keep {
//!     fn deliver<'a>(&'a self, notice: &'a Notice) -> toolnexus::notify::BoxFuture<'a, Result<(), NotifyError>> {
//!         let line = format!("{} waits: {}", notice.run_id(), notice.prompt());
//!         Box::pin(async move {
//!             self.0.lock().unwrap().push(line);
//!             Ok(())
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ask = FnTool::builder("ask").description("Asks.")
//!     .handler(|_, _| async { ToolResult::suspended(Request::input("Your name?")) })
//!     .build().unwrap();
//! let toolkit = Toolkit::builder().tool(ask).build().unwrap();
//! let store = Arc::new(MemoryStore::new().with_notifiers(["keep"]).unwrap());
//! let client = Client::builder(ScriptedModel::new([Reply::tool_call("ask", serde_json::json!({}))]))
//!     .model_name("m").store(store.clone()).build().unwrap();
//! let parked = client.run("greet me", &toolkit).await.unwrap();
//!
//! let keep = Arc::new(Keep::default());
//! let deliverer = Deliverer::builder(store.clone())
//!     .notifier("keep", keep.clone())
//!     .links(|request_id| Some(format!("https://example.com/inbox/r/{request_id}")))
//!     .build();
//! assert_eq!(deliverer.deliver_due().await.unwrap(), 1);
//! assert_eq!(*keep.0.lock().unwrap(), [format!("{} waits: Your name?", parked.run_id)]);
//!
//! // the attempt is in the run's history
//! let info = store.info(&parked.run_id).await.unwrap().unwrap();
//! let last = info.history.last().unwrap();
//! assert_eq!(last.to_string().split_once(' ').unwrap().1,
//!     format!("notified request {} by keep attempt 1 -> delivered", info.request_id));
//! # });
//! ```

mod deliver;
#[cfg(feature = "notify-email")]
#[cfg_attr(docsrs, doc(cfg(feature = "notify-email")))]
mod email;
mod sign;
#[cfg(feature = "notify-webhook")]
#[cfg_attr(docsrs, doc(cfg(feature = "notify-webhook")))]
mod webhook;

use std::fmt;

use serde_json::Value;

pub use crate::store::{Notification, NotificationState, NotifyReason};
pub use crate::util::BoxFuture;
pub use deliver::{
    DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_DELAY, Deliverer, DelivererBuilder,
    DelivererStats, MAX_RETRY_DELAY,
};
#[cfg(feature = "notify-email")]
pub use email::{EmailNotifier, EmailNotifierBuilder};
pub use sign::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify};
#[cfg(feature = "notify-webhook")]
pub use webhook::{WebhookBody, WebhookNotifier};

/// Why a delivery failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotifyError {
    message: String,
    permanent: bool,
}

impl NotifyError {
    /// A failure worth another attempt (the receiver was down, refused for now, timed out).
    pub fn retry(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            permanent: false,
        }
    }

    /// A failure no later attempt mends (the receiver refused the notification itself): the
    /// notification is given up at once.
    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            permanent: true,
        }
    }

    /// Whether no later attempt mends it.
    pub fn is_permanent(&self) -> bool {
        self.permanent
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for NotifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NotifyError {}

/// Sends a [`Notice`] somewhere a person looks. Implement it for a channel of your own; give
/// it to a [`Deliverer`] under the name the store was built with.
pub trait Notifier: Send + Sync {
    /// Delivers `notice`. `Ok` once the receiver took it; an error is recorded and, unless
    /// [permanent](NotifyError::permanent) or the last attempt, tried again later. A receiver
    /// may get one notice more than once (at least once): it drops a
    /// [`notification_id`](Notice::notification_id) it saw already.
    fn deliver<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<(), NotifyError>>;
}

/// What a notifier sends: one notification of a waiting run.
#[derive(Clone, Debug)]
pub struct Notice {
    pub(crate) notification: Notification,
    pub(crate) request: Value,
    pub(crate) prompt: String,
    pub(crate) kind: String,
    pub(crate) waits_for: Option<String>,
    pub(crate) link: Option<String>,
}

impl Notice {
    /// The notification's id, the same on every attempt: the receiver's key to drop
    /// duplicates.
    pub fn notification_id(&self) -> &str {
        &self.notification.id
    }

    /// The notification as the outbox keeps it (notifier, reason, which attempt).
    pub fn notification(&self) -> &Notification {
        &self.notification
    }

    /// The run that waits.
    pub fn run_id(&self) -> &str {
        &self.notification.run_id
    }

    /// The request it waits on, as the wire contract writes it (`Request`, contract section
    /// 1): `{"id","kind","prompt",..}`, as it stands when the notice is made: an escalated
    /// request names the group and deadline it moved to (`data.approvers`, `expiresAt`), as
    /// the answer page shows it.
    pub fn request(&self) -> &Value {
        &self.request
    }

    /// The request's id.
    pub fn request_id(&self) -> &str {
        &self.notification.request_id
    }

    /// The request's prompt: what the person is asked.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The request's kind (`approval`, `input`, ..).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Who the run is for (its [principal](crate::PendingRun::principal)): who it waits
    /// for, when it was started for someone.
    pub fn waits_for(&self) -> Option<&str> {
        self.waits_for.as_deref()
    }

    /// The link that opens the request's answer page (signed, when the deliverer's
    /// [links](DelivererBuilder::links) sign them), when the deliverer makes links.
    pub fn link(&self) -> Option<&str> {
        self.link.as_deref()
    }

    /// The notice as the webhook notifier posts it: `{"notification","reason","attempt",
    /// "run","request","waitsFor","link"}`, `request` as the contract writes it.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "notification": self.notification.id,
            "reason": self.notification.reason.as_str(),
            "attempt": self.notification.attempts,
            "run": self.notification.run_id,
            "request": self.request,
            "waitsFor": self.waits_for,
            "link": self.link,
        })
    }

    /// One line of text for a chat or a subject: `Waiting for you: <prompt>` (with
    /// `(for <who>)` when the run is for someone).
    pub fn headline(&self) -> String {
        match &self.waits_for {
            Some(who) => format!("Waiting for {who}: {}", self.prompt),
            None => format!("Waiting for you: {}", self.prompt),
        }
    }
}
