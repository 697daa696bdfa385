//! HTTP providers (feature `http`, on by default): OpenAI- and Anthropic-style endpoints as a
//! [`Model`], with streaming, retries, a timeout, cancellation, and a key that never shows.

mod anthropic;
mod key;
mod openai;
mod retry;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT,
};
use reqwest::{StatusCode, Url};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::model::{DeltaSink, Model, ModelRequest, ModelTurn};
use crate::tool::BoxFuture;

pub use key::ApiKey;

/// The default `max_tokens` sent to Anthropic-style endpoints, which require one.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The default number of retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The default first backoff step (doubled on each retry, with jitter).
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// The longest `Retry-After` honoured by default; a longer one ends the request with the
/// provider's error instead of sleeping.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The `anthropic-version` header value sent to Anthropic-style endpoints.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Which wire format an endpoint speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderStyle {
    /// OpenAI chat completions, `POST {base}/chat/completions` with `Authorization: Bearer`:
    /// OpenAI, OpenRouter, Ollama, vLLM, LM Studio and other OpenAI-compatible servers.
    OpenAi,
    /// Anthropic messages, `POST {base}/v1/messages` with `x-api-key` and
    /// `anthropic-version: 2023-06-01`.
    Anthropic,
}

/// An HTTP endpoint as a [`Model`] for the agent loop.
///
/// Each turn sends the request's model id verbatim (the provider's own
/// [`model`](HttpProviderBuilder::model) when the request has none), the transcript converted
/// to the endpoint's wire format, and the tools in that style's schema. With a delta sink the
/// reply is streamed (server-sent events) and each text delta handed over as it arrives.
///
/// Requests are retried on 429/500/502/503/504 and network errors, with exponential backoff
/// and jitter (2 retries from 500 ms by default) or the provider's whole-seconds
/// `Retry-After`. A [`timeout`](HttpProviderBuilder::timeout) or a cancelled
/// [`cancellation`](HttpProviderBuilder::cancellation) token aborts the request in flight
/// and is never retried. The API key is sent in its header and nowhere else: `Debug`, errors
/// and logs show `[redacted]`.
///
/// Cloning is cheap and shares the connection pool.
///
/// ```no_run
/// use toolnexus::{HttpProvider, Message, Model, ModelRequest};
///
/// # async fn demo() -> toolnexus::Result<()> {
/// let provider = HttpProvider::openai("https://api.openai.com/v1")
///     .model("gpt-4o-mini")
///     .build()?; // the key comes from OPENAI_API_KEY
/// let request = ModelRequest::new("gpt-4o-mini", vec![Message::user("Hello!")], vec![]);
/// let turn = provider.complete(&request, None).await?;
/// println!("{}", turn.text.unwrap_or_default());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HttpProvider {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    style: ProviderStyle,
    endpoint: Url,
    model: Option<String>,
    key: Option<ApiKey>,
    headers: HeaderMap,
    max_tokens: u32,
    body_fields: Map<String, Value>,
    max_retries: u32,
    backoff_base: Duration,
    max_retry_after: Duration,
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        let header_names: Vec<&str> = i
            .headers
            .keys()
            .map(HeaderName::as_str)
            .filter(|n| !is_auth_header(n))
            .collect();
        f.debug_struct("HttpProvider")
            .field("style", &i.style)
            .field("endpoint", &i.endpoint.as_str())
            .field("model", &i.model)
            .field("api_key", &i.key)
            .field("headers", &header_names)
            .field("max_tokens", &i.max_tokens)
            .field("max_retries", &i.max_retries)
            .field("backoff_base", &i.backoff_base)
            .field("timeout", &i.timeout)
            .finish_non_exhaustive()
    }
}

fn is_auth_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("x-api-key")
}

/// Builds an [`HttpProvider`]; see [`HttpProvider::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct HttpProviderBuilder {
    style: ProviderStyle,
    base_url: String,
    model: Option<String>,
    key: Option<ApiKey>,
    key_from_env: bool,
    headers: Vec<(String, String)>,
    max_tokens: u32,
    body_fields: Map<String, Value>,
    max_retries: u32,
    backoff_base: Duration,
    max_retry_after: Duration,
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
}

impl fmt::Debug for HttpProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProviderBuilder")
            .field("style", &self.style)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.key)
            .finish_non_exhaustive()
    }
}

impl HttpProvider {
    /// Starts a provider for the endpoint at `base_url` speaking `style`.
    pub fn builder(style: ProviderStyle, base_url: impl Into<String>) -> HttpProviderBuilder {
        HttpProviderBuilder {
            style,
            base_url: base_url.into(),
            model: None,
            key: None,
            key_from_env: true,
            headers: Vec::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            body_fields: Map::new(),
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            timeout: None,
            cancel: None,
        }
    }

