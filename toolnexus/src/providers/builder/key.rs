//! Which key a provider sends: the one given, the one in a named variable, or the known
//! host's own variable (only for that host, over `https`).

use reqwest::Url;

use crate::error::Error;
use crate::providers::dialect::Dialect;
use crate::providers::key::ApiKey;

/// The key options as given to the builder.
pub(super) struct KeySource {
    /// [`api_key`](super::HttpProviderBuilder::api_key): wins over the rest.
    pub(super) given: Option<ApiKey>,
    /// [`key_from_env`](super::HttpProviderBuilder::key_from_env).
    pub(super) from_env: bool,
    /// [`key_from_env_var`](super::HttpProviderBuilder::key_from_env_var).
    pub(super) env_var: Option<String>,
}

impl KeySource {
    /// The key for `endpoint`, reading variables through `env`; none for an endpoint that
    /// needs no key.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an unset or blank named variable, or no key for a host that
    /// needs one.
    pub(super) fn resolve(
        self,
        dialect: &dyn Dialect,
        endpoint: &Url,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ApiKey>, Error> {
        let from_env = |name: &str| env(name).filter(|k| !k.trim().is_empty()).map(ApiKey::new);
        let key = match (self.given, self.env_var) {
            (Some(key), _) => Some(key),
            (None, Some(name)) => Some(from_env(&name).ok_or_else(|| {
                Error::Config(format!(
                    "the environment variable `{name}` named by `key_from_env_var` is not set"
                ))
            })?),
            (None, None) if self.from_env => dialect.key_env(endpoint).and_then(from_env),
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
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use crate::providers::HttpProvider;
    use crate::providers::builder::HttpProviderBuilder;

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
}
