//! Feeds arbitrary JSON to the schema lowerings and the credential trust boundary:
//!
//! - neither lowering panics (or overflows the stack), whatever the schema;
//! - a lowered schema weighs at most a fixed multiple of the input plus a constant (the
//!   lowering budget), measured as nodes plus string and key bytes;
//! - a Gemini schema holds no `$ref` anywhere;
//! - as the `data` of an `input` request, the input either fails the boundary or shows no
//!   credential spelling (from a list kept apart from the boundary's own) in any key or string.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolnexus::Request;
use toolnexus::adapters::{gemini_schema, openai_strict_schema};
use toolnexus::boundary::check_request;

/// Output weight <= FACTOR * input weight + CONSTANT. The lowering's inlining budget is 8x the
/// input plus 256 Ki; the rest of a lowering adds at most a few nodes per input node.
const FACTOR: usize = 32;
const CONSTANT: usize = 1 << 20;

/// Credential spellings, kept apart from the boundary's list, each matched as a token.
const SPELLINGS: &[&str] = &[
    "password", "passwd", "pwd", "passcode", "passphrase", "secret", "token", "bearer", "apikey",
    "api_key", "otp", "totp", "mfa_code", "pin", "cvv", "cvc", "iban", "ssn", "cookie",
    "session_id", "credit_card", "card_number", "private_key", "access_token",
];

fn weight(v: &Value) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total += 1;
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                for (k, v) in o {
                    total += k.len();
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    total
}

/// A `$ref` keyword anywhere in a schema (a property *named* `$ref` is no keyword).
fn has_ref(v: &Value) -> bool {
    // (value, whether its keys are property names rather than keywords)
    let mut stack = vec![(v, false)];
    while let Some((v, names)) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|v| (v, false))),
            Value::Object(o) => {
                if !names && o.contains_key("$ref") {
                    return true;
                }
                for (k, v) in o {
                    let child_names = !names && k == "properties";
                    stack.push((v, child_names));
                }
            }
            _ => {}
        }
    }
    false
}

fn texts(v: &Value, out: &mut Vec<String>) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                for (k, v) in o {
                    out.push(k.clone());
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
}

/// `spelling` as a token of `text`: lowercase, between characters that are not letters/digits.
fn occurs(text: &str, spelling: &str) -> bool {
    let lower = text.to_lowercase();
    lower.match_indices(spelling).any(|(i, m)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let bound = FACTOR.saturating_mul(weight(&value)).saturating_add(CONSTANT);
    if let Ok(lowered) = gemini_schema("fuzz", &value) {
        assert!(!has_ref(&lowered), "a `$ref` in a Gemini schema: {lowered}");
        assert!(weight(&lowered) <= bound, "gemini output too large");
    }
    if let Ok(lowered) = openai_strict_schema("fuzz", &value) {
        assert!(weight(&lowered) <= bound, "strict output too large");
    }
    let Value::Object(obj) = value else {
        return;
    };
    let prompt = obj.get("prompt").and_then(Value::as_str).unwrap_or("Fill in").to_owned();
    let request = Request::input(prompt).with_data(Map::clone(&obj));
    if check_request(&request).is_ok() {
        let mut seen = vec![request.prompt.clone()];
        texts(&Value::Object(obj), &mut seen);
        for t in &seen {
            for s in SPELLINGS {
                assert!(!occurs(t, s), "{s:?} in {t:?} passed the boundary");
            }
        }
    }
});