    /// An OpenAI-style endpoint (`https://api.openai.com/v1`, `https://openrouter.ai/api/v1`,
    /// `http://localhost:11434/v1`, ...).
    pub fn openai(base_url: impl Into<String>) -> HttpProviderBuilder {
        Self::builder(ProviderStyle::OpenAi, base_url)
    }

    /// An Anthropic-style endpoint (`https://api.anthropic.com`).
    pub fn anthropic(base_url: impl Into<String>) -> HttpProviderBuilder {
        Self::builder(ProviderStyle::Anthropic, base_url)
    }

    /// The wire format.
    pub fn style(&self) -> ProviderStyle {
        self.inner.style
    }

    /// The URL every request is posted to.
    pub fn endpoint(&self) -> &str {
        self.inner.endpoint.as_str()
    }

    /// The model id used when a request carries none.
    pub fn model(&self) -> Option<&str> {
        self.inner.model.as_deref()
    }

    /// Whether a key is configured (the key itself is never handed out).
    pub fn has_api_key(&self) -> bool {
        self.inner.key.is_some()
    }
}

impl HttpProviderBuilder {
    /// The model id for requests that carry none (the agent loop always sends its own).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The API key. Without one, the key comes from the environment: `ANTHROPIC_API_KEY` for
    /// the Anthropic style; for the OpenAI style `OPENROUTER_API_KEY` when the base URL's host
    /// is `openrouter.ai`, else `OPENAI_API_KEY`. With no key at all no auth header is sent
    /// (a local Ollama needs none).
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Whether to read the key from the environment when none is given (default `true`).
    /// Turn it off for a local server that must not receive your cloud key.
    pub fn key_from_env(mut self, enabled: bool) -> Self {
        self.key_from_env = enabled;
        self
    }

    /// An extra header on every request (OpenRouter's `HTTP-Referer` and `X-Title`, a
    /// gateway's routing header, ...). Its value is treated as sensitive and never shown.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `max_tokens` for Anthropic-style requests, which require it (default
    /// [`DEFAULT_MAX_TOKENS`]). For an OpenAI-style limit use
    /// [`body_field`](Self::body_field).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// A top-level field added to every request body (`temperature`, `max_completion_tokens`,
    /// a provider's routing options, ...); it replaces a field of the same name.
    pub fn body_field(mut self, key: impl Into<String>, value: Value) -> Self {
        self.body_fields.insert(key.into(), value);
        self
    }

    /// Retries after the first attempt on 429/500/502/503/504 and network errors (default
    /// [`DEFAULT_MAX_RETRIES`]; 0 turns retries off).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The first backoff step, doubled on each retry, each wait a random point in the upper
    /// half of its step (default [`DEFAULT_BACKOFF_BASE`]).
    pub fn backoff_base(mut self, base: Duration) -> Self {
        self.backoff_base = base;
        self
    }

    /// The longest whole-seconds `Retry-After` to honour (default
    /// [`DEFAULT_MAX_RETRY_AFTER`]); a longer one ends the request with the provider's error.
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.max_retry_after = limit;
        self
    }

    /// The limit of one turn, retries and streaming included; past it the request in flight
    /// is aborted with [`Error::Timeout`] and not retried. No limit by default.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Cancelling `token` aborts the request in flight (or the wait before a retry) with
    /// [`Error::Cancelled`]; it is not retried.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Finishes the provider.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a base URL that is not an `http(s)` URL, an invalid extra header,
    /// a key that cannot be a header value, or a TLS setup that fails (no usable root
    /// certificates).
    pub fn build(self) -> Result<HttpProvider, Error> {
        self.build_with_env(|name| std::env::var(name).ok())
    }

    fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<HttpProvider, Error> {
        let endpoint = endpoint(self.style, &self.base_url)?;
        let key = match self.key {
            Some(key) => Some(key),
            None if self.key_from_env => env(env_key_name(self.style, &endpoint))
                .filter(|k| !k.trim().is_empty())
                .map(ApiKey::new),
            None => None,
        };
        let headers = headers(self.style, key.as_ref(), &self.headers)?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpProvider {
            inner: Arc::new(Inner {
                http,
                style: self.style,
                endpoint,
                model: self.model.filter(|m| !m.is_empty()),
                key,
                headers,
                max_tokens: self.max_tokens,
                body_fields: self.body_fields,
                max_retries: self.max_retries,
                backoff_base: self.backoff_base,
                max_retry_after: self.max_retry_after,
                timeout: self.timeout,
                cancel: self.cancel,
            }),
        })
    }
}

