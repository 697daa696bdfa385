//! The bounds every value a host hands in is held to: one nesting depth ([`MAX_DEPTH`]), with
//! the one walker that measures it (over values, and over JSON text before it is parsed), and
//! short quotes of long values in the error texts a model reads.

use std::borrow::Cow;

use serde_json::Value;

/// How deeply a JSON value may nest (arrays and objects; `{}` is one level): 128, the one
/// depth bound of the crate.
///
/// It is the recursion limit of serde_json, the parser the HTTP providers read replies with
/// (which admits 127 levels in a whole reply), so no provider reply carries deeper arguments.
/// Tool arguments, answer data, request data and schemas deeper than this are refused with an
/// error instead of overflowing the stack: the loop refuses deeper arguments from any model,
/// in-process ones included (the model reads `invalid arguments for <tool>: nested more than
/// 128 levels deep`). A [`PendingRun`](crate::PendingRun) holds values nested up to this
/// bound: a record holding a deeper value (a tool's metadata, say) is refused when it is made
/// (`PendingRun::try_from`) rather than written and lost, and
/// [`PendingRun::from_json`](crate::PendingRun::from_json) reads every record the loop can
/// make, however deep, up to it.
pub const MAX_DEPTH: usize = 128;

/// The most content parts ([`ToolResult::parts`](crate::ToolResult::parts)) one tool result
/// may carry: 100. A result with more becomes a failure the model reads, before anything
/// copies it into the transcript or a provider request.
pub const MAX_RESULT_PARTS: usize = 100;

/// The most bytes the content parts of one tool result may carry in all (their `data`, `url`
/// and `mimeType` text): 32 MiB. A result with more becomes a failure the model reads.
pub const MAX_RESULT_PART_BYTES: usize = 32 << 20;

/// The most bytes an answer's `data` may serialize to when a run store records it
/// ([`RunStore::claim`](crate::store::RunStore::claim), [`RunStore::submit`](crate::store::RunStore::submit),
/// and so [`Client::answer`](crate::Client::answer)): 1 MiB. A larger answer (or one nested
/// deeper than [`MAX_DEPTH`]) is refused with [`StoreError::Invalid`](crate::store::StoreError::Invalid)
/// and the run stays as it was. (The answer page's own cap on a request body is 64 KiB.)
pub const MAX_ANSWER_DATA_BYTES: usize = 1 << 20;

/// The most bytes a name a host hands in may take: 256. It bounds who answered
/// ([`RunStore::submit`](crate::store::RunStore::submit)'s `answered_by`, and so the answer
/// page's `InboxBuilder::answered_by`), who a run is for
/// ([`Client::for_principal`](crate::Client::for_principal)) and the agent's name
/// ([`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name)): each is kept in every
/// record, history event or rule it names, so none grows a run by more than this. A longer
/// one is refused at its door with a clear error (the answer is not recorded, the client is
/// not built, the run does not start), never cut.
pub const MAX_NAME_BYTES: usize = 256;

/// The most bytes a conversation id may take: 256 (a UUID, a chat's thread key, a
/// `tenant:channel:thread` path). [`Client::ask`](crate::Client::ask) refuses a longer one
/// before anything is loaded or runs.
pub const MAX_CONVERSATION_ID_BYTES: usize = 256;

/// `value` (what a host calls `what`) when it takes at most `max` bytes (`constant` names the
/// bound), else the message that says it is too long.
pub(crate) fn check_len(what: &str, value: &str, max: usize, constant: &str) -> Result<(), String> {
    if value.len() <= max {
        return Ok(());
    }
    Err(format!(
        "{what} is {} bytes, more than the {max} allowed (`toolnexus::limits::{constant}`)",
        value.len()
    ))
}

/// [`check_len`] against [`MAX_NAME_BYTES`].
pub(crate) fn check_name(what: &str, value: &str) -> Result<(), String> {
    check_len(what, value, MAX_NAME_BYTES, "MAX_NAME_BYTES")
}

