//! Moving a request body to the endpoint and a reply back: retries with backoff or
//! `Retry-After`, the per-request timeout and the stall limits, capped bodies read
//! incrementally, cancellation, and errors that never show a secret. What the bytes mean is
//! the [`Dialect`]'s business.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{StatusCode, Url};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::dialect::Dialect;
use super::key::{ApiKey, Secrets, error_chain};
use super::stream::{StreamFailure, StreamLimits, read_event_stream};
use super::{retry, wire};
use crate::error::Error;
use crate::model::{DeltaSink, ModelTurn};

/// How requests are retried, bounded and cancelled; set on the builder.
pub(super) struct TransportOptions {
    pub(super) max_retries: u32,
    pub(super) backoff_base: Duration,
    pub(super) max_retry_after: Duration,
    pub(super) timeout: Option<Duration>,
    pub(super) cancel: Option<CancellationToken>,
    /// Statuses retried besides the defaults.
    pub(super) retry_statuses: Vec<u16>,
    /// Set on the HTTP client; kept to name it in errors.
    pub(super) connect_timeout: Option<Duration>,
    pub(super) first_byte_timeout: Option<Duration>,
    pub(super) idle_timeout: Option<Duration>,
    pub(super) max_reply_bytes: usize,
    pub(super) max_error_bytes: usize,
}

/// One endpoint's connection: the HTTP client (its pool), where to post, the headers (the
/// key among them, marked sensitive), and the options.
pub(super) struct Transport {
    pub(super) http: reqwest::Client,
    pub(super) endpoint: Url,
    pub(super) key: Option<ApiKey>,
    /// The key and the extra header values: what no text that leaves the provider shows.
    pub(super) secrets: Secrets,
    pub(super) headers: HeaderMap,
    pub(super) options: TransportOptions,
}

/// Why one attempt failed, and whether another may follow.
enum Failure {
    Retry {
        error: Error,
        retry_after: Option<Duration>,
    },
    Final(Error),
}

impl Transport {
    /// Posts `body` and reads the reply as `dialect` (streamed into `sink` when there is one),
    /// within the timeout and the cancellation.
    ///
    /// # Errors
    ///
    /// [`Error::ProviderTimeout`], [`Error::Cancelled`], or the last attempt's failure:
    /// [`Error::Provider`] or [`Error::Transport`].
    pub(super) async fn send(
        &self,
        dialect: &dyn Dialect,
        body: &[u8],
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Error> {
        let work = async {
            match self.options.timeout {
                Some(limit) => tokio::time::timeout(limit, self.retried(dialect, body, sink))
                    .await
                    .unwrap_or(Err(Error::ProviderTimeout(limit))),
                None => self.retried(dialect, body, sink).await,
            }
        };
        match &self.options.cancel {
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => Err(Error::Cancelled),
                result = work => result,
            },
            None => work.await,
        }
    }

