//! [`EmailNotifier`]: each notice as an email over SMTP (feature `notify-email`: lettre, with
//! rustls; no native TLS).

use std::fmt::Write as _;

use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::{BoxFuture, Notice, Notifier, NotifyError};
use crate::error::Error;

/// Sends each notice as an email (plain text and HTML parts, the link to the answer page in
/// both) through an SMTP server. The notification id is the email's `Message-ID`
/// (`<id@toolnexus>`), the same on every attempt, so a mail system drops a duplicate.
/// A permanent SMTP refusal (`5xx`) gives the notification up; anything else is tried again.
///
/// ```
/// use toolnexus::notify::EmailNotifier;
///
/// let email = EmailNotifier::builder("smtp://127.0.0.1:2525")
///     .from("toolnexus <bot@example.com>")
///     .to("alice@example.com")
///     .build()
///     .unwrap();
/// # let _ = email;
/// let no_one = EmailNotifier::builder("smtp://127.0.0.1:2525").from("bot@example.com").build();
/// assert_eq!(no_one.unwrap_err().to_string(), "an email notifier needs at least one `to` address");
/// ```
///
/// On a deliverer, as the README's webhook example (the README shows the lines that differ):
///
/// ```
/// use std::{sync::Arc, time::Duration};
/// use toolnexus::notify::{Deliverer, EmailNotifier};
/// use toolnexus::store::{MemoryStore, RunStore};
/// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit, json};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // a park writes one notification for "alice-email"
/// let store = Arc::new(MemoryStore::new().with_notifiers(["alice-email"]).unwrap());
/// let email = EmailNotifier::builder("smtp://127.0.0.1:9")
///     .from("toolnexus <bot@example.com>")
///     .to("alice@example.com")
///     .build()
///     .unwrap();
/// let deliverer = Deliverer::builder(store.clone())
///     .notifier("alice-email", Arc::new(email))
///     .links(|request_id| Some(format!("https://example.com/inbox/r/{request_id}")))
///     .retry_delay(Duration::from_millis(100))
///     .build();
///
/// let ask = FnTool::builder("deploy").description("Deploys, once approved.")
///     .handler(|_, _| async { ToolResult::suspended(Request::approval("Deploy build 42?")) })
///     .build().unwrap();
/// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
/// let client = Client::builder(ScriptedModel::new([Reply::tool_call("deploy", json!({}))]))
///     .model_name("m").store(store.clone()).build().unwrap();
/// let parked = client.run("ship it", &toolkit).await.unwrap();
/// // (no SMTP server on port 9 here: the attempt fails, is recorded, and waits for a retry)
/// assert_eq!(deliverer.deliver_due().await.unwrap(), 1);
/// let info = store.info(&parked.run_id).await.unwrap().unwrap();
/// let notified: Vec<_> = info.history.iter().filter_map(|e| e.outcome.as_deref()).collect();
/// assert_eq!(notified, ["retry"]);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct EmailNotifier {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
}

/// Builds an [`EmailNotifier`]; see [`EmailNotifier::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct EmailNotifierBuilder {
    url: String,
    from: Option<String>,
    to: Vec<String>,
}

impl EmailNotifier {
    /// An email notifier sending through the SMTP server at `url`: `smtp://host:port` (plain;
    /// `?tls=required` for STARTTLS), `smtps://host:port` (TLS), with `user:password@` to log
    /// in, as lettre's `AsyncSmtpTransport::from_url` reads it.
    pub fn builder(url: impl Into<String>) -> EmailNotifierBuilder {
        EmailNotifierBuilder {
            url: url.into(),
            from: None,
            to: Vec::new(),
        }
    }
}

impl EmailNotifierBuilder {
    /// The sender (`bot@example.com` or `Name <bot@example.com>`).
    pub fn from(mut self, mailbox: impl Into<String>) -> Self {
        self.from = Some(mailbox.into());
        self
    }

    /// A recipient (call it once per address).
    pub fn to(mut self, mailbox: impl Into<String>) -> Self {
        self.to.push(mailbox.into());
        self
    }

    /// Finishes the notifier (no connection is made until the first delivery).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a URL or an address that does not read, or without a sender or
    /// a recipient.
    pub fn build(self) -> Result<EmailNotifier, Error> {
        let mailbox = |s: &str| {
            s.parse::<Mailbox>()
                .map_err(|e| Error::Config(format!("`{s}` is not an email address: {e}")))
        };
        let from = mailbox(self.from.as_deref().ok_or_else(|| {
            Error::Config("an email notifier needs a `from` address".to_owned())
        })?)?;
        if self.to.is_empty() {
            return Err(Error::Config(
                "an email notifier needs at least one `to` address".to_owned(),
            ));
        }
        let to = self
            .to
            .iter()
            .map(|s| mailbox(s))
            .collect::<Result<Vec<_>, _>>()?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&self.url)
            .map_err(|e| Error::Config(format!("`{}` is not an SMTP URL: {e}", self.url)))?
            .build();
        Ok(EmailNotifier {
            transport,
            from,
            to,
        })
    }
}

/// `s` with HTML's special characters escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl EmailNotifier {
    /// The email of `notice`.
    fn message(&self, notice: &Notice) -> Result<Message, NotifyError> {
        let mut plain = format!("{}\n\n", notice.headline());
        let mut html = format!("<p>{}</p>", escape(&notice.headline()));
        if let Some(link) = notice.link() {
            let _ = writeln!(plain, "Open the request: {link}");
            let _ = write!(
                html,
                "<p><a href=\"{0}\">Open the request</a></p>",
                escape(link)
            );
        }
        let _ = writeln!(
            plain,
            "\nRun {}, request {} ({}). Notification {}.",
            notice.run_id(),
            notice.request_id(),
            notice.kind(),
            notice.notification_id()
        );
        let _ = write!(
            html,
            "<p><small>Run {}, request {} ({}). Notification {}.</small></p>",
            escape(notice.run_id()),
            escape(notice.request_id()),
            escape(notice.kind()),
            escape(notice.notification_id())
        );
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(notice.headline())
            .message_id(Some(format!("<{}@toolnexus>", notice.notification_id())));
        for to in &self.to {
            builder = builder.to(to.clone());
        }
        builder
            .multipart(MultiPart::alternative_plain_html(plain, html))
            .map_err(|e| NotifyError::permanent(format!("cannot write the email: {e}")))
    }
}

impl Notifier for EmailNotifier {
    fn deliver<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<(), NotifyError>> {
        Box::pin(async move {
            let message = self.message(notice)?;
            match self.transport.send(message).await {
                Ok(_) => Ok(()),
                Err(e) if e.is_permanent() => Err(NotifyError::permanent(format!(
                    "SMTP refused the email: {e}"
                ))),
                Err(e) => Err(NotifyError::retry(format!("SMTP: {e}"))),
            }
        })
    }
}