/// Reads JSON text into `T` as toolnexus reads its own records: every number exactly (the
/// nearest `f64`, as `str::parse` gives it), nesting up to [`MAX_DEPTH`] levels inside a few
/// levels of wrapping (a [`Request`](crate::Request)'s `data` as deep as the loop accepts reads
/// back), without recursion.
///
/// `serde_json::from_str` reads floats on a fast path that may land one unit off, unless its
/// `float_roundtrip` feature is on; toolnexus turns none of serde_json's features on (cargo
/// unifies features, so that would change `serde_json` in every crate of your build). Use this
/// where a value must read back exactly as it was written: a request or answer from another
/// port, a result you compare byte for byte.
///
/// ```
/// use toolnexus::Request;
///
/// let text = r#"{"id":"r1","kind":"input","prompt":"p","data":{"x":29999999999999999999999995}}"#;
/// let request: Request = toolnexus::limits::from_json_str(text).unwrap();
/// assert_eq!(
///     serde_json::to_string(&request).unwrap(),
///     r#"{"id":"r1","kind":"input","prompt":"p","data":{"x":3e+25}}"#
/// );
/// assert!(toolnexus::limits::from_json_str::<Request>("{").is_err());
/// ```
///
/// # Errors
///
/// The text is not JSON (serde_json's message where it has one), nests deeper than that, or
/// does not describe a `T`.
pub fn from_json_str<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    use serde::de::Error as _;
    let value =
        crate::json_text::parse_or_explain(text, TEXT_DEPTH).map_err(serde_json::Error::custom)?;
    T::deserialize(value)
}

/// The nesting [`from_json_str`] reads: a value at [`MAX_DEPTH`] inside a record's levels.
const TEXT_DEPTH: usize = MAX_DEPTH + 8;

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
    children(value) && depth(value, MAX_DEPTH) > MAX_DEPTH
}

/// Drops `value` without recursion. A value nested thousands of levels deep (which a host's
/// in-process model or hook can hand in) would overflow the stack if dropped the usual way,
/// level by level: this takes it apart from the top.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => stack.extend(std::mem::take(map).into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// [`too_deep`] for an arguments object.
#[inline]
pub(crate) fn too_deep_map(map: &serde_json::Map<String, Value>) -> bool {
    // the common flat call answers without building a value or allocating
    map.values().any(|v| v.is_array() || v.is_object()) && nested_too_deep(map)
}

#[cold]
fn nested_too_deep(map: &serde_json::Map<String, Value>) -> bool {
    // the map itself is level 1: its values may nest one level less
    map.values()
        .any(|v| depth(v, MAX_DEPTH - 1) > MAX_DEPTH - 1)
}

/// The nesting depth of `value` (`{}` and `[]` are 1, a scalar 0), walked with a stack of its
/// own (it cannot overflow the thread's): the one walker of the crate. The walk stops once it
/// passes `cap` (the result is then more than `cap`, not the whole depth).
pub(crate) fn depth(value: &Value, cap: usize) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, level)) = stack.pop() {
        let containers = |c: &&Value| c.is_array() || c.is_object();
        match v {
            Value::Array(a) => stack.extend(a.iter().filter(containers).map(|c| (c, level + 1))),
            Value::Object(o) => {
                stack.extend(o.values().filter(containers).map(|c| (c, level + 1)));
            }
            _ => continue,
        }
        deepest = deepest.max(level);
        if deepest > cap {
            break;
        }
    }
    deepest
}

/// Where JSON text first nests deeper than `limit` (a byte offset), if it does; one scan,
/// no recursion, strings skipped: the bound checked before anything parses the text.
pub(crate) fn deeper_than(json: &str, limit: usize) -> Option<usize> {
    TextShape::scan(json, limit).past
}

/// The deepest nesting serde_json's own parser reads (its recursion limit admits 127 levels;
/// a margin below it).
const SERDE_JSON_DEPTH: usize = 120;

