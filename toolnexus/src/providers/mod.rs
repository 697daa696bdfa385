//! HTTP providers (feature `http`, on by default): OpenAI- and Anthropic-style endpoints as a
//! [`Model`], with streaming, retries, a timeout, cancellation, and a key that never shows.
//!
//! One concept a file: the [`HttpProvider`] (here), its builder (`builder`), one dialect per
//! wire format behind one internal trait (`dialect`, `openai`, `anthropic`, with what both
//! share in `wire`), the event-stream reader (`stream`), and the transport that retries, times
//! out and redacts (`transport`, `retry`, `key`).

mod anthropic;
mod builder;
mod dialect;
mod key;
mod openai;
mod retry;
mod sse;
mod stream;
mod tls;
mod transport;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderName;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::model::{DeltaSink, Model, ModelRequest, ModelTurn};
use crate::tool::BoxFuture;

pub use builder::HttpProviderBuilder;
pub use key::ApiKey;

pub(crate) use tls::tls_config;
use transport::Transport;

/// The default `max_tokens` sent to Anthropic-style endpoints, which require one: 4096.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The default number of retries after the first attempt: 2.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The default first backoff step (doubled on each retry, with jitter): 500 ms.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// The longest `Retry-After` honoured by default, 60 seconds; a longer one ends the request
/// with the provider's error instead of sleeping.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The default [`connect_timeout`](HttpProviderBuilder::connect_timeout): 10 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`first_byte_timeout`](HttpProviderBuilder::first_byte_timeout): 300 seconds (a
/// reply that is not streamed comes whole with its head).
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);
/// The default [`idle_timeout`](HttpProviderBuilder::idle_timeout): 120 seconds without a stream
/// event.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default [`max_reply_bytes`](HttpProviderBuilder::max_reply_bytes): 16 MiB.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 16 << 20;
/// The default [`max_error_bytes`](HttpProviderBuilder::max_error_bytes): 64 KiB.
pub const DEFAULT_MAX_ERROR_BYTES: usize = 64 << 10;
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
/// Requests are retried on 429/500/502/503/504/529 (and the host's
/// [`retry_statuses`](HttpProviderBuilder::retry_statuses)), network errors, stalls before
/// the reply, and a stream that breaks before any of its reply arrived, with exponential
/// backoff and jitter (2 retries from 500 ms by default) or the provider's whole-seconds
/// `Retry-After`. A [`timeout`](HttpProviderBuilder::timeout) or a cancelled
/// [`cancellation`](HttpProviderBuilder::cancellation) token aborts the request in flight
/// and is never retried ([`Error::ProviderTimeout`], [`Error::Cancelled`]).
///
/// Every input has a bounded cost by default: 10 s to connect, 300 s to the response head,
/// 120 s between stream events (keep-alive comments do not count) or for a whole body,
/// replies up to 16 MiB and error bodies up to 64 KiB, read incrementally (see the builder's
/// `*_timeout` and `max_*_bytes` options; `None` turns a timeout off).
///
/// The API key is sent in its header and nowhere else, to its own host only (see
/// [`api_key`](HttpProviderBuilder::api_key)): `Debug`, errors (streamed or not), logs and
/// tracing fields show `[redacted]` for the key and for every extra header value, and quote
/// at most 500 bytes of a provider's text, redacted before it is cut.
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
    style: ProviderStyle,
    request: RequestOptions,
    transport: Transport,
}

/// What every request body carries besides the transcript; set on the builder.
struct RequestOptions {
    model: Option<String>,
    max_tokens: u32,
    body_fields: Map<String, Value>,
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        let t = &i.transport;
        let header_names: Vec<&str> = t
            .headers
            .keys()
            .map(HeaderName::as_str)
            .filter(|n| !is_auth_header(n))
            .collect();
        f.debug_struct("HttpProvider")
            .field("style", &i.style)
            .field("endpoint", &t.shown_endpoint())
            .field("model", &i.request.model)
            .field("api_key", &t.key)
            .field("headers", &header_names)
            .field("max_tokens", &i.request.max_tokens)
            .field("max_retries", &t.options.max_retries)
            .field("backoff_base", &t.options.backoff_base)
            .field("timeout", &t.options.timeout)
            .field("connect_timeout", &t.options.connect_timeout)
            .field("first_byte_timeout", &t.options.first_byte_timeout)
            .field("idle_timeout", &t.options.idle_timeout)
            .finish_non_exhaustive()
    }
}

fn is_auth_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("x-api-key")
}

impl HttpProvider {
    /// Starts a provider for the endpoint at `base_url` speaking `style`.
    pub fn builder(style: ProviderStyle, base_url: impl Into<String>) -> HttpProviderBuilder {
        HttpProviderBuilder::new(style, base_url.into())
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
        self.inner.transport.endpoint.as_str()
    }

    /// The model id used when a request carries none.
    pub fn model(&self) -> Option<&str> {
        self.inner.request.model.as_deref()
    }

    /// Whether a key is configured (the key itself is never handed out).
    pub fn has_api_key(&self) -> bool {
        self.inner.transport.key.is_some()
    }
}

impl Inner {
    /// The request body in the provider's format: the request's model (or the provider's),
    /// the transcript, the tools, then the `body_field`s.
    fn body(&self, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, Error> {
        let options = &self.request;
        let model = if request.model.is_empty() {
            options.model.as_deref().ok_or_else(|| {
                Error::Config(
                    "no model id: set one on the client (`.model_name(..)`) or on the provider (`.model(..)`)"
                        .to_owned(),
                )
            })?
        } else {
            request.model.as_str()
        };
        let mut body = self
            .style
            .dialect()
            .body(request, model, options.max_tokens, stream)?;
        for (k, v) in &options.body_fields {
            body.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&Value::Object(body))
            .map_err(|e| Error::transport_from("cannot encode the request body", e))
    }
}

impl Model for HttpProvider {
    fn default_model(&self) -> Option<&str> {
        self.model()
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>> {
        Box::pin(async move {
            let inner = &*self.inner;
            let body = inner.body(request, stream.is_some())?;
            inner
                .transport
                .send(inner.style.dialect(), &body, stream)
                .await
        })
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
    let limits = stream::StreamLimits::NONE;
    let parse = stream::read_event_stream(style.dialect(), chunks, sink, limits, |e| match e {});
    // every chunk is ready: the parse never waits
    match futures_util::FutureExt::now_or_never(parse) {
        Some(result) => result.map_err(|failure| failure.error),
        None => Err(Error::transport("the event stream did not end")),
    }
}

/// Not public API (for the fuzz targets and tests): parses a whole (not streamed) reply body
/// of `style`, as [`HttpProvider`] does.
///
/// # Errors
///
/// As a non-streamed [`HttpProvider`] turn: a body that is not JSON or not a reply.
#[doc(hidden)]
pub fn parse_reply_body(style: ProviderStyle, body: &[u8]) -> Result<ModelTurn, Error> {
    transport::parse_whole(style.dialect(), StatusCode::OK, body)
}
