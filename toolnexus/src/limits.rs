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
    children(value) && deeper_than_max(value, 1)
}

/// Whether `value`, itself at `depth`, reaches past [`MAX_DEPTH`]: a walk with a stack of its
/// own, so it cannot overflow the thread's.
fn deeper_than_max(value: &Value, depth: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, depth)];
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

/// [`too_deep`] for an arguments object.
#[inline]
pub(crate) fn too_deep_map(map: &serde_json::Map<String, Value>) -> bool {
    // the common flat call answers without building a value or allocating
    map.values().any(|v| v.is_array() || v.is_object()) && nested_too_deep(map)
}

#[cold]
fn nested_too_deep(map: &serde_json::Map<String, Value>) -> bool {
    // the map itself is level 1
    map.values().any(|v| deeper_than_max(v, 2))
}

/// The error text for a value deeper than [`MAX_DEPTH`]; `what` says what nests
/// (`the arguments nest`).
pub(crate) fn too_deep_message(what_nests: &str) -> String {
    format!("{what_nests} deeper than {MAX_DEPTH} levels")
}

/// `s` whole when it is short, else its first [`QUOTE_CHARS`] characters followed by
/// `… (<n> bytes)`, so an error text stays small whatever it quotes.
pub(crate) fn excerpt(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes)", &s[..cut], s.len())),
    }
}

/// An error text with every quoted run (between `"` or `` ` ``) longer than [`QUOTE_CHARS`]
/// cut to its prefix, followed by its length, and the whole text cut to 1024 characters: what
/// serde says about a 50 MB string becomes a few hundred bytes.
pub(crate) fn shorten(message: String) -> String {
    const WHOLE: usize = 1024;
    if message.len() <= QUOTE_CHARS {
        return message;
    }
    let mut out = String::new();
    let mut rest = message.as_str();
    while let Some(open) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[open];
        out.push_str(&rest[..=open]);
        let body = &rest[open + 1..];
        let end = closing(body, quote).unwrap_or(body.len());
        let inner = &body[..end];
        match inner.char_indices().nth(QUOTE_CHARS) {
            None => out.push_str(inner),
            Some((cut, _)) => out.push_str(&inner[..cut]),
        }
        let cut = inner.char_indices().nth(QUOTE_CHARS).is_some();
        if cut {
            out.push('…');
        }
        if end < body.len() {
            out.push(quote as char);
        }
        if cut {
            out.push_str(" (");
            out.push_str(&inner.len().to_string());
            out.push_str(" bytes)");
        }
        rest = body.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    match out.char_indices().nth(WHOLE) {
        None => out,
        Some((cut, _)) => format!("{}… ({} bytes)", &out[..cut], out.len()),
    }
}

/// Where a quoted run that began just before `body` ends (a `\"` inside `"..."` is escaped).
fn closing(body: &str, quote: u8) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
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
    fn long_quotes_are_cut_and_measured() {
        let big = "x".repeat(10_000);
        let msg = format!("invalid type: string \"{big}\", expected u8");
        assert_eq!(
            shorten(msg),
            format!(
                "invalid type: string \"{}…\" (10000 bytes), expected u8",
                "x".repeat(64)
            )
        );
        let msg = format!("unknown field `{big}`, expected `a` or `b`");
        assert_eq!(
            shorten(msg),
            format!(
                "unknown field `{}…` (10000 bytes), expected `a` or `b`",
                "x".repeat(64)
            )
        );
        let escaped = format!("string \"a\\\"b{}\" ok", "y".repeat(70));
        assert!(shorten(escaped).ends_with("…\" (74 bytes) ok"));
        let short =
            "invalid type: string \"abc\", expected u8 and more words to pass 64".to_owned();
        assert_eq!(shorten(short.clone()), short);
    }

    #[test]
    fn excerpts_cut_at_a_character_and_say_the_length() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(100);
        let quoted = excerpt(&long);
        assert_eq!(quoted, format!("{}… (200 bytes)", "é".repeat(64)));
    }
}
