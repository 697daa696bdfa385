//! Property tests of the rule key ([`call_fingerprint`]): every spelling of the same decoded
//! arguments (numbers written `5`, `5.0`, `5e0`, `50e-1`, `0.5e1`, any key order, any
//! spacing) is one key, so a deny rule made for one spelling matches every other; and two
//! keys are equal only for arguments that decode to the same values.

use proptest::prelude::*;
use serde_json::Value;
use toolnexus::remember::call_fingerprint;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// 2^53: every integer up to it is a double exactly.
const EXACT: i64 = 1 << 53;

/// Arguments: objects and arrays of numbers (integers of every size, fractions), strings,
/// booleans and nulls.
fn args() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        4 => (-EXACT..=EXACT).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        3 => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        2 => (-1_000_000i32..1_000_000, 0i32..8)
            .prop_map(|(m, e)| Value::from(f64::from(m) / 10f64.powi(e))),
        1 => "[a-z]{0,4}".prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-e]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The ways a number is written: `pick` chooses one.
fn spell_number(n: &serde_json::Number, pick: u8) -> String {
    let exact_int = n
        .as_i64()
        .filter(|i| i.abs() <= EXACT)
        .map(i128::from)
        .or_else(|| n.as_u64().filter(|u| *u <= EXACT as u64).map(i128::from));
    if let Some(i) = exact_int {
        let (sign, digits) = if i < 0 {
            ("-", (-i).to_string())
        } else {
            ("", i.to_string())
        };
        return match pick % 6 {
            0 => format!("{sign}{digits}"),
            1 => format!("{sign}{digits}.0"),
            2 => format!("{sign}{digits}e0"),
            3 => format!("{sign}{digits}0e-1"),
            4 => format!("{sign}0.{digits}E+{}", digits.len()),
            _ => format!("{sign}{digits}.000e+0"),
        };
    }
    if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
        // the shortest digits, moved about the exponent
        let text = format!("{:e}", f.abs());
        let sign = if f.is_sign_negative() { "-" } else { "" };
        let dot = if text.contains('.') { "" } else { "." };
        let (mantissa, exp) = text.split_once('e').unwrap();
        let exp: i64 = exp.parse().unwrap();
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let shift = i64::try_from(digits.len()).unwrap() - 1;
        return match pick % 5 {
            0 => n.to_string(),
            1 => format!("{sign}{text}"),
            2 => format!("{sign}{digits}e{}", exp - shift),
            3 => format!("{sign}{mantissa}{dot}0E{exp}"),
            _ => format!("{sign}0.{digits}e{}", exp + 1),
        };
    }
    // a big integer: only its digits read as that integer
    n.to_string()
}

/// `value` as JSON text, its numbers spelt by `picks` (in turn), its keys in reverse order
/// when `reverse`, with spaces when `spaced`.
fn spell(value: &Value, picks: &[u8], at: &mut usize, reverse: bool, spaced: bool) -> String {
    let sep = if spaced { " , " } else { "," };
    match value {
        Value::Number(n) => {
            let pick = picks[*at % picks.len()];
            *at += 1;
            spell_number(n, pick)
        }
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|v| spell(v, picks, at, reverse, spaced))
                .collect();
            format!("[{}]", items.join(sep))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if reverse {
                entries.reverse();
            }
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        Value::from(k.as_str()),
                        spell(v, picks, at, reverse, spaced)
                    )
                })
                .collect();
            format!("{{{}}}", entries.join(sep))
        }
        other => other.to_string(),
    }
}

/// Whether two decoded values are the same arguments to a tool: numbers as the values they
/// are (an integer and a double equal when the double is that integer).
#[allow(clippy::many_single_char_names)] // two values and their parts, side by side
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i128(), y.as_i128()) {
            (Some(xi), Some(yi)) if !x.is_f64() && !y.is_f64() => xi == yi,
            _ => {
                x.as_f64() == y.as_f64() && {
                    // an integer beyond 2^53 is not the double it rounds to
                    let exact = |n: &serde_json::Number| {
                        n.is_f64()
                            || n.as_i128()
                                .is_some_and(|int| int.abs() <= i128::from(EXACT))
                    };
                    exact(x) && exact(y)
                }
            }
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(config())]

    /// The attack: a deny rule for exactly `{"amount":5,"to":"Bob"}` dodged by `5.0`, `5e0`,
    /// `50e-1`. Every spelling of the same decoded arguments is one rule key.
    #[test]
    fn a_rule_about_one_call_is_not_dodged_by_respelling_its_numbers(
        value in args(),
        one in prop::collection::vec(any::<u8>(), 1..16),
        other in prop::collection::vec(any::<u8>(), 1..16),
        reverse in any::<bool>(),
        spaced in any::<bool>(),
    ) {
        let a = spell(&value, &one, &mut 0, false, false);
        let b = spell(&value, &other, &mut 0, reverse, spaced);
        let (va, vb): (Value, Value) = (
            serde_json::from_str(&a).unwrap(),
            serde_json::from_str(&b).unwrap(),
        );
        // both spellings decode to the arguments generated (serde_json reads a short
        // decimal exactly), so they are one call
        prop_assert!(same(&va, &value), "{a} is not {value}");
        prop_assert!(same(&vb, &value), "{b} is not {value}");
        prop_assert_eq!(call_fingerprint("pay", &va), call_fingerprint("pay", &vb), "{} vs {}", a, b);
    }

    /// And the key never joins arguments that decode differently: a rule never widens.
    #[test]
    fn two_calls_share_a_rule_key_only_when_their_arguments_decode_the_same(
        a in args(),
        b in args(),
    ) {
        if call_fingerprint("pay", &a) == call_fingerprint("pay", &b) {
            prop_assert!(same(&a, &b), "{a} and {b} share a key");
        }
    }
}

/// The issue's spellings, each against the one deny rule's key.
#[test]
fn five_five_point_oh_five_e_zero_and_fifty_e_minus_one_are_one_call() {
    let key = |text: &str| call_fingerprint("pay", &serde_json::from_str(text).unwrap());
    let rule = key(r#"{"amount":5,"to":"Bob"}"#);
    for spelling in ["5.0", "5e0", "50e-1", "0.5e1", "5E0", "5.00"] {
        assert_eq!(
            key(&format!(r#"{{"to": "Bob", "amount": {spelling}}}"#)),
            rule,
            "{spelling}"
        );
    }
    assert_ne!(key(r#"{"amount":5.5,"to":"Bob"}"#), rule);
    assert_ne!(key(r#"{"amount":"5","to":"Bob"}"#), rule);
    // integers beyond 2^53 keep every digit: two of them never share a rule
    assert_ne!(
        key(r#"{"amount":9007199254740993}"#),
        key(r#"{"amount":9007199254740992}"#)
    );
}