/// How JSON text nests and what numbers it holds: one scan, no recursion, strings skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextShape {
    /// The deepest nesting (`{}` and `[]` are one level).
    pub(crate) depth: usize,
    /// Whether every number is an integer serde_json reads exactly: no fraction, no exponent,
    /// at most 18 digits (so it fits an `i64` or `u64`).
    pub(crate) integers_only: bool,
    /// Where the text first nests deeper than the limit [`scan`](Self::scan) was given (a
    /// byte offset), if it does.
    pub(crate) past: Option<usize>,
}

impl TextShape {
    /// The shape of `json`.
    pub(crate) fn of(json: &str) -> Self {
        Self::scan(json, usize::MAX)
    }

    /// The shape of `json`, noting where it first nests deeper than `limit`.
    pub(crate) fn scan(json: &str, limit: usize) -> Self {
        let bytes = json.as_bytes();
        let (mut level, mut depth) = (0usize, 0usize);
        let (mut digits, mut in_number, mut integers_only) = (0usize, false, true);
        let mut past = None;
        let mut at = 0;
        while at < bytes.len() {
            let b = bytes[at];
            if in_number {
                match b {
                    b'0'..=b'9' => {
                        digits += 1;
                        at += 1;
                        continue;
                    }
                    b'.' | b'e' | b'E' | b'+' | b'-' => {
                        integers_only = false;
                        at += 1;
                        continue;
                    }
                    _ => {
                        in_number = false;
                        if digits > 18 {
                            integers_only = false;
                        }
                    }
                }
            }
            match b {
                b'"' => {
                    // the string skipped whole: to its closing quote, over escapes
                    let mut i = at + 1;
                    loop {
                        i = string_stop(bytes, i);
                        if bytes.get(i) == Some(&b'\\') {
                            i += 2;
                        } else {
                            break;
                        }
                    }
                    at = i;
                }
                b'{' | b'[' => {
                    level += 1;
                    depth = depth.max(level);
                    if level > limit && past.is_none() {
                        past = Some(at);
                    }
                }
                b'}' | b']' => level = level.saturating_sub(1),
                b'-' => (in_number, digits) = (true, 0),
                b'0'..=b'9' => (in_number, digits) = (true, 1),
                _ => {}
            }
            at += 1;
        }
        if in_number && digits > 18 {
            integers_only = false;
        }
        Self {
            depth,
            integers_only,
            past,
        }
    }

    /// Whether serde_json's parser reads text of this shape to exactly the values
    /// [`parse_checked`] reads: no number it would round, nesting within its recursion limit.
    pub(crate) fn serde_json_exact(self) -> bool {
        self.integers_only && self.depth <= SERDE_JSON_DEPTH
    }
}

/// Where the first `"` or `\` in `bytes` from `at` on is (`bytes.len()` or past it when
/// none): the end of a string's plain run, found eight bytes a step (a byte is one of the two
/// when its XOR with it is zero; the lowest zero byte of a word is found exactly).
fn string_stop(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let hit = zero_byte(word ^ (ONES * u64::from(b'"')))
            | zero_byte(word ^ (ONES * u64::from(b'\\')));
        if hit != 0 {
            return at + (hit.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' {
            return at;
        }
        at += 1;
    }
    at
}

