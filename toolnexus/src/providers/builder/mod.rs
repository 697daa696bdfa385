//! [`HttpProviderBuilder`]: every option of an [`HttpProvider`], held in one private
//! [`Config`] that `build` resolves.
//!
//! One concept a file: the options (here), which key a provider sends (`key`), and `build`'s
//! checks that turn the options into a provider: the endpoint, the headers, the TLS setup
//! (`build`).

mod build;
mod key;

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use self::key::KeySource;
use super::key::ApiKey;
use super::transport::TransportOptions;
use super::{
    DEFAULT_BACKOFF_BASE, DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_ERROR_BYTES, DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_AFTER, DEFAULT_MAX_TOKENS, HttpProvider, ProviderStyle, RequestOptions,
};
use crate::error::Error;

/// Builds an [`HttpProvider`]; see [`HttpProvider::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct HttpProviderBuilder {
    config: Config,
}

/// Every option of an [`HttpProvider`], declared once: what `build` resolves, then what the
/// request body and the transport use as given.
struct Config {
    style: ProviderStyle,
    base_url: String,
    key: KeySource,
    headers: Vec<(String, String)>,
    request: RequestOptions,
    transport: TransportOptions,
}

impl fmt::Debug for HttpProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        f.debug_struct("HttpProviderBuilder")
            .field("style", &c.style)
            .field("base_url", &c.base_url)
            .field("model", &c.request.model)
            .field("api_key", &c.key.given)
            .finish_non_exhaustive()
    }
}

impl HttpProviderBuilder {
    pub(super) fn new(style: ProviderStyle, base_url: String) -> Self {
        Self {
            config: Config {
                style,
                base_url,
                key: KeySource {
                    given: None,
                    from_env: true,
                    env_var: None,
                },
                headers: Vec::new(),
                request: RequestOptions {
                    model: None,
                    max_tokens: DEFAULT_MAX_TOKENS,
                    body_fields: Map::new(),
                },
                transport: TransportOptions {
                    max_retries: DEFAULT_MAX_RETRIES,
                    backoff_base: DEFAULT_BACKOFF_BASE,
                    max_retry_after: DEFAULT_MAX_RETRY_AFTER,
                    timeout: None,
                    cancel: None,
                    retry_statuses: Vec::new(),
                    connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
                    first_byte_timeout: Some(DEFAULT_FIRST_BYTE_TIMEOUT),
                    idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
                    max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
                    max_error_bytes: DEFAULT_MAX_ERROR_BYTES,
                },
            },
        }
    }
}

