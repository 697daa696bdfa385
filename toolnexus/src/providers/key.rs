//! [`ApiKey`]: a secret that never shows itself.

use std::fmt;

/// An API key. Its `Debug` and `Display` print `[redacted]`; only the HTTP header that carries
/// it sees the key itself.
///
/// ```
/// use toolnexus::ApiKey;
///
/// let key = ApiKey::new("sk-secret");
/// assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
/// assert_eq!(key.to_string(), "[redacted]");
/// assert_eq!(key.expose(), "sk-secret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]` (for provider error
    /// messages that echo the key back).
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "[redacted]")
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self(key.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::ApiKey;

    #[test]
    fn redacts_every_occurrence() {
        let key = ApiKey::new("sk-123");
        assert_eq!(
            key.redact("bad key sk-123 (sk-123)"),
            "bad key [redacted] ([redacted])"
        );
        assert_eq!(ApiKey::new("").redact("text"), "text");
    }
}
