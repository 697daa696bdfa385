//! [`WebhookNotifier`]: a signed JSON POST of each notice (feature `notify-webhook`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{BoxFuture, Notice, Notifier, NotifyError, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::error::Error;

/// The header carrying the notification id (the receiver's key to drop duplicates), also in
/// the JSON body.
const NOTIFICATION_HEADER: &str = "X-Toolnexus-Notification";

/// What a [`WebhookNotifier`] posts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookBody {
    /// The notice as JSON ([`Notice::to_json`]): `{"notification","reason","attempt","run",
    /// "request","waitsFor","link"}`, the request as the wire contract writes it.
    Notice,
    /// A chat incoming-webhook body (Slack, Mattermost, Rocket.Chat, Teams workflows):
    /// `{"text": "<headline>\n<link>"}`.
    Chat,
}

/// POSTs each notice to a URL, signed with HMAC-SHA-256 (see [`sign`](super::sign) for the
/// receiver's check): headers [`SIGNATURE_HEADER`], [`TIMESTAMP_HEADER`] and
/// `X-Toolnexus-Notification` (the id). A `2xx` reply delivers it; `408`, `425`, `429` and
/// `5xx` replies and transport errors are tried again; any other `4xx` gives it up (the
/// receiver refuses the notification itself).
///
/// ```
/// use toolnexus::notify::{WebhookBody, WebhookNotifier};
///
/// let hook = WebhookNotifier::new("https://hooks.example.com/toolnexus", b"shared secret".to_vec()).unwrap();
/// let chat = WebhookNotifier::new("https://chat.example.com/hooks/abc", Vec::new()).unwrap()
///     .body(WebhookBody::Chat);
/// # let _ = (hook, chat);
/// assert!(WebhookNotifier::new("not a url", Vec::new()).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct WebhookNotifier {
    url: reqwest::Url,
    secret: Vec<u8>,
    body: WebhookBody,
    client: reqwest::Client,
}

impl WebhookNotifier {
    /// A notifier posting [`WebhookBody::Notice`] to `url` (`http` or `https`), signed with
    /// `secret` (empty: unsigned, e.g. for a chat webhook whose URL is the secret), each
    /// request given 10 seconds.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a URL that does not parse or is not `http(s)`, or when TLS
    /// cannot be set up.
    pub fn new(url: &str, secret: Vec<u8>) -> Result<Self, Error> {
        let url = reqwest::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| Error::Config(format!("`{url}` is not an http(s) URL")))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::providers::tls_config().map_err(Error::Config)?)
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            url,
            secret,
            body: WebhookBody::Notice,
            client,
        })
    }

    /// What to post (default [`WebhookBody::Notice`]).
    #[must_use]
    pub fn body(mut self, body: WebhookBody) -> Self {
        self.body = body;
        self
    }

    /// The body posted for `notice`.
    fn body_of(&self, notice: &Notice) -> Vec<u8> {
        let value = match self.body {
            WebhookBody::Notice => notice.to_json(),
            WebhookBody::Chat => {
                let text = match notice.link() {
                    Some(link) => format!("{}\n{link}", notice.headline()),
                    None => notice.headline(),
                };
                serde_json::json!({ "text": text })
            }
        };
        serde_json::to_vec(&value).unwrap_or_default()
    }
}

impl Notifier for WebhookNotifier {
    fn deliver<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<(), NotifyError>> {
        Box::pin(async move {
            let body = self.body_of(notice);
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let mut request = self
                .client
                .post(self.url.clone())
                .header("content-type", "application/json")
                .header(NOTIFICATION_HEADER, notice.notification_id());
            if !self.secret.is_empty() {
                request = request
                    .header(TIMESTAMP_HEADER, now.to_string())
                    .header(SIGNATURE_HEADER, sign(&self.secret, now, &body));
            }
            let reply = request
                .body(body)
                .send()
                .await
                .map_err(|e| NotifyError::retry(format!("POST {}: {e}", self.url)))?;
            let status = reply.status();
            if status.is_success() {
                return Ok(());
            }
            let message = format!("POST {}: the receiver replied {status}", self.url);
            match status.as_u16() {
                408 | 425 | 429 | 500..=599 => Err(NotifyError::retry(message)),
                _ => Err(NotifyError::permanent(message)),
            }
        })
    }
}
