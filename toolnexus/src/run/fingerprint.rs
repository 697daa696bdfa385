//! The fingerprint of a halted call: what binds an answer to the call a human was asked about.
//!
//! SHA-256 (lowercase hex) of the canonical JSON of
//! `{"args": <the arguments the tool ran with>, "arguments": <the arguments as the model sent
//! them>, "requestId": <the id of the request the call made>, "runId": <the run's id>,
//! "tool": <the tool's name>}`. Canonical JSON here: object keys sorted by code point at every
//! level, no whitespace, strings and numbers as `serde_json` writes them. The two argument
//! values differ only when a `before_tool` hook rewrote the arguments (or the model sent them
//! as a JSON string); both are bound, so neither copy in a record can be changed. The run id
//! and the request id are bound too (contract section 4): a record moved to another run or
//! request, its ids rewritten to match, no longer hashes to its fingerprint, and changing a
//! run's id (which changes its tools' idempotency keys) is refused the same way.
//!
//! A run whose client names its agent ([`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name))
//! binds that name too, as a member `"agent": <the name>`, and a run that is a turn of a
//! conversation ([`Client::ask`](crate::Client::ask)) its id, as `"conversation": <the id>`,
//! and a run for a principal ([`Client::for_principal`](crate::Client::for_principal)) who, as
//! `"principal": <the principal>` (each in its sorted place): the answer page shows a person who asks and where, and an edit
//! of either is refused like an edit of the call. A record without them hashes exactly as
//! before they existed.
//!
//! For example, a call of `t` with `{"a":1}` (both copies) in run `run-1` asking request `r1`
//! hashes the 80 bytes
//! `{"args":{"a":1},"arguments":{"a":1},"requestId":"r1","runId":"run-1","tool":"t"}`.
//!
//! Also the idempotency key of a call ([`idempotency_key`]), the same in every process that
//! runs it.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::util::hex;

/// The ids a fingerprint binds besides the call: the run's and its request's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ids<'a> {
    pub(crate) run: &'a str,
    pub(crate) request: &'a str,
    /// The agent's name, when the run has one.
    pub(crate) agent: Option<&'a str>,
    /// The conversation the run is a turn of, when it is one.
    pub(crate) conversation: Option<&'a str>,
    /// Who the run is for, when it is for someone.
    pub(crate) principal: Option<&'a str>,
}

/// The fingerprint of the call of `tool` the model made with `arguments` and the tool ran with
/// `args`, in run `ids.run`, when it made request `ids.request`.
pub(crate) fn of(ids: Ids<'_>, tool: &str, arguments: &Value, args: &Value) -> String {
    let mut bytes = Vec::with_capacity(192);
    bytes.push(b'{');
    if let Some(agent) = ids.agent {
        bytes.extend_from_slice(b"\"agent\":");
        string(agent, &mut bytes);
        bytes.push(b',');
    }
    bytes.extend_from_slice(b"\"args\":");
    canonical(args, &mut bytes);
    bytes.extend_from_slice(b",\"arguments\":");
    canonical(arguments, &mut bytes);
    if let Some(conversation) = ids.conversation {
        bytes.extend_from_slice(b",\"conversation\":");
        string(conversation, &mut bytes);
    }
    if let Some(principal) = ids.principal {
        bytes.extend_from_slice(b",\"principal\":");
        string(principal, &mut bytes);
    }
    bytes.extend_from_slice(b",\"requestId\":");
    string(ids.request, &mut bytes);
    bytes.extend_from_slice(b",\"runId\":");
    string(ids.run, &mut bytes);
    bytes.extend_from_slice(b",\"tool\":");
    string(tool, &mut bytes);
    bytes.push(b'}');
    hex(&Sha256::digest(&bytes))
}

