//! JSON text read with the crate's own limits: nesting up to a depth the caller names (no
//! recursion, so no stack to overflow), and every number read exactly (the nearest `f64`, as
//! Rust's `str::parse` gives it).
//!
//! `serde_json` reads nesting up to 127 levels and floats on a fast path that may land one
//! unit off; lifting either takes one of its cargo features (`unbounded_depth`,
//! `float_roundtrip`), and features unify: turning them on here would change every
//! `serde_json` call in a user's crate. Records the loop writes must read back as they were
//! written (their fingerprints are taken over the values), so they are read here instead.
//!
//! The values are `serde_json::Value`s with the same meaning `serde_json` gives the text:
//! integers without a fraction or exponent are `u64` (or `i64` when negative; `-0` is the float
//! `-0.0`), every other number an `f64`; a repeated key keeps its last value.
//!
//! The file is longer than the crate's usual ~600 lines on purpose: a third of it is its tests
//! (values, spans and refusals against `serde_json`'s, exact numbers), which read the private
//! reader directly; the reader itself is one state machine that splitting would only scatter.

use std::fmt;
use std::ops::Range;

use serde_json::{Map, Number, Value};

/// A member of a root object: its key, and the byte range of its value in the text.
pub(crate) type Member = (String, Range<usize>);

/// Why JSON text did not read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    /// The byte offset where reading stopped.
    pub(crate) at: usize,
    /// What was wrong there.
    pub(crate) what: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

impl std::error::Error for JsonError {}

/// Reads `text` (one JSON value, whitespace around it) nested at most `max_depth` levels
/// (`{}` and `[]` are one level).
pub(crate) fn parse(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    Reader::new(text).value(max_depth, None)
}

/// [`parse`], and for a root object the byte range of each member's value in `text`, in order
/// (what a MAC over an embedded record is checked against).
pub(crate) fn parse_with_spans(
    text: &str,
    max_depth: usize,
) -> Result<(Value, Vec<Member>), JsonError> {
    let mut spans = Vec::new();
    let value = Reader::new(text).value(max_depth, Some(&mut spans))?;
    Ok((value, spans))
}

/// [`parse`], with `serde_json`'s own message for text it cannot read either (the message a
/// caller has always shown), else this reader's.
pub(crate) fn parse_or_explain(text: &str, max_depth: usize) -> Result<Value, String> {
    parse(text, max_depth).map_err(|ours| explain(text, &ours))
}