/// `{base}/chat/completions`, or `{base}/v1/messages` (`/v1` added only when absent).
fn endpoint(style: ProviderStyle, base_url: &str) -> Result<Url, Error> {
    let base = base_url.trim().trim_end_matches('/');
    let url = match style {
        ProviderStyle::OpenAi => format!("{base}/chat/completions"),
        ProviderStyle::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
        ProviderStyle::Anthropic => format!("{base}/v1/messages"),
    };
    let parsed = Url::parse(&url).map_err(|e| {
        Error::Config(format!(
            "invalid provider base URL `{base_url}`: {e}; give one like `https://api.openai.com/v1`"
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Config(format!(
            "invalid provider base URL `{base_url}`: the scheme must be http or https"
        )));
    }
    Ok(parsed)
}

fn env_key_name(style: ProviderStyle, endpoint: &Url) -> &'static str {
    match style {
        ProviderStyle::Anthropic => "ANTHROPIC_API_KEY",
        ProviderStyle::OpenAi
            if endpoint
                .host_str()
                .is_some_and(|h| h == "openrouter.ai" || h.ends_with(".openrouter.ai")) =>
        {
            "OPENROUTER_API_KEY"
        }
        ProviderStyle::OpenAi => "OPENAI_API_KEY",
    }
}

fn headers(
    style: ProviderStyle,
    key: Option<&ApiKey>,
    extra: &[(String, String)],
) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    map.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("toolnexus/", env!("CARGO_PKG_VERSION"))),
    );
    let bad_key = || {
        Error::Config(
            "the API key cannot be sent in an HTTP header: it has characters outside visible ASCII"
                .to_owned(),
        )
    };
    match style {
        ProviderStyle::OpenAi => {
            if let Some(key) = key {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| bad_key())?;
                value.set_sensitive(true);
                map.insert(AUTHORIZATION, value);
            }
        }
        ProviderStyle::Anthropic => {
            if let Some(key) = key {
                let mut value = HeaderValue::from_str(key.expose()).map_err(|_| bad_key())?;
                value.set_sensitive(true);
                map.insert(HeaderName::from_static("x-api-key"), value);
            }
            map.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
    }
    for (name, value) in extra {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::Config(format!("invalid header name `{name}`")))?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            Error::Config(format!(
                "invalid value for header `{name}`: use visible ASCII characters"
            ))
        })?;
        value.set_sensitive(true);
        map.insert(header, value);
    }
    Ok(map)
}

/// rustls with the ring crypto provider (fast to build, no C toolchain beyond `cc`) and the
/// platform's certificate verifier; HTTP/1.1 only.
fn tls_config() -> Result<rustls::ClientConfig, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| Error::Config(format!("cannot set up TLS certificate verification: {e}")))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("cannot set up TLS: {e}")))?
        .dangerous() // a custom verifier: the platform's, not a weakened one
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Why one attempt failed, and whether another may follow.
enum Failure {
    Retry {
        error: Error,
        retry_after: Option<Duration>,
    },
    Final(Error),
}