/// The fingerprint a remembered `args` rule binds (`remember::call_fingerprint`): SHA-256
/// (lowercase hex) of the rule form of `{"args": <args>, "tool": <tool>}` ([`rule_form`]:
/// numbers read as the values they decode to, unlike the record's fingerprint above, whose
/// bytes the contract pins).
pub(crate) fn call(tool: &str, args: &Value) -> String {
    let mut bytes = Vec::with_capacity(96);
    bytes.extend_from_slice(b"{\"args\":");
    rule_form(args, &mut bytes);
    bytes.extend_from_slice(b",\"tool\":");
    string(tool, &mut bytes);
    bytes.push(b'}');
    hex(&Sha256::digest(&bytes))
}

/// The key of one tool call of one run: SHA-256 (lowercase hex) of
/// `toolnexus-idempotency-v1 NUL run_id NUL turn NUL call_id` (see
/// [`Context::idempotency_key`](crate::Context::idempotency_key)).
pub(crate) fn idempotency_key(run_id: &str, turn: u32, call_id: &str) -> String {
    let mut hash = Sha256::new();
    for part in [
        "toolnexus-idempotency-v1",
        run_id,
        &turn.to_string(),
        call_id,
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex(&hash.finalize())
}

/// Writes `value` as canonical JSON (keys sorted, no whitespace).
pub(crate) fn canonical(value: &Value, out: &mut Vec<u8>) {
    sorted(value, out, &|scalar, out| {
        // serde_json's own text, written in place (writing into a Vec cannot fail)
        let _ = serde_json::to_writer(&mut *out, scalar);
    });
}

/// The walk both canonical forms share: objects with their keys sorted by code point, arrays
/// in order, no whitespace; each scalar written by `scalar`.
fn sorted(value: &Value, out: &mut Vec<u8>, scalar: &dyn Fn(&Value, &mut Vec<u8>)) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(key, out);
                out.push(b':');
                sorted(item, out, scalar);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                sorted(item, out, scalar);
            }
            out.push(b']');
        }
        other => scalar(other, out),
    }
}

/// Writes `value` in the rule form: canonical JSON (keys sorted, no whitespace) with every
/// number as the value it decodes to, so each spelling of one value writes the same bytes.
///
/// - An integer (a number without fraction or exponent that fits `i64` or `u64`): its
///   decimal digits, as [`canonical`] writes it (a rule kept before this form matches
///   integer arguments as it did).
/// - Any other number is the IEEE 754 double it reads as, written as ECMAScript's
///   `Number.prototype.toString` writes it (RFC 8785 section 3.2.2.3): an integral double
///   below 10^21 as its digits (`5.0`, `5e0` and `50e-1` are all `5`; `-0.0` is `0`), else
///   the shortest digits that read back as the same double, with an exponent (`e-7`, `e+21`)
///   outside ECMAScript's plain range.
///
/// An integer beyond 2^53 keeps all its digits while a double of the same magnitude is
/// rounded, so `9007199254740993` and `9007199254740993.0` (which reads as
/// `9007199254740992`) differ: a rule never matches a number other than the one it was made
/// for; at worst a respelt huge integer is asked again.
pub(crate) fn rule_form(value: &Value, out: &mut Vec<u8>) {
    sorted(value, out, &|scalar, out| match scalar {
        Value::Number(n) if n.is_f64() => {
            out.extend_from_slice(ecmascript_number(n.as_f64().unwrap_or(0.0)).as_bytes());
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    });
}

/// ECMAScript's `Number.prototype.toString` of a finite double (RFC 8785's number form).
pub(crate) fn ecmascript_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        // -0 is 0; JSON has no infinities or NaN
        return "0".to_owned();
    }
    // the shortest digits that read back as `x`, as `d.ddde<exp>`
    let exp_form = format!("{:e}", x.abs());
    let (mantissa, exp) = exp_form.split_once('e').unwrap_or((&exp_form, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    // the value is 0.<digits> x 10^n
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let sign = if x < 0.0 { "-" } else { "" };
    let body = if k <= n && n <= 21 {
        format!(
            "{digits}{}",
            "0".repeat(usize::try_from(n - k).unwrap_or(0))
        )
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-n).unwrap_or(0)))
    } else {
        let e = n - 1;
        let e = if e < 0 {
            format!("-{}", -e)
        } else {
            format!("+{e}")
        };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{e}")
        } else {
            format!("{first}.{rest}e{e}")
        }
    };
    format!("{sign}{body}")
}

