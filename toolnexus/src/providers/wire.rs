//! What both wire formats share: tool-call arguments, usage fields, error bodies.

use serde_json::{Map, Value};

use crate::error::Error;
use crate::model::Usage;
use crate::result::ContentPart;

/// Tool-call arguments as the model sent them (a JSON string): the parsed value, `{}` for an
/// empty string, or the raw string itself when it is not valid JSON (the loop then tells the
/// model what is wrong).
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    crate::json_text::from_peer_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// The id of the reply's call `index` that came without one: `call_<16 hex digits>_<index>`,
/// the hex digits the same for every call of one reply and distinct for every reply of the
/// process, so filled ids never repeat across turns (a transcript's tool results match their
/// calls by id).
pub(crate) fn filled_call_id(stem: &std::cell::OnceCell<String>, index: usize) -> String {
    format!("{}_{index}", stem.get_or_init(call_stem))
}

/// Arguments as OpenAI wants them: a JSON string (a raw, unparsable string is sent back as it
/// came).
pub(crate) fn arguments_string(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// Usage from `prompt_tokens`/`completion_tokens` or `input_tokens`/`output_tokens` (plus
/// Anthropic's cache token counts, which are prompt tokens too); `None` when the object has
/// none of them.
pub(crate) fn usage(value: &Value) -> Option<Usage> {
    let obj = value.as_object()?;
    let field = |k: &str| obj.get(k).and_then(Value::as_u64);
    let prompt = field("prompt_tokens").or_else(|| field("input_tokens"));
    let completion = field("completion_tokens").or_else(|| field("output_tokens"));
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let cached = field("cache_creation_input_tokens")
        .unwrap_or(0)
        .saturating_add(field("cache_read_input_tokens").unwrap_or(0));
    Some(Usage::new(
        prompt.unwrap_or(0).saturating_add(cached),
        completion.unwrap_or(0),
    ))
}

/// `Ok` when a streamed reply reached its end marker; else the error for a stream the
/// provider closed early.
pub(crate) fn require_finished(finished: bool) -> Result<(), Error> {
    if finished {
        Ok(())
    } else {
        Err(Error::transport(
            "the provider closed the stream before finishing its reply",
        ))
    }
}

/// The provider's own message from an error body: `{"error":{"message"}}` (both styles),
/// `{"error":"..."}` (Ollama), `{"message":"..."}`; else the body text; else `fallback`. The
/// text is whole: [`Secrets::clean`](super::key::Secrets::clean) redacts it, then cuts it.
pub(crate) fn error_message(body: &str, fallback: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let found = v
            .pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str);
        if let Some(message) = found {
            return message.to_owned();
        }
    }
    let body = body.trim();
    if body.is_empty() {
        fallback.to_owned()
    } else {
        body.to_owned()
    }
}

static REPLIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The stem of the ids a provider's reply gives the tool calls that came without one:
/// `call_<16 lowercase hex digits>`, the call's position in the reply then appended
/// (`call_<stem>_<index>`). Distinct for every reply in the process (a process-wide counter
/// through a bijective 64-bit mix keyed once per process from the OS entropy source), so ids
/// filled on different turns of a run, or in different runs, never repeat; and, keyed
/// randomly, unlikely to meet another process's.
pub(crate) fn call_stem() -> String {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let key = *KEY.get_or_init(|| crate::id::random_u64(0));
    let n = REPLIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("call_{:016x}", mix(n ^ key))
}

/// SplitMix64's finalizer: a bijection of `u64`, so distinct inputs give distinct outputs.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What a provider that has no content block for a part sends instead.
impl ContentPart {
    /// The text of an embedded text resource (`resource` with a `text` key).
    pub(crate) fn embedded_text(&self) -> Option<&str> {
        if self.kind != crate::result::PART_RESOURCE {
            return None;
        }
        self.extra.get("text").and_then(serde_json::Value::as_str)
    }