impl Inner {
    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.redact(text),
            None => text.to_owned(),
        }
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, Error> {
        let model = if request.model.is_empty() {
            self.model.as_deref().ok_or_else(|| {
                Error::Config(
                    "no model id: set one on the client (`.model_name(..)`) or on the provider (`.model(..)`)"
                        .to_owned(),
                )
            })?
        } else {
            request.model.as_str()
        };
        let mut body = match self.style {
            ProviderStyle::OpenAi => openai::body(request, model, stream),
            ProviderStyle::Anthropic => anthropic::body(request, model, self.max_tokens, stream),
        };
        for (k, v) in &self.body_fields {
            body.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&Value::Object(body))
            .map_err(|e| Error::Transport(format!("cannot encode the request body: {e}")))
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        sink: Option<DeltaSink<'_>>,
    ) -> Result<ModelTurn, Error> {
        let body = self.body(request, sink.is_some())?;
        let mut retries = 0;
        loop {
            let error = match self.attempt(&body, sink).await {
                Ok(turn) => return Ok(turn),
                Err(Failure::Final(error)) => return Err(error),
                Err(Failure::Retry { error, .. }) if retries >= self.max_retries => {
                    return Err(error);
                }
                Err(Failure::Retry {
                    error,
                    retry_after: Some(wait),
                }) if wait > self.max_retry_after => return Err(error),
                Err(Failure::Retry { error, retry_after }) => {
                    let wait =
                        retry_after.unwrap_or_else(|| retry::backoff(self.backoff_base, retries));
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
            error: self.transport(&e),
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
                .read_stream(response, sink)
                .await
                .map_err(Failure::Final),
            _ => {
                let bytes = response.bytes().await.map_err(|e| Failure::Retry {
                    error: self.transport(&e),
                    retry_after: None,
                })?;
                let turn = self.parse_whole(status, &bytes).map_err(Failure::Final)?;
                // a server that ignored `stream: true` still gets its text delivered
                if let (Some(sink), Some(text)) = (sink, turn.text.as_deref()) {
                    sink(text);
                }
                Ok(turn)
            }
        }
    }

    fn parse_whole(&self, status: StatusCode, bytes: &[u8]) -> Result<ModelTurn, Error> {
        let reply: Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::Transport(format!(
                "the provider's reply (HTTP {}) is not valid JSON: {e}",
                status.as_u16()
            ))
        })?;
        match self.style {
            ProviderStyle::OpenAi => openai::parse(&reply),
            ProviderStyle::Anthropic => anthropic::parse(&reply),
        }
    }

    async fn read_stream(
        &self,
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
        parse_event_stream(self.style, chunks, sink, |e| {
            Error::Transport(format!(
                "the connection broke mid-stream: {}",
                self.redact(&error_chain(&e))
            ))
        })
        .await
    }

    fn transport(&self, e: &reqwest::Error) -> Error {
        Error::Transport(self.redact(&error_chain(e)))
    }
}

/// Reads a provider's server-sent event stream (`chunks` as they arrive) into a turn, text
/// deltas into `sink`; a transport error becomes `broken(e)`.
async fn parse_event_stream<S, B, E>(
    style: ProviderStyle,
    chunks: S,
    sink: DeltaSink<'_>,
    broken: impl Fn(E) -> Error,
) -> Result<ModelTurn, Error>
where
    S: futures_util::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: fmt::Display,
{
    let mut events = std::pin::pin!(eventsource_stream::EventStream::new(chunks));
    let mut openai = openai::StreamState::default();
    let mut anthropic = anthropic::StreamState::default();
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| match e {
            eventsource_stream::EventStreamError::Transport(e) => broken(e),
            other => Error::Transport(format!(
                "the provider sent an invalid event stream: {other}"
            )),
        })?;
        match style {
            ProviderStyle::OpenAi => openai.on_data(&event.data, sink)?,
            ProviderStyle::Anthropic => anthropic.on_data(&event.data, sink)?,
        }
    }
    match style {
        ProviderStyle::OpenAi => openai.finish(),
        ProviderStyle::Anthropic => anthropic.finish(),
    }
}

/// Not public API (for the fuzz targets and tests): parses a streamed reply delivered in
/// `chunks`, as [`HttpProvider`] does with a `text/event-stream` body, without a network.
///
/// # Errors
///
/// As a streamed [`HttpProvider`] turn: an invalid event stream or event.
#[doc(hidden)]
pub fn parse_event_stream_chunks(
    style: ProviderStyle,
    chunks: &[&[u8]],
    sink: DeltaSink<'_>,
) -> Result<ModelTurn, Error> {
    let chunks = futures_util::stream::iter(chunks.iter().map(Ok::<_, std::convert::Infallible>));
    let parse = parse_event_stream(style, chunks, sink, |e| match e {});
    // every chunk is ready: the parse never waits
    futures_util::FutureExt::now_or_never(parse)
        .unwrap_or_else(|| Err(Error::Transport("the event stream did not end".to_owned())))
}

/// Not public API (for the fuzz targets and tests): parses a whole (not streamed) reply body
/// of `style`, as [`HttpProvider`] does.
///
/// # Errors
///
/// As a non-streamed [`HttpProvider`] turn: a body that is not JSON or not a reply.
#[doc(hidden)]
pub fn parse_reply_body(style: ProviderStyle, body: &[u8]) -> Result<ModelTurn, Error> {
    let reply: Value = serde_json::from_slice(body).map_err(|e| {
        Error::Transport(format!(
            "the provider's reply (HTTP 200) is not valid JSON: {e}"
        ))
    })?;
    match style {
        ProviderStyle::OpenAi => openai::parse(&reply),
        ProviderStyle::Anthropic => anthropic::parse(&reply),
    }
}

/// An error and its sources, `: `-separated (reqwest's own Display omits the cause).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let message = s.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = s.source();
    }
    text
}

