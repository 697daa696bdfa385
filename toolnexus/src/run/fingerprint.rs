//! The fingerprint of a halted call: what binds an answer to the call a human was asked about.
//!
//! SHA-256 (lowercase hex) of the canonical JSON of
//! `{"args": <the arguments the tool ran with>, "arguments": <the arguments as the model sent
//! them>, "tool": <the tool's name>}`. Canonical JSON here: object keys sorted by code point
//! at every level, no whitespace, strings and numbers as `serde_json` writes them. The two
//! argument values differ only when a `before_tool` hook rewrote the arguments (or the model
//! sent them as a JSON string); both are bound, so neither copy in a record can be changed.
//!
//! Also the idempotency key of a call ([`idempotency_key`]), the same in every process that
//! runs it.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::util::hex;

/// The fingerprint of the call of `tool` the model made with `arguments` and the tool ran with
/// `args`.
pub(crate) fn of(tool: &str, arguments: &Value, args: &Value) -> String {
    let mut bytes = Vec::with_capacity(128);
    bytes.extend_from_slice(b"{\"args\":");
    canonical(args, &mut bytes);
    bytes.extend_from_slice(b",\"arguments\":");
    canonical(arguments, &mut bytes);
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
                canonical(item, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        // scalars: serde_json's own text (writing into a Vec cannot fail)
        scalar => out.extend_from_slice(scalar.to_string().as_bytes()),
    }
}

fn string(s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(Value::from(s).to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use sha2::{Digest, Sha256};

    use super::{hex, idempotency_key, of};

    #[test]
    fn key_order_and_whitespace_do_not_change_the_fingerprint() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "s"}"#).unwrap();
        let b = json!({"a": "s", "b": [1, {"x": 1, "y": 2}]});
        assert_eq!(of("t", &a, &a), of("t", &b, &b));
        assert_eq!(of("t", &a, &a).len(), 64);
    }

    #[test]
    fn the_tool_and_both_argument_copies_are_bound() {
        let args = json!({"path": "/tmp/x"});
        let base = of("delete", &args, &args);
        assert_ne!(base, of("delete_all", &args, &args));
        assert_ne!(base, of("delete", &json!({"path": "/etc"}), &args));
        assert_ne!(base, of("delete", &args, &json!({"path": "/etc"})));
        assert_ne!(base, of("delete", &args, &json!({"path": ["/tmp/x"]})));
    }

    #[test]
    fn the_fingerprint_is_sha256_of_the_canonical_form() {
        // sha256 of `{"args":{"a":1},"arguments":{"a":1},"tool":"t"}`, computed independently
        // (`printf '%s' '{"args":{"a":1},"arguments":{"a":1},"tool":"t"}' | sha256sum`)
        assert_eq!(
            of("t", &json!({"a": 1}), &json!({"a": 1})),
            "75ae5fad9bfa8daadd34ca59bd3651559a175e29cafaf6b57705c08948aa242a"
        );
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
