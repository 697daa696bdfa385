//! The bounds every value a host hands in is held to: one nesting depth ([`MAX_DEPTH`]), and
//! short quotes of long values in the error texts a model reads.

use std::borrow::Cow;

use serde_json::Value;

/// How deeply a JSON value taken from a host may nest (arrays and objects), the same cap
/// `serde_json` puts on provider JSON it parses. Tool arguments, answer data, request data and
/// schemas deeper than this are refused with an error instead of overflowing the stack.
pub const MAX_DEPTH: usize = 128;

/// At most this many characters of a value are quoted in an error text.
pub(crate) const QUOTE_CHARS: usize = 64;

/// Whether `value` nests deeper than [`MAX_DEPTH`]. Iterative, so it cannot itself overflow.
pub(crate) fn too_deep(value: &Value) -> bool {
    // a flat value (the common case) is answered without allocating
    let children = |v: &Value| match v {
        Value::Array(a) => a.iter().any(|c| c.is_array() || c.is_object()),
        Value::Object(o) => o.values().any(|c| c.is_array() || c.is_object()),
        _ => false,
    };
    if !children(value) {
        return false;
    }
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return true;
        }
        match v {
            Value::Array(a) => stack.extend(containers(a.iter(), depth)),
            Value::Object(o) => stack.extend(containers(o.values(), depth)),
            _ => {}
        }
    }
    false
}

fn containers<'a>(
    children: impl Iterator<Item = &'a Value>,
    depth: usize,
) -> impl Iterator<Item = (&'a Value, usize)> {
    children
        .filter(|c| c.is_array() || c.is_object())
        .map(move |c| (c, depth + 1))
}

/// The error text for a value deeper than [`MAX_DEPTH`].
pub(crate) fn too_deep_message(what: &str) -> String {
    format!("{what} nests deeper than {MAX_DEPTH} levels")
}

/// `s` whole when it is short, else its first [`QUOTE_CHARS`] characters followed by
/// `… (<n> bytes)`, so an error text stays small whatever it quotes.
pub(crate) fn excerpt(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes)", &s[..cut], s.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        let mut v = Value::Null;
        for _ in 0..levels {
            v = Value::Array(vec![v]);
        }
        v
    }

    #[test]
    fn depth_is_counted_in_containers() {
        assert!(!too_deep(&nested(MAX_DEPTH)));
        assert!(too_deep(&nested(MAX_DEPTH + 1)));
        assert!(!too_deep(&serde_json::json!({"a": 1})));
    }

    #[test]
    fn excerpts_cut_at_a_character_and_say_the_length() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(100);
        let quoted = excerpt(&long);
        assert_eq!(quoted, format!("{}… (200 bytes)", "é".repeat(64)));
    }
}