fn string(s: &str, out: &mut Vec<u8>) {
    // serde_json's own text of the string, written in place (into a Vec: cannot fail)
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use sha2::{Digest, Sha256};

    use super::{Ids, hex, idempotency_key, of};

    const IDS: Ids<'static> = Ids {
        run: "run-1",
        request: "r1",
        agent: None,
        conversation: None,
        principal: None,
    };

    #[test]
    fn key_order_and_whitespace_do_not_change_the_fingerprint() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "s"}"#).unwrap();
        let b = json!({"a": "s", "b": [1, {"x": 1, "y": 2}]});
        assert_eq!(of(IDS, "t", &a, &a), of(IDS, "t", &b, &b));
        assert_eq!(of(IDS, "t", &a, &a).len(), 64);
    }

    #[test]
    fn the_tool_and_both_argument_copies_are_bound() {
        let args = json!({"path": "/tmp/x"});
        let base = of(IDS, "delete", &args, &args);
        assert_ne!(base, of(IDS, "delete_all", &args, &args));
        assert_ne!(base, of(IDS, "delete", &json!({"path": "/etc"}), &args));
        assert_ne!(base, of(IDS, "delete", &args, &json!({"path": "/etc"})));
        assert_ne!(base, of(IDS, "delete", &args, &json!({"path": ["/tmp/x"]})));
    }

    #[test]
    fn the_run_id_and_the_request_id_are_bound() {
        let args = json!({"path": "/tmp/x"});
        let base = of(IDS, "delete", &args, &args);
        let other_run = Ids {
            run: "run-2",
            ..IDS
        };
        let other_request = Ids {
            request: "r2",
            ..IDS
        };
        assert_ne!(base, of(other_run, "delete", &args, &args));
        assert_ne!(base, of(other_request, "delete", &args, &args));
        // the two ids are separate fields: one cannot be moved into the other
        let swapped = Ids {
            run: "r1",
            request: "run-1",
            agent: None,
            conversation: None,
            principal: None,
        };
        assert_ne!(base, of(swapped, "delete", &args, &args));
    }

    /// The contract's test vector: another port computes the same fingerprint.
    #[test]
    fn the_fingerprint_is_sha256_of_the_canonical_form() {
        // computed independently:
        // printf '%s' '{"args":{"a":1},"arguments":{"a":1},"requestId":"r1","runId":"run-1","tool":"t"}' | sha256sum
        assert_eq!(
            of(IDS, "t", &json!({"a": 1}), &json!({"a": 1})),
            "ad47fd58ecdd6f4c8e23cf01567036c4cefd361046d03733fc7b786b6b8be342"
        );
        // ids are JSON strings: quotes and control characters are escaped, not spliced
        // printf '%s' '{"args":{},"arguments":{},"requestId":"a\"b","runId":"\n","tool":"t"}' | sha256sum
        let odd = Ids {
            run: "\n",
            request: "a\"b",
            agent: None,
            conversation: None,
            principal: None,
        };
        assert_eq!(
            of(odd, "t", &json!({}), &json!({})),
            "2418d6a5d48395ffd36d44428c515f2eeeb75fba73ec9daa76f09fb6ad7fc6e4"
        );
    }

    /// A named agent, a conversation and a principal are bound in their sorted places; without them
    /// nothing changes (the vector above).
    #[test]
    fn the_agent_name_the_conversation_and_the_principal_are_bound_when_there_are_some() {
        let named = Ids {
            agent: Some("expense-bot"),
            ..IDS
        };
        let args = json!({"a": 1});
        // printf '%s' '{"agent":"expense-bot","args":{"a":1},"arguments":{"a":1},"requestId":"r1","runId":"run-1","tool":"t"}' | sha256sum
        let text = br#"{"agent":"expense-bot","args":{"a":1},"arguments":{"a":1},"requestId":"r1","runId":"run-1","tool":"t"}"#;
        assert_eq!(of(named, "t", &args, &args), hex(&Sha256::digest(text)));
        let both = Ids {
            conversation: Some("c-7"),
            ..named
        };
        let text = br#"{"agent":"expense-bot","args":{"a":1},"arguments":{"a":1},"conversation":"c-7","requestId":"r1","runId":"run-1","tool":"t"}"#;
        assert_eq!(of(both, "t", &args, &args), hex(&Sha256::digest(text)));
        let all = Ids {
            principal: Some("ada"),
            ..both
        };
        let text = br#"{"agent":"expense-bot","args":{"a":1},"arguments":{"a":1},"conversation":"c-7","principal":"ada","requestId":"r1","runId":"run-1","tool":"t"}"#;
        assert_eq!(of(all, "t", &args, &args), hex(&Sha256::digest(text)));
        let for_bob = Ids {
            principal: Some("bob"),
            ..both
        };
        assert_ne!(of(all, "t", &args, &args), of(for_bob, "t", &args, &args));
        assert_ne!(of(named, "t", &args, &args), of(IDS, "t", &args, &args));
        let renamed = Ids {
            agent: Some("other-bot"),
            ..IDS
        };
        assert_ne!(of(named, "t", &args, &args), of(renamed, "t", &args, &args));
    }

    /// RFC 8785's number samples (appendix B), and the respellings of one value.
    #[test]
    fn rule_numbers_are_written_as_ecmascript_writes_them() {
        use super::ecmascript_number as es;
        for (x, text) in [
            (5.0, "5"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (123.456, "123.456"),
            (-1.5e-10, "-1.5e-10"),
            (4.503_599_627_370_496e15, "4503599627370496"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (1.797_693_134_862_315_7e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (333_333_333.333_333_3, "333333333.3333333"),
            (0.000_001_234_5, "0.0000012345"),
            (1.234_5e-7, "1.2345e-7"),
        ] {
            assert_eq!(es(x), text, "{x:e}");
        }
    }

    #[test]
    fn every_spelling_of_a_number_writes_one_rule_form() {
        let form = |text: &str| {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut out = Vec::new();
            super::rule_form(&v, &mut out);
            String::from_utf8(out).unwrap()
        };
        for spelling in ["5", "5.0", "5e0", "50e-1", "0.5e1", "5.000", "5E+0"] {
            assert_eq!(
                form(&format!(r#"{{"amount":{spelling},"to":"Bob"}}"#)),
                r#"{"amount":5,"to":"Bob"}"#
            );
        }
        assert_eq!(form("[-0.0, 0.0, -0, 1E2, 1e-7]"), "[0,0,0,100,1e-7]");
        // integers keep every digit: distinct integers beyond 2^53 stay distinct
        assert_eq!(form("9007199254740993"), "9007199254740993");
        assert_ne!(form("9007199254740993"), form("9007199254740992"));
        assert_eq!(form("18446744073709551615"), "18446744073709551615");
    }

    #[test]
    fn the_key_is_sha256_of_the_nul_separated_parts() {
        // printf 'toolnexus-idempotency-v1\0run-1\0002\0call_0\0' | sha256sum
        let expected = {
            let mut h = Sha256::new();
            h.update(b"toolnexus-idempotency-v1\x00run-1\x002\x00call_0\x00");
            hex(&h.finalize())
        };
        assert_eq!(idempotency_key("run-1", 2, "call_0"), expected);
        assert_eq!(expected.len(), 64);
        assert_ne!(idempotency_key("run-1", 3, "call_0"), expected);
        assert_ne!(idempotency_key("run-2", 2, "call_0"), expected);
        assert_ne!(idempotency_key("run-1", 2, "call_1"), expected);
        // the separator keeps parts from running into each other
        assert_ne!(
            idempotency_key("run-1", 2, "0call"),
            idempotency_key("run-12", 0, "call")
        );
    }
}
