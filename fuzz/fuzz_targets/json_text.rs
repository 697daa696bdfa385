//! Differential: the crate's own JSON reader (`json_text`, what records, sealed envelopes and
//! `limits::from_json_str` read with) against `serde_json` with `float_roundtrip` (on in this
//! crate only; the fuzz crate is outside the workspace, so the feature reaches no user):
//!
//! - both accept the same texts, at serde_json's nesting limit (127 levels) for ours too;
//! - an accepted text gives equal values, written the same (so every float is the same `f64`,
//!   `-0.0` included, and a repeated key keeps the same value in the same place);
//! - for a root object, each member's span is the exact text of a value that reads back as
//!   that member's value (what a MAC over an embedded record is checked against).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolnexus::__private::{json_text_parse, json_text_parse_with_spans};

/// The deepest nesting `serde_json::from_str` reads (its recursion limit of 128 refuses the
/// 128th level).
const SERDE_DEPTH: usize = 127;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let theirs = serde_json::from_str::<Value>(text);
    let ours = json_text_parse(text, SERDE_DEPTH);
    match (&ours, &theirs) {
        (Ok(ours), Ok(theirs)) => {
            assert_eq!(ours, theirs, "values differ for {text:?}");
            assert_eq!(
                ours.to_string(),
                theirs.to_string(),
                "values write differently for {text:?}"
            );
        }
        (Err(e), Ok(_)) => panic!("ours refuses ({e:?}) what serde_json reads: {text:?}"),
        (Ok(_), Err(e)) => panic!("ours reads what serde_json refuses ({e}): {text:?}"),
        (Err(_), Err(_)) => return,
    }
    let (value, members) = json_text_parse_with_spans(text, SERDE_DEPTH).expect("read above");
    assert_eq!(Ok(&value), ours.as_ref(), "spans change the value of {text:?}");
    match &value {
        Value::Object(map) => {
            for (key, span) in &members {
                let member = &text[span.clone()];
                let read = json_text_parse(member, SERDE_DEPTH)
                    .unwrap_or_else(|e| panic!("member {key:?} span {member:?} does not read: {e:?}"));
                // a repeated key keeps its last value
                let last = members.iter().rev().find(|(k, _)| k == key).map(|(_, s)| s);
                if last == Some(span) {
                    assert_eq!(Some(&read), map.get(key), "member {key:?} of {text:?}");
                }
            }
            assert_eq!(
                members.iter().filter(|(k, _)| map.contains_key(k)).count(),
                members.len(),
                "a span names a key the object lacks: {text:?}"
            );
        }
        _ => assert!(members.is_empty(), "spans for a non-object root: {text:?}"),
    }
});
