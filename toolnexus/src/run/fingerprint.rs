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
/// (lowercase hex) of the canonical JSON of `{"args": <args>, "tool": <tool>}`.
pub(crate) fn call(tool: &str, args: &Value) -> String {
    let mut bytes = Vec::with_capacity(96);
    bytes.extend_from_slice(b"{\"args\":");
    canonical(args, &mut bytes);
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
