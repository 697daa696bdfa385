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
//! Its tests (values, spans and refusals against `serde_json`'s, exact numbers) are
//! `tests.rs`, a child module that reads the private reader directly; the reader itself is one
//! state machine that splitting would only scatter.

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

/// The nesting `serde_json::from_str` reads (its recursion limit admits 127 levels).
const SERDE_JSON_DEPTH: usize = 127;

/// JSON text from outside (a model's tool-call arguments, a provider's reply, an answer
/// posted to the inbox) read as `serde_json::from_str` reads it, the same texts accepted and
/// its error for the others, but every number exactly: without `serde_json`'s
/// `float_roundtrip` feature (off in a user's build) its fast path may read a long number one
/// unit off, so a respelt number would key a remembered rule (`remember::call_fingerprint`)
/// as another value.
pub(crate) fn from_peer_str(text: &str) -> serde_json::Result<Value> {
    parse(text, SERDE_JSON_DEPTH).or_else(|_| serde_json::from_str(text))
}

#[cfg(any(feature = "http", feature = "inbox"))] // a provider's reply, an answer posted to the inbox
/// [`from_peer_str`] for bytes (`serde_json::from_slice`'s error when they are not UTF-8).
pub(crate) fn from_peer_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    match std::str::from_utf8(bytes) {
        Ok(text) => from_peer_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

#[cfg(test)]
/// Spellings of the number `3e25` a model may write; a `serde_json` without `float_roundtrip`
/// (a user's build: only this workspace's tests crate turns it on) reads some of them one
/// unit off (`3e25` itself as `3.0000000000000005e25`). The attack tests on rule keys use them.
pub(crate) const SPELLINGS_OF_3E25: [&str; 5] = [
    "3e25",
    "3.0e25",
    "300e23",
    "30000000000000000000000000",
    "29999999999999999999999995",
];

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// The raw text of each member of the object `text` is, keys read as JSON strings: for text
/// whose values need not be valid JSON (a lone surrogate, nesting deeper than any parser takes),
/// as only strings and brackets are followed. `None` when `text` is not an object of members.
pub(crate) fn raw_members(text: &str) -> Option<Vec<(String, &str)>> {
    raw_items(text, b'{', b'}', |s| {
        let key = s.value().filter(|k| text[k.clone()].starts_with('"'))?;
        let key: String = serde_json::from_str(&text[key]).ok()?;
        s.skip_whitespace();
        if !s.eat(b':') {
            return None;
        }
        s.skip_whitespace();
        let value = s.value()?;
        Some((key, &text[value]))
    })
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// The raw text of each element of the array `text` is (see [`raw_members`]).
pub(crate) fn raw_elements(text: &str) -> Option<Vec<&str>> {
    raw_items(text, b'[', b']', |s| Some(&text[s.value()?]))
}

#[cfg(feature = "http")] // the lenient Anthropic reader and mcp.json (`mcp` turns on `http`)
/// The items between `open` and `close` that `text` is, separated by commas, each read by
/// `item` from where it starts (whitespace skipped); `None` when `text` is not such a list.
fn raw_items<'t, T>(
    text: &'t str,
    open: u8,
    close: u8,
    mut item: impl FnMut(&mut Scanner<'t>) -> Option<T>,
) -> Option<Vec<T>> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut items = Vec::new();
    s.skip_whitespace();
    if !s.eat(open) {
        return None;
    }
    s.skip_whitespace();
    if !s.eat(close) {
        loop {
            s.skip_whitespace();
            items.push(item(&mut s)?);
            s.skip_whitespace();
            if s.eat(close) {
                break;
            }
            if !s.eat(b',') {
                return None;
            }
        }
    }
    s.skip_whitespace();
    (s.at == text.len()).then_some(items)
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
mod tests;