/// `serde_json`'s message for text this reader refused, when `serde_json` refuses it too
/// for a reason other than its own nesting limit; else this reader's message.
pub(crate) fn explain(text: &str, ours: &JsonError) -> String {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(theirs) if !theirs.to_string().starts_with("recursion limit exceeded") => {
            theirs.to_string()
        }
        _ => ours.to_string(),
    }
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// The raw text of each member of the object `text` is, keys read as JSON strings: for text
/// whose values need not be valid JSON (a lone surrogate, nesting deeper than any parser takes),
/// as only strings and brackets are followed. `None` when `text` is not an object of members.
pub(crate) fn raw_members(text: &str) -> Option<Vec<(String, &str)>> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut members = Vec::new();
    s.skip_whitespace();
    if !s.eat(b'{') {
        return None;
    }
    s.skip_whitespace();
    if !s.eat(b'}') {
        loop {
            s.skip_whitespace();
            let key = s.value().filter(|k| text[k.clone()].starts_with('"'))?;
            let key: String = serde_json::from_str(&text[key]).ok()?;
            s.skip_whitespace();
            if !s.eat(b':') {
                return None;
            }
            s.skip_whitespace();
            let value = s.value()?;
            members.push((key, &text[value]));
            s.skip_whitespace();
            if s.eat(b'}') {
                break;
            }
            if !s.eat(b',') {
                return None;
            }
        }
    }
    s.skip_whitespace();
    (s.at == text.len()).then_some(members)
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// The raw text of each element of the array `text` is (see [`raw_members`]).
pub(crate) fn raw_elements(text: &str) -> Option<Vec<&str>> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut elements = Vec::new();
    s.skip_whitespace();
    if !s.eat(b'[') {
        return None;
    }
    s.skip_whitespace();
    if !s.eat(b']') {
        loop {
            s.skip_whitespace();
            let value = s.value()?;
            elements.push(&text[value]);
            s.skip_whitespace();
            if s.eat(b']') {
                break;
            }
            if !s.eat(b',') {
                return None;
            }
        }
    }
    s.skip_whitespace();
    (s.at == text.len()).then_some(elements)
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// Finds where values end by their strings and brackets alone.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
impl Scanner<'_> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.bytes.get(self.at) == Some(&b);
        if found {
            self.at += 1;
        }
        found
    }

    /// The range of the value at the cursor, the cursor after it.
    fn value(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        match *self.bytes.get(self.at)? {
            b'"' => self.skip_string()?,
            b'{' | b'[' => {
                let mut level = 0_usize;
                loop {
                    match *self.bytes.get(self.at)? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => level += 1,
                        b'}' | b']' => {
                            level -= 1;
                            if level == 0 {
                                self.at += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while let Some(&b) = self.bytes.get(self.at) {
                    if matches!(
                        b,
                        b',' | b'}'
                            | b']'
                            | b'{'
                            | b'['
                            | b'"'
                            | b':'
                            | b' '
                            | b'\t'
                            | b'\n'
                            | b'\r'
                    ) {
                        break;
                    }
                    self.at += 1;
                }
                if self.at == start {
                    return None;
                }
            }
        }
        Some(start..self.at)
    }

    /// Past the string at the cursor (its escapes skipped whole).
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match *self.bytes.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }
}

/// Removes `key` from `map` keeping the order of the other keys whether or not `serde_json`'s
/// `preserve_order` feature is on (`Map::remove` is a swap-remove under it, and
/// `Map::shift_remove` exists only with it).
pub(crate) fn remove_key(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if !map.contains_key(key) {
        return None;
    }
    let mut taken = None;
    for (k, v) in std::mem::take(map) {
        if k == key {
            taken = Some(v);
        } else {
            map.insert(k, v);
        }
    }
    taken
}

enum Frame {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    fn fail<T>(&self, what: &'static str) -> Result<T, JsonError> {
        Err(JsonError { at: self.at, what })
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(
        mut self,
        max_depth: usize,
        mut spans: Option<&mut Vec<Member>>,
    ) -> Result<Value, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut member_start = 0;
        'value: loop {
            self.skip_whitespace();
            if stack.len() == 1 {
                member_start = self.at;
            }
            let mut value = match self.peek() {
                None => return self.fail("EOF while parsing a value"),
                Some(open @ (b'{' | b'[')) => {
                    if stack.len() >= max_depth {
                        return self.fail("nested too deep");
                    }
                    self.at += 1;
                    self.skip_whitespace();
                    if open == b'{' {
                        if self.eat(b'}') {
                            Value::Object(Map::new())
                        } else {
                            let key = self.key()?;
                            stack.push(Frame::Object(Map::new(), key));
                            continue 'value;
                        }
                    } else if self.eat(b']') {
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(_) => return self.fail("expected value"),
            };
            // hand the value to its container, closing every container it completes
            loop {
                let depth = stack.len();
                match stack.last_mut() {
                    None => {
                        self.skip_whitespace();
                        if self.at != self.bytes.len() {
                            return self.fail("trailing characters");
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array(items)) => {
                        items.push(value);
                        self.skip_whitespace();
                        if self.eat(b',') {
                            continue 'value;
                        }
                        if !self.eat(b']') {
                            return self.fail("expected `,` or `]`");
                        }
                    }
                    Some(Frame::Object(map, key)) => {
                        if depth == 1
                            && let Some(spans) = spans.as_deref_mut()
                        {
                            spans.push((key.clone(), member_start..self.at));
                        }
                        map.insert(std::mem::take(key), value);
                        self.skip_whitespace();
                        if self.eat(b',') {
                            self.skip_whitespace();
                            *key = self.key()?;
                            continue 'value;
                        }
                        if !self.eat(b'}') {
                            return self.fail("expected `,` or `}`");
                        }
                    }
                }
                value = match stack.pop() {
                    Some(Frame::Array(items)) => Value::Array(items),
                    Some(Frame::Object(map, _)) => Value::Object(map),
                    None => unreachable!("a container was just closed"),
                };
            }
        }
    }

    /// An object key and the `:` after it.
    fn key(&mut self) -> Result<String, JsonError> {
        if self.peek() != Some(b'"') {
            return self.fail("key must be a string");
        }
        let key = self.string()?;
        self.skip_whitespace();
        if !self.eat(b':') {
            return self.fail("expected `:`");
        }
        Ok(key)
    }

    fn literal(&mut self, word: &'static str, value: Value) -> Result<Value, JsonError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            self.fail("expected value")
        }
    }

    /// A string, the opening quote at the cursor.
    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // the run stops at an ASCII byte, so it ends on a character boundary
            out.push_str(&self.text[start..self.at]);
            match self.peek() {
                None => return self.fail("EOF while parsing a string"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = match self.peek() {
                        None => return self.fail("EOF while parsing a string"),
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 1;
                            out.push(self.unicode_escape()?);
                            continue;
                        }
                        Some(_) => return self.fail("invalid escape"),
                    };
                    self.at += 1;
                    out.push(escaped);
                }
                Some(_) => return self.fail("control character in a string"),
            }
        }
    }

    /// The character of a `\uXXXX` escape (the cursor after `\u`), a surrogate pair read whole.
    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !(self.eat(b'\\') && self.eat(b'u')) {
                    return self.fail("lone leading surrogate in hex escape");
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return self.fail("lone leading surrogate in hex escape");
                }
                0x10000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00)
            }
            0xDC00..=0xDFFF => return self.fail("lone trailing surrogate in hex escape"),
            other => u32::from(other),
        };
        char::from_u32(code).map_or_else(|| self.fail("invalid unicode code point"), Ok)
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        match digits.and_then(|d| u16::from_str_radix(d, 16).ok()) {
            Some(n) => {
                self.at += 4;
                Ok(n)
            }
            None => self.fail("invalid escape"),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at - start
    }

    /// A number, read as `serde_json` reads it into a `Value`, floats exactly.
    fn number(&mut self) -> Result<Number, JsonError> {
        let start = self.at;
        let negative = self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.fail("invalid number"),
        }
        let mut integer = true;
        if self.eat(b'.') {
            integer = false;
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            integer = false;
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        let text = &self.text[start..self.at];
        if integer {
            let magnitude = if negative { &text[1..] } else { text };
            if let Ok(n) = magnitude.parse::<u64>() {
                if !negative {
                    return Ok(Number::from(n));
                }
                // `-0` and integers below `i64::MIN` are floats, as serde_json has them
                if n != 0 && n <= 1 << 63 {
                    return Ok(Number::from(0_i64.wrapping_sub_unsigned(n)));
                }
            }
        }
        match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(n),
            None => Err(JsonError {
                at: start,
                what: "number out of range",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{parse, parse_or_explain, parse_with_spans, remove_key};
    #[cfg(feature = "http")]
    use super::{raw_elements, raw_members};

    fn same_as_serde(text: &str) {
        let theirs: Value = serde_json::from_str(text).unwrap();
        let ours = parse(text, 128).unwrap();
        assert_eq!(ours, theirs, "{text}");
        assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "-0.0",
            "1",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1.5",
            "-2.5e-3",
            "1E2",
            "1e+2",
            "0.1",
            r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 é""#,
            "[]",
            "{}",
            r#"{"b":1,"a":[1,{"c":null}],"b":2}"#,
            " [ 1 , [ ] , { } , \"x\" ] ",
        ] {
            same_as_serde(text);
        }
    }

    #[test]
    fn floats_are_read_exactly() {
        for number in [
            0.300_000_000_000_000_04,
            3e25,
            1e-300,
            2.225_073_858_507_201e-308,
            1.797_693_134_862_315_7e308,
        ] {
            let text = json!(number).to_string();
            assert_eq!(parse(&text, 1).unwrap(), json!(number), "{text}");
        }
        assert_eq!(
            parse("29999999999999999999999995", 1).unwrap().to_string(),
            "3e+25"
        );
    }

    #[test]
    fn refuses_what_is_not_json_and_says_where() {
        for (text, what) in [
            ("", "EOF while parsing a value at byte 0"),
            ("[1,]", "expected value at byte 3"),
            ("[1 2]", "expected `,` or `]` at byte 3"),
            (r#"{"a" 1}"#, "expected `:` at byte 5"),
            ("{1:2}", "key must be a string at byte 1"),
            (
                r#""\ud800""#,
                "lone leading surrogate in hex escape at byte 7",
            ),
            (
                r#""\udc00""#,
                "lone trailing surrogate in hex escape at byte 7",
            ),
            ("\"a\u{1}\"", "control character in a string at byte 2"),
            ("01", "trailing characters at byte 1"),
            ("1.", "invalid number at byte 2"),
            ("-", "invalid number at byte 1"),
            ("1e400", "number out of range at byte 0"),
            ("nul", "expected value at byte 0"),
            ("{} x", "trailing characters at byte 3"),
        ] {
            assert_eq!(parse(text, 128).unwrap_err().to_string(), what, "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
        // serde_json's message, where it has one
        assert_eq!(
            parse_or_explain("[1,", 128).unwrap_err(),
            "EOF while parsing a value at line 1 column 3"
        );
    }

    #[test]
    fn depth_is_the_callers() {
        let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        assert!(parse(&nested(300), 300).is_ok());
        assert_eq!(
            parse(&nested(301), 300).unwrap_err().to_string(),
            "nested too deep at byte 300"
        );
        assert!(parse("[{}]", 2).is_ok());
        assert!(parse("[{}]", 1).is_err());
        assert!(parse("1", 0).is_ok());
        // deeper than serde_json reads (a `Value` that deep is dropped recursively, so the
        // callers bound the depth before they parse)
        assert!(parse(&nested(1000), 1000).is_ok());
        // and the message of text serde_json refuses for its own limit is this reader's
        assert_eq!(
            parse_or_explain(&nested(200), 128).unwrap_err(),
            "nested too deep at byte 128"
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn raw_members_and_elements_follow_strings_and_brackets() {
        let text = r#" {"a" : [1, "]", {"b": "\ud800"}] , "n":-1.5e3,"s":"x\"y", "t":true} "#;
        assert_eq!(
            raw_members(text).unwrap(),
            [
                ("a".to_owned(), r#"[1, "]", {"b": "\ud800"}]"#),
                ("n".to_owned(), "-1.5e3"),
                ("s".to_owned(), r#""x\"y""#),
                ("t".to_owned(), "true"),
            ]
        );
        assert_eq!(
            raw_elements(r#"[ {"x":[]} ,2,"s" ]"#).unwrap(),
            [r#"{"x":[]}"#, "2", r#""s""#]
        );
        assert_eq!(raw_elements("[]").unwrap(), Vec::<&str>::new());
        assert_eq!(raw_members("{}").unwrap(), Vec::new());
        for bad in [
            "[1",
            r#"{"a":1"#,
            r#"{"a" 1}"#,
            "[1 2]",
            r#"["a"b]"#,
            "{1:2}",
            "[1] x",
        ] {
            assert!(
                raw_elements(bad).is_none() && raw_members(bad).is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn removing_a_key_keeps_the_others_in_order() {
        let mut map = json!({"c": 1, "a": 2, "b": 3}).as_object().unwrap().clone();
        let before: Vec<String> = map.keys().filter(|k| *k != "a").cloned().collect();
        assert_eq!(remove_key(&mut map, "a"), Some(json!(2)));
        assert_eq!(remove_key(&mut map, "zz"), None);
        assert_eq!(map.keys().cloned().collect::<Vec<_>>(), before);
    }

    #[test]
    fn spans_are_the_members_bytes() {
        let text = r#" {"kid":"k", "record" : {"a":[1,{"b":2}]} ,"mac":"00"} "#;
        let (value, spans) = parse_with_spans(text, 8).unwrap();
        assert_eq!(value["record"]["a"][1]["b"], 2);
        let found: Vec<(&str, &str)> = spans
            .iter()
            .map(|(k, r)| (k.as_str(), &text[r.clone()]))
            .collect();
        assert_eq!(
            found,
            [
                ("kid", r#""k""#),
                ("record", r#"{"a":[1,{"b":2}]}"#),
                ("mac", r#""00""#)
            ]
        );
    }

    /// Property tests: the reader against `serde_json`'s writer (every value it writes reads
    /// back the same, floats to the bit) and against `serde_json`'s reader on what it accepts
    /// (the workspace's serde_json has no `float_roundtrip`, so values are compared where its
    /// floats are not involved; `fuzz/fuzz_targets/json_text.rs` compares every value against
    /// a serde_json that reads floats exactly).
    mod prop {
        use proptest::prelude::*;
        use serde_json::{Map, Number, Value};

        use super::super::{parse, parse_with_spans};

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<u64>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                (proptest::num::f64::NORMAL
                    | proptest::num::f64::SUBNORMAL
                    | proptest::num::f64::ZERO)
                    .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
                any::<String>().prop_map(Value::String),
            ]
        }

        fn value() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(8, 64, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec((any::<String>(), inner), 0..6)
                        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            #[test]
            fn what_serde_json_writes_reads_back_the_same(v in value()) {
                for text in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
                    let read = parse(&text, 128).unwrap();
                    prop_assert_eq!(&read, &v);
                    // the same bits: `-0.0` stays negative, every float its own `f64`
                    prop_assert_eq!(read.to_string(), v.to_string());
                    let (spanned, members) = parse_with_spans(&text, 128).unwrap();
                    prop_assert_eq!(&spanned, &v);
                    for (key, span) in members {
                        prop_assert_eq!(parse(&text[span], 128).unwrap(), v[&key].clone());
                    }
                }
            }

            #[test]
            fn a_number_reads_as_str_parse_reads_it(
                text in r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?"
            ) {
                let read = parse(&text, 1);
                let integer = !text.contains(['.', 'e', 'E']);
                let exact: f64 = text.parse().unwrap();
                if integer && text != "-0" && let Ok(n) = text.parse::<u64>() {
                    prop_assert_eq!(read.unwrap(), Value::from(n));
                } else if integer && text != "-0" && let Ok(n) = text.parse::<i64>() {
                    prop_assert_eq!(read.unwrap(), Value::from(n));
                } else if exact.is_finite() {
                    let read = read.unwrap();
                    prop_assert_eq!(read.as_f64().map(f64::to_bits), Some(exact.to_bits()), "{}", text);
                    prop_assert!(read.is_f64());
                } else {
                    // serde_json refuses a number out of `f64`'s range too
                    prop_assert!(read.is_err());
                    prop_assert!(serde_json::from_str::<Value>(&text).is_err());
                }
            }

            #[test]
            fn accepts_what_serde_json_accepts(text in r#"[\[\]{}:,"\\ \t\n0-9a-z.eE+\-]{0,24}"#) {
                let ours = parse(&text, 128);
                let theirs = serde_json::from_str::<Value>(&text);
                prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{}: {:?} {:?}", text, ours, theirs.err());
                if let (Ok(ours), Ok(theirs)) = (ours, theirs)
                    && !text.contains(['.', 'e', 'E'])
                {
                    prop_assert_eq!(ours, theirs);
                }
            }
        }
    }
}
