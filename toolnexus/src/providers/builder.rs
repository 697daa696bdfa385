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
use super::key::ApiKey;
use super::transport::{Transport, TransportOptions};
use super::{
    DEFAULT_BACKOFF_BASE, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER, DEFAULT_MAX_TOKENS,
    HttpProvider, Inner, ProviderStyle, RequestOptions,
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

    /// The API key. Without one, the key comes from the environment: `ANTHROPIC_API_KEY` for
    /// the Anthropic style; for the OpenAI style `OPENROUTER_API_KEY` when the base URL's host
    /// is `openrouter.ai`, else `OPENAI_API_KEY`. With no key at all no auth header is sent
    /// (a local Ollama needs none).
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.config.key = Some(key.into());
        self
    }

    /// Whether to read the key from the environment when none is given (default `true`).
    /// Turn it off for a local server that must not receive your cloud key.
    pub fn key_from_env(mut self, enabled: bool) -> Self {
        self.config.key_from_env = enabled;
        self
    }

    /// An extra header on every request (OpenRouter's `HTTP-Referer` and `X-Title`, a
    /// gateway's routing header, ...). Its value is treated as sensitive and never shown.
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

    /// Retries after the first attempt on 429/500/502/503/504 and network errors (default
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
    /// [`Error::Config`] for a base URL that is not an `http(s)` URL, an invalid extra header,
    /// a key that cannot be a header value, or a TLS setup that fails (no usable root
    /// certificates).
    pub fn build(self) -> Result<HttpProvider, Error> {
        self.build_with_env(|name| std::env::var(name).ok())
    }

    fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<HttpProvider, Error> {
        let Config {
            style,
            base_url,
            key,
            key_from_env,
            headers: extra,
            mut request,
            transport,
        } = self.config;
        let dialect = style.dialect();
        let endpoint = endpoint(dialect, &base_url)?;
        let key = match key {
            Some(key) => Some(key),
            None if key_from_env => env(dialect.key_env(&endpoint))
                .filter(|k| !k.trim().is_empty())
                .map(ApiKey::new),
            None => None,
        };
        let headers = headers(dialect, key.as_ref(), &extra)?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
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
        assert!(!format!("{:?}", p.inner.transport.headers).contains("secret"));
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
