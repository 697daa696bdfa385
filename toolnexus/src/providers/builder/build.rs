//! `build`'s checks: the options become a provider, or a clear [`Error::Config`].

use std::sync::Arc;

use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

use super::{Config, HttpProviderBuilder};
use crate::error::Error;
use crate::providers::dialect::Dialect;
use crate::providers::key::{ApiKey, Secrets};
use crate::providers::transport::Transport;
use crate::providers::{HttpProvider, Inner};

impl HttpProviderBuilder {
    /// `build` with `env` for the environment (tests give their own).
    pub(super) fn build_with_env(
        self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<HttpProvider, Error> {
        let Config {
            style,
            base_url,
            key,
            headers: extra,
            mut request,
            transport,
        } = self.config;
        let dialect = style.dialect();
        let endpoint = endpoint(dialect, &base_url)?;
        let key = key.resolve(dialect, &endpoint, env)?;
        let headers = headers(dialect, key.as_ref(), &extra)?;
        let secrets = Secrets::new(
            key.iter()
                .map(ApiKey::expose)
                .chain(extra.iter().map(|(_, v)| v.as_str())),
        );
        let mut http = reqwest::Client::builder().tls_backend_preconfigured(http1_tls()?);
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

/// TLS for the providers: [`tls_config`](crate::providers::tls_config), HTTP/1.1 only.
fn http1_tls() -> Result<rustls::ClientConfig, Error> {
    let mut config = crate::providers::tls_config().map_err(Error::Config)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderStyle;

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
