//! [`ApiKey`], a secret that never shows itself, and [`Secrets`], the one redaction applied to
//! every text that leaves a provider (errors streamed or not, logs, tracing fields).

use std::fmt;

use crate::error::Error;

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

/// What replaces a secret in any text.
pub(crate) const REDACTED: &str = "[redacted]";

/// The longest provider text (an error message, an error body) kept in an [`Error`]; a longer
/// one keeps its first bytes and says how long it was.
pub(crate) const MAX_QUOTED: usize = 500;

/// The shortest secret searched for in texts: a shorter one (a test key `k`, a header value
/// `1`) would match ordinary words, and is still never shown by `Debug`.
pub(crate) const MIN_SECRET: usize = 8;

/// The secrets of one provider: its key and the values of its extra headers. [`Secrets::clean`]
/// is the one function every text that leaves the provider goes through.
#[derive(Default)]
pub(crate) struct Secrets {
    /// Longest first, so a secret that contains another is replaced whole.
    values: Vec<String>,
}

impl Secrets {
    /// The secrets among `values` (those shorter than [`MIN_SECRET`] are skipped).
    pub(crate) fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.len() >= MIN_SECRET)
            .map(str::to_owned)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Self { values }
    }

    /// Whether `text` shows any secret.
    pub(crate) fn shows_in(&self, text: &str) -> bool {
        self.values.iter().any(|s| text.contains(s.as_str()))
    }

    /// `text` with every secret replaced by `[redacted]`, then cut to [`MAX_QUOTED`] bytes
    /// (redacted first, so no part of a secret survives at the cut). A cut text keeps its
    /// first bytes and ends `... (N bytes in all)`.
    pub(crate) fn clean(&self, text: &str) -> String {
        quote(&self.redact(text))
    }

    /// `text`, the start of a longer text, with every secret replaced, and a trailing piece
    /// that begins a secret too (not cut: [`Secrets::clean`] does that later).
    pub(crate) fn clean_tail(&self, text: &str) -> String {
        let mut out = self.redact(text);
        self.redact_tail(&mut out);
        out
    }

    fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.values {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// Replaces a trailing piece of `text` that is the start of a secret (a text cut in the
    /// middle of a key).
    fn redact_tail(&self, text: &mut String) {
        let longest = self
            .values
            .iter()
            .filter_map(|secret| {
                (1..secret.len())
                    .rev()
                    .filter(|&n| secret.is_char_boundary(n))
                    .find(|&n| text.ends_with(&secret[..n]))
            })
            .max();
        if let Some(n) = longest {
            text.truncate(text.len() - n);
            text.push_str(REDACTED);
        }
    }

    /// `error` with every secret gone from its message (and its source, which is folded into
    /// the message when it shows one), every message cut as [`Secrets::clean`] does.
    pub(crate) fn scrub(&self, error: Error) -> Error {
        match error {
            Error::Provider { status, message } => Error::Provider {
                status,
                message: self.clean(&message),
            },
            Error::Transport { message, source } => {
                let chain = source.as_deref().map(|e| error_chain(e));
                match chain {
                    Some(chain) if self.shows_in(&chain) => Error::Transport {
                        message: self.clean(&format!("{message}: {chain}")),
                        source: None,
                    },
                    _ => Error::Transport {
                        message: self.clean(&message),
                        source,
                    },
                }
            }
            other => other,
        }
    }
}

/// `text` as an error quotes it: whole up to [`MAX_QUOTED`] bytes, else its first bytes (cut
/// at a character boundary) and `... (N bytes in all)`.
pub(crate) fn quote(text: &str) -> String {
    if text.len() <= MAX_QUOTED {
        return text.to_owned();
    }
    let mut end = MAX_QUOTED;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &text[..end], text.len())
}

/// An error and its sources, `: `-separated.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_every_occurrence_of_every_secret() {
        let secrets = Secrets::new(["sk-12345", "gw-token-1", "", "k"]);
        assert_eq!(
            secrets.clean("bad key sk-12345 (sk-12345) via gw-token-1, k kept"),
            "bad key [redacted] ([redacted]) via [redacted], k kept"
        );
        assert_eq!(Secrets::new([""]).clean("text"), "text");
        // the longer secret goes first, whole
        let nested = Secrets::new(["abcdefgh", "abcdefghijkl"]);
        assert_eq!(
            nested.clean("x abcdefghijkl y abcdefgh"),
            "x [redacted] y [redacted]"
        );
    }

    #[test]
    fn redacts_before_cutting() {
        let key = "sk-abcdefghijklmnopqrstuvwxyz";
        let secrets = Secrets::new([key]);
        // the key straddles byte 500: redacted first, nothing of it survives the cut
        let text = format!("{}{key}{}", "x".repeat(490), "y".repeat(100));
        let cleaned = secrets.clean(&text);
        assert!(!cleaned.contains("sk-"), "{cleaned}");
        // 490 + 10 + 100 bytes once redacted, cut to the first 500
        assert_eq!(
            cleaned,
            format!("{}[redacted]... (600 bytes in all)", "x".repeat(490))
        );
    }

    #[test]
    fn a_text_cut_inside_a_secret_loses_the_piece() {
        let secrets = Secrets::new(["sk-abcdef"]);
        assert_eq!(
            secrets.clean_tail("error: sk-abcdef!"),
            "error: [redacted]!"
        );
        assert_eq!(secrets.clean_tail("error: sk-abc"), "error: [redacted]");
        assert_eq!(secrets.clean_tail("error: s"), "error: [redacted]");
        assert_eq!(secrets.clean_tail("error: x"), "error: x");
        assert_eq!(secrets.clean("error: sk-abc"), "error: sk-abc");
    }

    #[test]
    fn long_texts_are_quoted_with_their_length() {
        let long = "é".repeat(400);
        assert_eq!(
            quote(&long),
            format!("{}... (800 bytes in all)", "é".repeat(250))
        );
        assert_eq!(quote("short"), "short");
    }

    #[test]
    fn scrubbing_an_error_reaches_its_source() {
        let secrets = Secrets::new(["sk-12345"]);
        let source: Box<dyn std::error::Error + Send + Sync> = "parser saw sk-12345".into();
        let err = secrets.scrub(Error::Transport {
            message: "broken".to_owned(),
            source: Some(source),
        });
        assert_eq!(
            err.to_string(),
            "transport error: broken: parser saw [redacted]"
        );
        let err = secrets.scrub(Error::Provider {
            status: 401,
            message: "bad key sk-12345".to_owned(),
        });
        assert_eq!(
            err.to_string(),
            "provider returned HTTP 401: bad key [redacted]"
        );
    }
}
