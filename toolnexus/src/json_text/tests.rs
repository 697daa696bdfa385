//! The JSON reader against `serde_json`: values, spans, refusals and exact numbers.

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
            (proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO)
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
