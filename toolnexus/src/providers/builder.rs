//! [`HttpProviderBuilder`]: every option of an [`HttpProvider`], held in one private
//! [`Config`] that `build` resolves (the endpoint, the key, the headers, the TLS setup).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::dialect::Dialect;
use super::key::{ApiKey, Secrets};
use super::transport::{Transport, TransportOptions};
use super::{
    DEFAULT_BACKOFF_BASE, DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_ERROR_BYTES, DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_AFTER, DEFAULT_MAX_TOKENS, HttpProvider, Inner, ProviderStyle,
    RequestOptions,
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
    key: Option<ApiKey>,
    key_from_env: bool,
    key_env_var: Option<String>,
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
            .field("api_key", &c.key)
            .finish_non_exhaustive()
    }
}

impl HttpProviderBuilder {
    pub(super) fn new(style: ProviderStyle, base_url: String) -> Self {
        Self {
            config: Config {
                style,
                base_url,
                key: None,
                key_from_env: true,
                key_env_var: None,
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
        self.config.key = Some(key.into());
        self
    }

    /// Whether to read the key of a known host from its environment variable when none is
    /// given (default `true`; see [`api_key`](Self::api_key)).
    pub fn key_from_env(mut self, enabled: bool) -> Self {
        self.config.key_from_env = enabled;
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
        self.config.key_env_var = Some(name.into());
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

    fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<HttpProvider, Error> {
        let Config {
            style,
            base_url,
            key,
            key_from_env,
            key_env_var,
            headers: extra,
            mut request,
            transport,
        } = self.config;
        let dialect = style.dialect();
        let endpoint = endpoint(dialect, &base_url)?;
        let from_env = |name: &str| env(name).filter(|k| !k.trim().is_empty()).map(ApiKey::new);
        let key = match (key, key_env_var) {
            (Some(key), _) => Some(key),
            (None, Some(name)) => Some(from_env(&name).ok_or_else(|| {
                Error::Config(format!(
                    "the environment variable `{name}` named by `key_from_env_var` is not set"
                ))
            })?),
            (None, None) if key_from_env => dialect.key_env(&endpoint).and_then(from_env),
            (None, None) => None,
        };
        if key.is_none()
            && let Some(host) = endpoint.host_str()
            && let Some((_, var)) = dialect.home_keys().iter().find(|(home, _)| *home == host)
        {
            return Err(Error::Config(format!(
                "no API key for {host}: set {var} or give one with `.api_key(..)`"
            )));
        }
        let headers = headers(dialect, key.as_ref(), &extra)?;
        let secrets = Secrets::new(
            key.iter()
                .map(ApiKey::expose)
                .chain(extra.iter().map(|(_, v)| v.as_str())),
        );
        let mut http = reqwest::Client::builder().tls_backend_preconfigured(tls_config()?);
        if let Some(limit) = transport.connect_timeout {
            http = http.connect_timeout(limit);
        }
        let http = http
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        request.model = request.model.filter(|m| !m.is_empty());
        Ok(HttpProvider {
            inner: Arc::new(Inner {
                style,
                request,
                transport: Transport {
                    http,
                    endpoint,
                    key,
                    secrets,
                    headers,
                    options: transport,
                },
            }),
        })
    }
}

/// The dialect's endpoint under `base_url`, which must be an `http(s)` URL.
fn endpoint(dialect: &dyn Dialect, base_url: &str) -> Result<Url, Error> {
    let base = base_url.trim().trim_end_matches('/');
    let url = dialect.endpoint(base);
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

fn headers(
    dialect: &dyn Dialect,
    key: Option<&ApiKey>,
    extra: &[(String, String)],
) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    map.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("toolnexus/", env!("CARGO_PKG_VERSION"))),
    );
    if let Some(key) = key {
        let (name, value) = dialect.auth_header(key.expose());
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            Error::Config(
                "the API key cannot be sent in an HTTP header: it has characters outside visible ASCII"
                    .to_owned(),
            )
        })?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    for (name, value) in dialect.fixed_headers() {
        map.insert(name, value);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::HttpProvider;

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
        p.inner
            .transport
            .key
            .as_ref()
            .map(|k| k.expose().to_owned())
    }