impl HttpProviderBuilder {
    /// The model id for requests that carry none (the agent loop always sends its own).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.config.request.model = Some(model.into());
        self
    }

    /// The API key. Without one, a key comes from the environment only for the host it
    /// belongs to, over `https`: `OPENAI_API_KEY` for `api.openai.com`, `OPENROUTER_API_KEY`
    /// for `openrouter.ai` (OpenAI style), `ANTHROPIC_API_KEY` for `api.anthropic.com`
    /// (Anthropic style). Any other endpoint (a gateway, a local server) gets no key unless
    /// one is given here or named with [`key_from_env_var`](Self::key_from_env_var); with no
    /// key no auth header is sent (a local Ollama needs none).
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.config.key.given = Some(key.into());
        self
    }

    /// Whether to read the key of a known host from its environment variable when none is
    /// given (default `true`; see [`api_key`](Self::api_key)).
    pub fn key_from_env(mut self, enabled: bool) -> Self {
        self.config.key.from_env = enabled;
        self
    }

    /// Reads the key from the environment variable `name` (for any endpoint: you named it);
    /// [`api_key`](Self::api_key) wins over it. `build` fails when the variable is unset or
    /// blank.
    ///
    /// ```
    /// use toolnexus::HttpProvider;
    ///
    /// let err = HttpProvider::openai("https://gateway.example/v1")
    ///     .key_from_env_var("TOOLNEXUS_DOC_UNSET_KEY")
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the environment variable `TOOLNEXUS_DOC_UNSET_KEY` named by `key_from_env_var` is not set"
    /// );
    /// ```
    pub fn key_from_env_var(mut self, name: impl Into<String>) -> Self {
        self.config.key.env_var = Some(name.into());
        self
    }

    /// An extra header on every request (OpenRouter's `HTTP-Referer` and `X-Title`, a
    /// gateway's token, ...). Every extra header value is treated as a secret like the key:
    /// never in `Debug`, and replaced by `[redacted]` in every error, log line and tracing
    /// field, also when a provider echoes it back (a key or value shorter than 8 bytes is
    /// not searched for in texts: it would match ordinary words).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.headers.push((name.into(), value.into()));
        self
    }

    /// `max_tokens` for Anthropic-style requests, which require it (default
    /// [`DEFAULT_MAX_TOKENS`]). For an OpenAI-style limit use
    /// [`body_field`](Self::body_field).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.config.request.max_tokens = max_tokens;
        self
    }

    /// A top-level field added to every request body (`temperature`, `max_completion_tokens`,
    /// a provider's routing options, ...); it replaces a field of the same name.
    pub fn body_field(mut self, key: impl Into<String>, value: Value) -> Self {
        self.config.request.body_fields.insert(key.into(), value);
        self
    }

    /// Retries after the first attempt on 429/500/502/503/504/529, the
    /// [`retry_statuses`](Self::retry_statuses), network errors, a connection that opens or
    /// answers too slowly, and a stream that breaks before any of its reply arrived (default
    /// [`DEFAULT_MAX_RETRIES`]; 0 turns retries off).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.config.transport.max_retries = retries;
        self
    }

    /// The first backoff step, doubled on each retry, each wait a random point in the upper
    /// half of its step (default [`DEFAULT_BACKOFF_BASE`]).
    pub fn backoff_base(mut self, base: Duration) -> Self {
        self.config.transport.backoff_base = base;
        self
    }

    /// The longest whole-seconds `Retry-After` to honour (default
    /// [`DEFAULT_MAX_RETRY_AFTER`]); a longer one ends the request with the provider's error.
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.config.transport.max_retry_after = limit;
        self
    }

    /// The limit of one turn, retries and streaming included; past it the request in flight
    /// is aborted with [`Error::ProviderTimeout`] and not retried. No limit by default.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.config.transport.timeout = Some(limit);
        self
    }

    /// More HTTP statuses to retry on, besides 429, 500, 502, 503, 504 and 529 (a gateway's
    /// own "try again" status, ...).
    ///
    /// ```
    /// let provider = toolnexus::HttpProvider::openai("http://127.0.0.1:8080/v1")
    ///     .retry_statuses([408, 425])
    ///     .build()?;
    /// # Ok::<(), toolnexus::Error>(())
    /// ```
    pub fn retry_statuses(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        self.config.transport.retry_statuses.extend(statuses);
        self
    }

    /// The longest wait for a TCP (and TLS) connection (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]; `None` for no limit). Past it the attempt fails with
    /// [`Error::ProviderIdle`] and is retried.
    pub fn connect_timeout(mut self, limit: impl Into<Option<Duration>>) -> Self {
        self.config.transport.connect_timeout = limit.into();
        self
    }

    /// The longest wait from sending a request to the response head (default
    /// [`DEFAULT_FIRST_BYTE_TIMEOUT`], long enough for a whole non-streamed reply, which
    /// comes with its head; `None` for no limit). Past it the attempt fails with
    /// [`Error::ProviderIdle`] and is retried.
    pub fn first_byte_timeout(mut self, limit: impl Into<Option<Duration>>) -> Self {
        self.config.transport.first_byte_timeout = limit.into();
        self
    }

    /// The longest wait for the next server-sent event of a streamed reply (SSE comments
    /// such as keep-alives do not count), and for the whole body of a reply that is not
    /// streamed once its head came (default [`DEFAULT_IDLE_TIMEOUT`]; `None` for no limit).
    /// Past it the reply fails with [`Error::ProviderIdle`]; retried when nothing of the
    /// reply had arrived.
    pub fn idle_timeout(mut self, limit: impl Into<Option<Duration>>) -> Self {
        self.config.transport.idle_timeout = limit.into();
        self
    }

    /// The most bytes of one reply, a whole body or a whole event stream (default
    /// [`DEFAULT_MAX_REPLY_BYTES`]). The body is read incrementally and a longer one fails
    /// with [`Error::Transport`] once the limit is passed, without reading the rest.
    pub fn max_reply_bytes(mut self, limit: usize) -> Self {
        self.config.transport.max_reply_bytes = limit;
        self
    }

    /// The most bytes read of an error body (default [`DEFAULT_MAX_ERROR_BYTES`]); the
    /// [`Error::Provider`] of a longer one says so and quotes its start.
    pub fn max_error_bytes(mut self, limit: usize) -> Self {
        self.config.transport.max_error_bytes = limit;
        self
    }

    /// Cancelling `token` aborts the request in flight (or the wait before a retry) with
    /// [`Error::Cancelled`]; it is not retried.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.config.transport.cancel = Some(token);
        self
    }

    /// Finishes the provider.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a base URL that is not an `http(s)` URL, no key for an endpoint
    /// that needs one (`api.openai.com`, `openrouter.ai`, `api.anthropic.com`), an unset
    /// [`key_from_env_var`](Self::key_from_env_var), an invalid extra header, a key that
    /// cannot be a header value, or a TLS setup that fails (no usable root certificates).
    pub fn build(self) -> Result<HttpProvider, Error> {
        self.build_with_env(|name| std::env::var(name).ok())
    }
}