impl Model for HttpProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>> {
        Box::pin(async move {
            let inner = &*self.inner;
            let work = async {
                match inner.timeout {
                    Some(limit) => tokio::time::timeout(limit, inner.complete(request, stream))
                        .await
                        .unwrap_or(Err(Error::Timeout(limit))),
                    None => inner.complete(request, stream).await,
                }
            };
            match &inner.cancel {
                Some(token) => tokio::select! {
                    biased;
                    () = token.cancelled() => Err(Error::Cancelled),
                    result = work => result,
                },
                None => work.await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    const ALL_KEYS: &[(&str, &str)] = &[
        ("OPENAI_API_KEY", "sk-openai"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENROUTER_API_KEY", "sk-or"),
    ];

    fn key_of(
        builder: HttpProviderBuilder,
        vars: &'static [(&'static str, &'static str)],
    ) -> Option<String> {
        let p = builder.build_with_env(env(vars)).unwrap();
        p.inner.key.as_ref().map(|k| k.expose().to_owned())
    }

    #[test]
    fn endpoints_per_style() {
        let ep = |style, base| endpoint(style, base).unwrap().to_string();
        assert_eq!(
            ep(ProviderStyle::OpenAi, "https://api.openai.com/v1/"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            ep(ProviderStyle::Anthropic, "https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            ep(
                ProviderStyle::Anthropic,
                "https://gateway.example/anthropic/v1/"
            ),
            "https://gateway.example/anthropic/v1/messages"
        );
        let err = endpoint(ProviderStyle::OpenAi, "localhost:11434").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid provider base URL `localhost:11434`: the scheme must be http or https"
        );
        let err = endpoint(ProviderStyle::OpenAi, "not a url").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid provider base URL `not a url`: relative URL without a base; give one like `https://api.openai.com/v1`"
        );
    }

    #[test]
    fn keys_come_from_the_options_or_the_environment() {
        assert_eq!(
            key_of(HttpProvider::openai("https://api.openai.com/v1"), ALL_KEYS).as_deref(),
            Some("sk-openai")
        );
        assert_eq!(
            key_of(
                HttpProvider::openai("https://openrouter.ai/api/v1"),
                ALL_KEYS
            )
            .as_deref(),
            Some("sk-or")
        );
        assert_eq!(
            key_of(
                HttpProvider::anthropic("https://api.anthropic.com"),
                ALL_KEYS
            )
            .as_deref(),
            Some("sk-ant")
        );
        assert_eq!(
            key_of(
                HttpProvider::openai("http://127.0.0.1:11434/v1").api_key("given"),
                ALL_KEYS
            )
            .as_deref(),
            Some("given")
        );
        assert_eq!(
            key_of(
                HttpProvider::openai("http://127.0.0.1:11434/v1").key_from_env(false),
                ALL_KEYS
            ),
            None
        );
        assert_eq!(
            key_of(HttpProvider::openai("http://127.0.0.1:1/v1"), &[]),
            None
        );
        assert_eq!(
            key_of(
                HttpProvider::openai("http://127.0.0.1:1/v1"),
                &[("OPENAI_API_KEY", "  ")]
            ),
            None
        );
    }

    #[test]
    fn debug_never_shows_the_key_or_header_values() {
        let p = HttpProvider::anthropic("http://127.0.0.1:9")
            .api_key("sk-very-secret")
            .header("x-gateway-token", "gw-secret")
            .model("claude-x")
            .build()
            .unwrap();
        let debug = format!("{p:?}");
        assert_eq!(
            debug,
            "HttpProvider { style: Anthropic, endpoint: \"http://127.0.0.1:9/v1/messages\", \
             model: Some(\"claude-x\"), api_key: Some(ApiKey([redacted])), \
             headers: [\"content-type\", \"user-agent\", \"anthropic-version\", \"x-gateway-token\"], \
             max_tokens: 4096, max_retries: 2, backoff_base: 500ms, timeout: None, .. }"
        );
        let builder = format!(
            "{:?}",
            HttpProvider::openai("http://h").api_key("sk-very-secret")
        );
        assert!(!builder.contains("sk-very-secret"), "{builder}");
        assert!(!format!("{:?}", p.inner.headers).contains("secret"));
    }

    #[test]
    fn bad_headers_are_config_errors() {
        let err = HttpProvider::openai("http://h")
            .header("bad name", "v")
            .build()
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid header name `bad name`");
        let err = HttpProvider::openai("http://h")
            .api_key("line\nbreak")
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the API key cannot be sent in an HTTP header: it has characters outside visible ASCII"
        );
    }
}