    #[test]
    fn endpoints_per_style() {
        let ep = |style: ProviderStyle, base| endpoint(style.dialect(), base).unwrap().to_string();
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
        let err = endpoint(ProviderStyle::OpenAi.dialect(), "localhost:11434").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid provider base URL `localhost:11434`: the scheme must be http or https"
        );
        let err = endpoint(ProviderStyle::OpenAi.dialect(), "not a url").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid provider base URL `not a url`: relative URL without a base; give one like `https://api.openai.com/v1`"
        );
    }

    fn build_err(
        builder: HttpProviderBuilder,
        vars: &'static [(&'static str, &'static str)],
    ) -> String {
        builder.build_with_env(env(vars)).unwrap_err().to_string()
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
                HttpProvider::openai("http://127.0.0.1:1/v1")
                    .key_from_env_var("MY_KEY")
                    .api_key("given"),
                &[("MY_KEY", "sk-mine")]
            )
            .as_deref(),
            Some("given")
        );
        assert_eq!(
            key_of(
                HttpProvider::openai("https://gateway.example/v1").key_from_env_var("MY_KEY"),
                &[("MY_KEY", "sk-mine")]
            )
            .as_deref(),
            Some("sk-mine")
        );
    }

    #[test]
    fn an_environment_key_goes_only_to_its_own_host_over_https() {
        // a local server, a third-party host, a look-alike host, plain http to the right
        // host, the other style's host: none of them gets a key from the environment
        for base in [
            "http://127.0.0.1:11434/v1",
            "https://gateway.example/v1",
            "https://api.openai.com.evil.example/v1",
            "https://openrouter.ai.evil.example/api/v1",
            "https://api.anthropic.com/v1",
        ] {
            assert_eq!(key_of(HttpProvider::openai(base), ALL_KEYS), None, "{base}");
        }
        for base in ["http://127.0.0.1:9", "https://api.openai.com"] {
            assert_eq!(
                key_of(HttpProvider::anthropic(base), ALL_KEYS),
                None,
                "{base}"
            );
        }
        assert_eq!(
            build_err(HttpProvider::openai("http://api.openai.com/v1"), ALL_KEYS),
            "no API key for api.openai.com: set OPENAI_API_KEY or give one with `.api_key(..)`"
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
    }

    #[test]
    fn an_endpoint_that_needs_a_key_fails_at_build_without_one() {
        assert_eq!(
            build_err(HttpProvider::openai("https://api.openai.com/v1"), &[]),
            "no API key for api.openai.com: set OPENAI_API_KEY or give one with `.api_key(..)`"
        );
        assert_eq!(
            build_err(
                HttpProvider::openai("https://openrouter.ai/api/v1"),
                &[("OPENROUTER_API_KEY", "  ")]
            ),
            "no API key for openrouter.ai: set OPENROUTER_API_KEY or give one with `.api_key(..)`"
        );
        assert_eq!(
            build_err(
                HttpProvider::anthropic("https://api.anthropic.com").key_from_env(false),
                ALL_KEYS
            ),
            "no API key for api.anthropic.com: set ANTHROPIC_API_KEY or give one with `.api_key(..)`"
        );
        assert_eq!(
            build_err(
                HttpProvider::openai("http://127.0.0.1:1/v1").key_from_env_var("MY_KEY"),
                &[("MY_KEY", "")]
            ),
            "the environment variable `MY_KEY` named by `key_from_env_var` is not set"
        );
        // a local server needs no key
        assert!(
            HttpProvider::openai("http://127.0.0.1:11434/v1")
                .build_with_env(env(&[]))
                .is_ok()
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
             max_tokens: 4096, max_retries: 2, backoff_base: 500ms, timeout: None, \
             connect_timeout: Some(10s), first_byte_timeout: Some(300s), idle_timeout: Some(120s), .. }"
        );
        let builder = format!(
            "{:?}",
            HttpProvider::openai("http://h").api_key("sk-very-secret")
        );
        assert!(!builder.contains("sk-very-secret"), "{builder}");
        assert!(!format!("{:?}", p.inner.transport.headers).contains("secret"));
    }

    #[test]
    fn a_key_in_the_base_url_is_redacted_from_debug() {
        let p = HttpProvider::openai("http://127.0.0.1:9/v1?key=sk-in-the-url-123")
            .api_key("sk-in-the-url-123")
            .build()
            .unwrap();
        let debug = format!("{p:?}");
        assert!(!debug.contains("sk-in-the-url"), "{debug}");
        assert!(
            debug.contains("endpoint: \"http://127.0.0.1:9/v1?key=[redacted]/chat/completions\""),
            "{debug}"
        );
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
