//! What a tool says while it runs ([`Context::log`](crate::Context::log),
//! [`Context::progress`](crate::Context::progress)), sent to the client as it is said: log
//! messages as `notifications/message` (at or above the level the session's
//! `logging/setLevel` chose; every level until it chooses), progress as
//! `notifications/progress` on the call's progress token (nothing without one). They go out
//! in order, all before the call's result.

use std::sync::{Arc, Mutex, PoisonError};

#[allow(deprecated)]
// MCP logging: deprecated by SEP-2577 in rmcp, still in the 2025-11-25 protocol
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{RequestContext, RoleServer};
use tokio::sync::{mpsc, oneshot};

use crate::client::Event;
use crate::context::{LogLevel, Notice};

/// The function a call's [`Context`](crate::Context) passes its notices to.
pub(super) type NoticeFn = Arc<dyn Fn(Notice) + Send + Sync>;

/// The lowest level the session's client wants (`logging/setLevel`); `None`: every level.
#[derive(Clone, Debug, Default)]
pub(super) struct SessionLevel(Arc<Mutex<Option<LogLevel>>>);

impl SessionLevel {
    #[allow(deprecated)]
    pub(super) fn set(&self, level: LoggingLevel) {
        let level = match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        };
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    fn lets_through(&self, level: LogLevel) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none_or(|min| level >= min)
    }
}

#[allow(deprecated)]
fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

enum Msg {
    Notice(Notice),
    /// Everything before it was sent: tell the waiting call.
    Flush(oneshot::Sender<()>),
}

/// Forwards one call's notices to the client, in order.
pub(super) struct Forwarder {
    tx: mpsc::UnboundedSender<Msg>,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarder {
    /// Starts forwarding the notices of the call `rc` belongs to; the function to give its
    /// context.
    pub(super) fn start(
        rc: &RequestContext<RoleServer>,
        level: SessionLevel,
        tool: String,
    ) -> (Self, NoticeFn) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        let peer = rc.peer.clone();
        let token: Option<ProgressToken> = rc.meta.get_progress_token();
        let task = tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                match msg {
                    Msg::Flush(done) => {
                        let _ = done.send(());
                    }
                    Msg::Notice(Notice::Log { level: l, message }) => {
                        if level.lets_through(l) {
                            #[allow(deprecated)]
                            let note = LoggingMessageNotificationParam::new(
                                mcp_level(l),
                                serde_json::Value::String(message),
                            )
                            .with_logger(tool.clone());
                            #[allow(deprecated)]
                            let _ = peer.notify_logging_message(note).await;
                        }
                    }
                    Msg::Notice(Notice::Progress {
                        progress,
                        total,
                        message,
                    }) => {
                        if let Some(token) = &token {
                            let mut note = ProgressNotificationParam::new(token.clone(), progress);
                            if let Some(total) = total {
                                note = note.with_total(total);
                            }
                            if let Some(message) = message {
                                note = note.with_message(message);
                            }
                            let _ = peer.notify_progress(note).await;
                        }
                    }
                }
            }
        });
        let sender = tx.clone();
        let notify: NoticeFn = Arc::new(move |notice| {
            let _ = sender.send(Msg::Notice(notice));
        });
        (Self { tx, task }, notify)
    }

    /// Waits until every notice said so far was sent, then stops (later ones are dropped).
    pub(super) async fn finish(self) {
        let (done, sent) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).is_ok() {
            let _ = sent.await;
        }
        self.task.abort();
    }
}

/// The notice a one-call run's event carries (the durable path runs the tool in the agent
/// loop, whose context turns notices into events).
pub(super) fn notice_of(event: &Event) -> Option<Notice> {
    match event {
        Event::ToolLog { level, message, .. } => Some(Notice::Log {
            level: *level,
            message: message.clone(),
        }),
        Event::ToolProgress {
            progress,
            total,
            message,
            ..
        } => Some(Notice::Progress {
            progress: *progress,
            total: *total,
            message: message.clone(),
        }),
        _ => None,
    }
}