    async fn retried(
        &self,
        dialect: &dyn Dialect,
        body: &[u8],
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Error> {
        let options = &self.options;
        let mut retries = 0;
        loop {
            let error = match self.attempt(dialect, body, sink).await {
                Ok(turn) => return Ok(turn),
                Err(Failure::Final(error)) => return Err(error),
                Err(Failure::Retry { error, .. }) if retries >= options.max_retries => {
                    return Err(error);
                }
                Err(Failure::Retry {
                    error,
                    retry_after: Some(wait),
                }) if wait > options.max_retry_after => return Err(error),
                Err(Failure::Retry { error, retry_after }) => {
                    let wait = retry_after
                        .unwrap_or_else(|| retry::backoff(options.backoff_base, retries));
                    tracing::debug!(
                        endpoint = %self.shown_endpoint(),
                        retry = retries + 1,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        error = %error,
                        "retrying provider request"
                    );
                    tokio::time::sleep(wait).await;
                    error
                }
            };
            drop(error);
            retries += 1;
        }
    }

    /// One attempt; its error already scrubbed of every secret (so the retry log is too).
    async fn attempt(
        &self,
        dialect: &dyn Dialect,
        body: &[u8],
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Failure> {
        self.attempt_raw(dialect, body, sink)
            .await
            .map_err(|failure| match failure {
                Failure::Retry { error, retry_after } => Failure::Retry {
                    error: self.secrets.scrub(error),
                    retry_after,
                },
                Failure::Final(error) => Failure::Final(self.secrets.scrub(error)),
            })
    }

    async fn attempt_raw(
        &self,
        dialect: &dyn Dialect,
        body: &[u8],
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Failure> {
        let options = &self.options;
        let mut req = self
            .http
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .body(body.to_vec());
        if sink.is_some() {
            req = req.header(ACCEPT, "text/event-stream");
        }
        let response = match options.first_byte_timeout {
            Some(limit) => {
                tokio::time::timeout(limit, req.send())
                    .await
                    .map_err(|_| Failure::Retry {
                        error: Error::ProviderIdle {
                            waiting_for: "the response head",
                            limit,
                        },
                        retry_after: None,
                    })?
            }
            None => req.send().await,
        };
        let response = response.map_err(|e| Failure::Retry {
            error: self.send_error(e),
            retry_after: None,
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry::retry_after(response.headers());
            let (bytes, cut) = self
                .read_body(response, options.max_error_bytes)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            let fallback = status.canonical_reason().unwrap_or("request failed");
            let message = if cut {
                // the start of a longer body: a key cut at its end loses its piece too
                let start = self.secrets.clean_tail(&text);
                format!(
                    "the error body exceeds {} bytes (`max_error_bytes`) and was not read further; it starts: {start}",
                    options.max_error_bytes
                )
            } else {
                wire::error_message(&text, fallback)
            };
            let error = Error::Provider {
                status: status.as_u16(),
                message,
            };
            tracing::debug!(endpoint = %self.shown_endpoint(), status = status.as_u16(), "provider error");
            return Err(if self.is_retryable(status) {
                Failure::Retry { error, retry_after }
            } else {
                Failure::Final(error)
            });
        }
        let is_event_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        match sink {
            Some(sink) if is_event_stream => self
                .read_stream(dialect, response, sink)
                .await
                .map_err(|StreamFailure { error, retryable }| {
                    if retryable {
                        Failure::Retry {
                            error,
                            retry_after: None,
                        }
                    } else {
                        Failure::Final(error)
                    }
                }),
            _ => {
                let (bytes, cut) = self
                    .read_body(response, options.max_reply_bytes)
                    .await
                    .map_err(|error| Failure::Retry {
                        error,
                        retry_after: None,
                    })?;
                if cut {
                    return Err(Failure::Final(Error::transport(format!(
                        "the provider's reply exceeds {} bytes (`max_reply_bytes`); not read further",
                        options.max_reply_bytes
                    ))));
                }
                let turn = parse_whole(dialect, status, &bytes).map_err(Failure::Final)?;
                // a server that ignored `stream: true` still gets its text delivered
                if let (Some(sink), Some(text)) = (sink, turn.text.as_deref()) {
                    sink(text);
                }
                Ok(turn)
            }
        }
    }

    /// Whether a failed status is retried: 429, 500, 502, 503, 504, 529 and the host's own.
    fn is_retryable(&self, status: StatusCode) -> bool {
        retry::is_retryable_status(status) || self.options.retry_statuses.contains(&status.as_u16())
    }

    /// The HTTP client's error for a request that got no response: the connect timeout
    /// named as such.
    fn send_error(&self, e: reqwest::Error) -> Error {
        if e.is_connect()
            && e.is_timeout()
            && let Some(limit) = self.options.connect_timeout
        {
            return Error::ProviderIdle {
                waiting_for: "the connection",
                limit,
            };
        }
        Error::transport_from("the request could not be sent", self.scrub(e))
    }

    /// At most `max` bytes of a body, read chunk by chunk (never more than `max` plus one
    /// chunk in memory), within the idle timeout; `true` when the body is longer.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        max: usize,
    ) -> Result<(Vec<u8>, bool), Error> {
        let read =
            async {
                let mut body = Vec::new();
                while let Some(chunk) = response.chunk().await.map_err(|e| {
                    Error::transport_from("the reply could not be read", self.scrub(e))
                })? {
                    let room = max - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        return Ok((body, true));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok((body, false))
            };
        match self.options.idle_timeout {
            Some(limit) => {
                tokio::time::timeout(limit, read)
                    .await
                    .unwrap_or(Err(Error::ProviderIdle {
                        waiting_for: "the reply body",
                        limit,
                    }))
            }
            None => read.await,
        }
    }

    async fn read_stream(
        &self,
        dialect: &dyn Dialect,
        response: reqwest::Response,
        sink: DeltaSink<'_>,
    ) -> Result<ModelTurn, StreamFailure> {
        let chunks = futures_util::stream::unfold(Some(response), |state| async move {
            let mut response = state?;
            match response.chunk().await {
                Ok(Some(bytes)) => Some((Ok(bytes), Some(response))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        });
        let limits = StreamLimits {
            idle: self.options.idle_timeout,
            max_bytes: self.options.max_reply_bytes,
        };
        read_event_stream(dialect, chunks, sink, limits, |e| {
            Error::transport_from("the connection broke mid-stream", self.scrub(e))
        })
        .await
    }

    /// The endpoint as logs show it (redacted: a key may sit in a base URL's query).
    pub(super) fn shown_endpoint(&self) -> String {
        self.secrets.clean(self.endpoint.as_str())
    }

    /// The HTTP client's error, without its URL when the key shows anywhere in it (a key put
    /// in the base URL); the error never carries headers.
    fn scrub(&self, e: reqwest::Error) -> reqwest::Error {
        if self.secrets.shows_in(&error_chain(&e)) {
            e.without_url()
        } else {
            e
        }
    }
}

/// A whole reply body, read as `dialect`.
pub(super) fn parse_whole(
    dialect: &dyn Dialect,
    status: StatusCode,
    bytes: &[u8],
) -> Result<ModelTurn, Error> {
    let reply: Value = match crate::json_text::from_peer_slice(bytes) {
        Ok(reply) => reply,
        Err(e) => {
            return dialect.parse_lenient(bytes).ok_or_else(|| {
                let message = format!(
                    "the provider's reply (HTTP {}) is not valid JSON",
                    status.as_u16()
                );
                Error::transport_from(message, e)
            });
        }
    };
    dialect.parse_reply(&reply)
}

/// The underlying error of an [`Error::Transport`].
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The transport failures the providers make.
impl Error {
    /// A transport failure with no underlying error.
    pub(crate) fn transport(message: impl Into<String>) -> Self {
        Self::Transport {
            message: message.into(),
            source: None,
        }
    }

    /// A transport failure caused by `source` (kept as the error's `source()`, not in its
    /// message).
    pub(crate) fn transport_from(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Transport {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use crate::error::Error;

    #[test]
    fn a_transport_error_shows_its_cause_only_as_its_source() {
        let cause = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let cause_text = cause.to_string();
        let err = Error::transport_from("the provider's reply (HTTP 200) is not valid JSON", cause);
        assert_eq!(
            err.to_string(),
            "transport error: the provider's reply (HTTP 200) is not valid JSON"
        );
        assert_eq!(err.source().map(ToString::to_string), Some(cause_text));
        assert!(err.is_transport());
        let bare = Error::transport("the event stream did not end");
        assert_eq!(
            bare.to_string(),
            "transport error: the event stream did not end"
        );
        assert!(bare.source().is_none());
        let provider = Error::Provider {
            status: 429,
            message: "slow down".to_owned(),
        };
        assert_eq!(provider.provider_status(), Some(429));
        assert_eq!(bare.provider_status(), None);
    }
}
