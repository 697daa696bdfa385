//! Moving a request body to the endpoint and a reply back: retries with backoff or
//! `Retry-After`, the per-request timeout, cancellation, and errors that never show the key.
//! What the bytes mean is the [`Dialect`]'s business.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{StatusCode, Url};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::dialect::Dialect;
use super::key::ApiKey;
use super::stream::read_event_stream;
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
}

/// One endpoint's connection: the HTTP client (its pool), where to post, the headers (the
/// key among them, marked sensitive), and the options.
pub(super) struct Transport {
    pub(super) http: reqwest::Client,
    pub(super) endpoint: Url,
    pub(super) key: Option<ApiKey>,
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
                        endpoint = %self.endpoint,
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

    async fn attempt(
        &self,
        dialect: &dyn Dialect,
        body: &[u8],
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Failure> {
        let mut req = self
            .http
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .body(body.to_vec());
        if sink.is_some() {
            req = req.header(ACCEPT, "text/event-stream");
        }
        let response = req.send().await.map_err(|e| Failure::Retry {
            error: Error::transport_from("the request could not be sent", self.scrub(e)),
            retry_after: None,
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry::retry_after(response.headers());
            let text = response.text().await.unwrap_or_default();
            let fallback = status.canonical_reason().unwrap_or("request failed");
            let error = Error::Provider {
                status: status.as_u16(),
                message: self.redact(&wire::error_message(&text, fallback)),
            };
            tracing::debug!(endpoint = %self.endpoint, status = status.as_u16(), "provider error");
            return Err(if retry::is_retryable_status(status) {
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
                .map_err(Failure::Final),
            _ => {
                let bytes = response.bytes().await.map_err(|e| Failure::Retry {
                    error: Error::transport_from("the reply could not be read", self.scrub(e)),
                    retry_after: None,
                })?;
                let turn = parse_whole(dialect, status, &bytes).map_err(Failure::Final)?;
                // a server that ignored `stream: true` still gets its text delivered
                if let (Some(sink), Some(text)) = (sink, turn.text.as_deref()) {
                    sink(text);
                }
                Ok(turn)
            }
        }
    }

    async fn read_stream(
        &self,
        dialect: &dyn Dialect,
        response: reqwest::Response,
        sink: DeltaSink<'_>,
    ) -> Result<ModelTurn, Error> {
        let chunks = futures_util::stream::unfold(Some(response), |state| async move {
            let mut response = state?;
            match response.chunk().await {
                Ok(Some(bytes)) => Some((Ok(bytes), Some(response))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        });
        read_event_stream(dialect, chunks, sink, |e| {
            Error::transport_from("the connection broke mid-stream", self.scrub(e))
        })
        .await
    }

    /// `text` with every occurrence of the key replaced.
    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.redact(text),
            None => text.to_owned(),
        }
    }

    /// The HTTP client's error, without its URL when the key shows anywhere in it (a key put
    /// in the base URL); the error never carries headers.
    fn scrub(&self, e: reqwest::Error) -> reqwest::Error {
        match &self.key {
            Some(key) if error_chain(&e).contains(key.expose()) => e.without_url(),
            _ => e,
        }
    }
}

/// A whole reply body, read as `dialect`.
pub(super) fn parse_whole(
    dialect: &dyn Dialect,
    status: StatusCode,
    bytes: &[u8],
) -> Result<ModelTurn, Error> {
    let reply: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::transport_from(
            format!(
                "the provider's reply (HTTP {}) is not valid JSON",
                status.as_u16()
            ),
            e,
        )
    })?;
    dialect.parse_reply(&reply)
}

/// An error and its sources, `: `-separated.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
