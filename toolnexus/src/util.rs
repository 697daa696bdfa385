//! Small helpers shared across the crate: the boxed future every trait of it returns, two
//! that word failures (the kind of a JSON value, the text of a panic), lowercase hex (the
//! digests, MACs and tokens of sealed records and the inbox), and the doubling wait between
//! the retries of the worker and of the notifications' deliverer.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

/// A boxed, `Send` future, the return type of [`Tool::execute`](crate::Tool::execute) (and of
/// every other trait method of the crate that does asynchronous work).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// What a JSON value is, as an error message names it (`a string`, `an array`, ...).
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Lowercase hex back to bytes (`None` for anything else: odd length, another character).
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The wait after `failures` failed attempts (1 or more): `first`, doubled per earlier
/// failure, at most `ceiling`.
pub(crate) fn doubling_delay(first: Duration, failures: u32, ceiling: Duration) -> Duration {
    let doubled = first.saturating_mul(1u32.checked_shl(failures - 1).unwrap_or(u32::MAX));
    doubled.min(ceiling)
}

/// Writes the names an enum is stored (or sent) under once: `as_str` and `parse` are made
/// from one list, so a name cannot be added to one and forgotten in the other (`as_str`
/// does not compile without every variant). Each function keeps its own doc and visibility.
///
/// ```ignore
/// names! {
///     Scope { Args => "args", Tool => "tool" }
///     /// The wire name: `args` or `tool`.
///     pub fn as_str;
///     pub(crate) fn parse;
/// }
/// ```
macro_rules! names {
    (
        $ty:ident { $($variant:ident => $name:literal),+ $(,)? }
        $(#[$as_attr:meta])* $as_vis:vis fn as_str;
        $(#[$parse_attr:meta])* $parse_vis:vis fn parse;
    ) => {
        impl $ty {
            $(#[$as_attr])*
            $as_vis fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }

            $(#[$parse_attr])*
            $parse_vis fn parse(s: &str) -> Option<Self> {
                match s {
                    $($name => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use names;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{doubling_delay, hex, unhex};

    #[test]
    fn doubling_delays_double_per_failure_up_to_the_ceiling() {
        let s = Duration::from_secs;
        let ceiling = s(600);
        assert_eq!(doubling_delay(s(1), 1, ceiling), s(1));
        assert_eq!(doubling_delay(s(1), 2, ceiling), s(2));
        assert_eq!(doubling_delay(s(1), 3, ceiling), s(4));
        assert_eq!(doubling_delay(s(1), 4, ceiling), s(8));
        assert_eq!(doubling_delay(s(1), 40, ceiling), ceiling);
        assert_eq!(doubling_delay(s(100), 5, ceiling), ceiling);
        assert_eq!(doubling_delay(s(100), 5, Duration::MAX), s(1600));
    }

    #[test]
    fn hex_round_trips_and_refuses_what_it_does_not_write() {
        assert_eq!(hex(&[0x00, 0x7f, 0xab, 0xff]), "007fabff");
        assert_eq!(unhex("007fabff"), Some(vec![0x00, 0x7f, 0xab, 0xff]));
        assert_eq!(unhex(""), Some(vec![]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("AB"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("é1"), None);
    }
}