/// Parses JSON text with the crate's own reader (no recursion limit of serde_json's, floats
/// read exactly, so a record reads back as it was written): for text whose depth the caller
/// has checked with [`deeper_than`] (against [`MAX_DEPTH`], or a record's bound). The error
/// is serde_json's message when it has one for the text.
pub(crate) fn parse_checked<T: serde::de::DeserializeOwned>(json: &str) -> serde_json::Result<T> {
    use serde::de::Error as _;
    let value =
        crate::json_text::parse_or_explain(json, usize::MAX).map_err(serde_json::Error::custom)?;
    T::deserialize(value)
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

    #[test]
    fn the_text_shape_names_depth_and_whether_every_number_is_an_exact_integer() {
        let shape = |t: &str| {
            let s = TextShape::of(t);
            (s.depth, s.integers_only)
        };
        assert_eq!(shape("1"), (0, true));
        assert_eq!(
            shape(r#"{"a":[1,-2,{"b":[]}],"c":true,"d":false,"e":null}"#),
            (4, true)
        );
        // the `e` of true and false is no exponent; digits, dots and brackets in strings are text
        assert_eq!(shape(r#"[true,false,"1.5e3 [[{","\"0.1\\",-7]"#), (1, true));
        for inexact in ["0.5", "[1e3]", "[1E3]", "[2e-1]", "-0.0", "{\"x\":1.0}"] {
            assert!(!shape(inexact).1, "{inexact}");
        }
        // 18 digits fit an i64 or u64; 19 may not
        assert_eq!(shape("[999999999999999999]"), (1, true));
        assert_eq!(shape("[-999999999999999999]"), (1, true));
        assert_eq!(shape("[9999999999999999999]"), (1, false));
        assert_eq!(shape("29999999999999999999999995"), (0, false));
        assert!(
            TextShape::of(&format!("{}{}", "[".repeat(120), "]".repeat(120))).serde_json_exact()
        );
        assert!(
            !TextShape::of(&format!("{}{}", "[".repeat(121), "]".repeat(121))).serde_json_exact()
        );
        assert!(!TextShape::of("[0.1]").serde_json_exact());
    }

    #[test]
    fn strings_skipped_a_word_at_a_time_hide_brackets_quotes_and_numbers_at_every_offset() {
        // each trap leaves its string open and unescaped, so a text with it reads as the same
        // text without it (the first bracket past the limit moved by the trap's length), at
        // every offset of a word and with escapes across word edges
        let traps = [r#"\""#, r"\\", "[{", "1.5e3", "é€", r#"\\\""#, "]]]", "x"];
        // a byte past the string's start (`[{"k":"`, 7 bytes) moves by what is inserted there
        let moved = |at: usize, by: usize| if at >= 7 { at + by } else { at };
        for pad in 0..17 {
            for trap in traps {
                for tail in [r#"",[1.5]]"#, r#"",[[7]]"#, r#"\""#, ""] {
                    let inside = format!("{}{trap}", "x".repeat(pad));
                    let text = format!(r#"[{{"k":"{inside}{tail}"#);
                    let plain = format!(r#"[{{"k":"{tail}"#);
                    for limit in [1, 2, usize::MAX] {
                        let (got, want) = (
                            TextShape::scan(&text, limit),
                            TextShape::scan(&plain, limit),
                        );
                        assert_eq!(
                            (got.depth, got.integers_only, got.past),
                            (
                                want.depth,
                                want.integers_only,
                                want.past.map(|at| moved(at, inside.len()))
                            ),
                            "{text} (limit {limit})"
                        );
                    }
                }
            }
        }
        // what the plain texts read as, byte by byte
        let shape = |t: &str| {
            let s = TextShape::scan(t, 2);
            (s.depth, s.integers_only, s.past)
        };
        assert_eq!(shape(r#"[{"k":"",[1.5]]"#), (3, false, Some(9)));
        assert_eq!(shape(r#"[{"k":"",[[7]]"#), (4, true, Some(9)));
        assert_eq!(shape(r#"[{"k":"\""#), (2, true, None));
    }

    #[test]
    fn serde_json_reads_text_it_is_exact_for_as_the_crates_reader_does() {
        for text in [
            r#"{"a":[1,-2,{"b":[]}],"c":true,"n":null,"s":"\u00e9\n\"x\"","k":{"k":1,"k":2}}"#,
            "[-0]",
            "[999999999999999999,-999999999999999999,0]",
            r#"{"deep":[[[[[[[[[[{"x":18446744073}]]]]]]]]]]}"#,
        ] {
            assert!(TextShape::of(text).serde_json_exact(), "{text}");
            let ours: Value = parse_checked(text).unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
        }
    }

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