    /// What a provider that has no content block for this part sends instead, as text:
    /// `[audio part (audio/ogg) not supported by this provider]`.
    pub(crate) fn placeholder(&self) -> String {
        let mime = self
            .mime_type
            .as_ref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        let url = self
            .url
            .as_ref()
            .map(|u| format!(" at {u}"))
            .unwrap_or_default();
        format!(
            "[{} part{mime}{url} not supported by this provider]",
            self.kind
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_parse_or_stay_raw() {
        assert_eq!(parse_arguments(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(parse_arguments("  "), json!({}));
        assert_eq!(parse_arguments("{oops"), json!("{oops"));
        assert_eq!(arguments_string(&json!({"a": 1})), r#"{"a":1}"#);
        assert_eq!(arguments_string(&json!("{oops")), "{oops");
    }

    #[test]
    fn usage_from_either_naming() {
        assert_eq!(
            usage(&json!({"prompt_tokens": 3, "completion_tokens": 4})),
            Some(Usage::new(3, 4))
        );
        assert_eq!(
            usage(&json!({"input_tokens": 5, "output_tokens": 6, "cache_read_input_tokens": 2})),
            Some(Usage::new(7, 6))
        );
        assert_eq!(usage(&json!({"total_tokens": 9})), None);
        assert_eq!(usage(&Value::Null), None);
    }

    #[test]
    fn error_messages_from_known_shapes() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad model","type":"x"}}"#, "f"),
            "bad model"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"}}"#,
                "f"
            ),
            "max_tokens: required"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#, "f"),
            "model not found"
        );
        assert_eq!(error_message(r#"{"message":"nope"}"#, "f"), "nope");
        assert_eq!(error_message("upstream down\n", "f"), "upstream down");
        assert_eq!(error_message("", "Bad Gateway"), "Bad Gateway");
        // whole: the cut comes after the redaction
        let long = "é".repeat(400);
        assert_eq!(error_message(&long, "f"), long);
    }
    #[test]
    fn call_stems_are_distinct_and_well_formed() {
        let stems: std::collections::HashSet<String> =
            (0..1000).map(|_| super::call_stem()).collect();
        assert_eq!(stems.len(), 1000);
        for stem in &stems {
            let hex = stem.strip_prefix("call_").unwrap();
            assert_eq!(hex.len(), 16, "{stem}");
            assert!(
                hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{stem}"
            );
        }
    }

    /// The attack: a remembered exact-call rule dodged by a model spelling the remembered
    /// number (`3e25`) another way, some of which a `serde_json` without `float_roundtrip` (a
    /// user's build) reads one unit off. Both providers' calls carry the exact value, so every
    /// spelling is one rule key. Runs in `cargo test -p toolnexus --features http`, where
    /// nothing turns `float_roundtrip` on.
    #[test]
    fn a_remembered_call_is_not_dodged_by_a_provider_call_respelling_its_number() {
        use crate::providers::{ProviderStyle, parse_reply_body};
        use crate::remember::call_fingerprint;
        let key = call_fingerprint("pay", &json!({"amount": 3e25, "to": "Bob"}));
        for spelling in crate::json_text::SPELLINGS_OF_3E25 {
            let args = format!(r#"{{"amount":{spelling},"to":"Bob"}}"#);
            // OpenAI: the arguments are a JSON string, read by `parse_arguments`
            let openai = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "pay", "arguments": args}}
            ]}}]});
            // Anthropic: the input is an object inside the reply body
            let anthropic = format!(
                r#"{{"content":[{{"type":"tool_use","id":"c1","name":"pay","input":{args}}}]}}"#
            );
            for (style, body) in [
                (ProviderStyle::OpenAi, openai.to_string()),
                (ProviderStyle::Anthropic, anthropic),
            ] {
                let turn = parse_reply_body(style, body.as_bytes()).expect("a reply");
                let read = &turn.tool_calls[0].arguments;
                assert_eq!(
                    read["amount"].as_f64().map(f64::to_bits),
                    Some(3e25_f64.to_bits()),
                    "{style:?}: {spelling} read as {read}"
                );
                assert_eq!(call_fingerprint("pay", read), key, "{style:?}: {spelling}");
            }
        }
    }
}
