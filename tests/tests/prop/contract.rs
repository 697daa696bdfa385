//! Property tests of the wire contract: `Request`, `Answer` and `ToolResult` survive a JSON
//! round trip byte-identically, and a `Request` built through the public API serializes with
//! the pinned key order (`id, kind, prompt, url?, data?, expiresAt?`) and no `null`s.

use std::time::Duration;

use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolnexus::{
    Answer, ContentPart, Request, ToolResult, request::DeclineReason, result::Metadata,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any JSON value (finite numbers; nulls included), nested a little.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("[a-zA-Z_]{1,8}", json()), 0..4)
        .prop_map(|entries| entries.into_iter().collect())
}

/// Text, RFC 3339 or not (a deserialized request may hold any `expiresAt` string).
fn expiry() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        (0u64..4_102_444_800).prop_map(|secs| {
            let at = std::time::UNIX_EPOCH + Duration::from_secs(secs);
            Request::input("p").with_expires_at(at).expires_at.unwrap()
        }),
    ]
}

/// A request as a host may receive it in JSON.
fn request() -> impl Strategy<Value = Request> {
    (
        any::<String>(),
        any::<String>(),
        any::<String>(),
        proptest::option::of(any::<String>()),
        proptest::option::of(object()),
        proptest::option::of(expiry()),
    )
        .prop_map(|(id, kind, prompt, url, data, expires)| {
            let mut v = serde_json::json!({"id": id, "kind": kind, "prompt": prompt});
            if let Some(url) = url {
                v["url"] = Value::String(url);
            }
            if let Some(data) = data {
                v["data"] = Value::Object(data);
            }
            if let Some(expires) = expires {
                v["expiresAt"] = Value::String(expires);
            }
            serde_json::from_value(v).expect("a request")
        })
}

fn reason() -> impl Strategy<Value = DeclineReason> {
    prop_oneof![
        Just(DeclineReason::Declined),
        Just(DeclineReason::Cancelled),
        Just(DeclineReason::Expired),
        // any other word another port sends; `from` keeps the known words known
        any::<String>().prop_map(|s| DeclineReason::from(s.as_str())),
    ]
}

/// A content part: any kind, optional data / mimeType / url, and keys of another port.
fn part() -> impl Strategy<Value = ContentPart> {
    (
        any::<String>(),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        object(),
    )
        .prop_map(|(kind, data, mime, url, extra)| {
            let mut v = serde_json::json!({"type": kind});
            if let Some(data) = data {
                v["data"] = Value::String(data);
            }
            if let Some(mime) = mime {
                v["mimeType"] = Value::String(mime);
            }
            if let Some(url) = url {
                v["url"] = Value::String(url);
            }
            for (k, x) in extra {
                if !["type", "data", "mimeType", "url"].contains(&k.as_str()) {
                    v[k] = x;
                }
            }
            serde_json::from_value(v).expect("a part")
        })
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        (any::<String>(), json()).prop_map(|(id, data)| Answer::accept(id, data)),
        any::<String>().prop_map(Answer::ok),
        (any::<String>(), reason()).prop_map(|(id, r)| Answer::decline(id, r)),
        (
            any::<String>(),
            any::<bool>(),
            json(),
            proptest::option::of(reason())
        )
            .prop_map(|(id, ok, data, reason)| {
                let mut v = serde_json::json!({"id": id, "ok": ok, "data": data});
                if let Some(reason) = reason {
                    v["reason"] = serde_json::to_value(reason).unwrap();
                }
                serde_json::from_value(v).expect("an answer")
            }),
    ]
}

fn tool_result() -> impl Strategy<Value = ToolResult> {
    (
        any::<String>(),
        any::<bool>(),
        proptest::option::of(request()),
        object(),
        0..3u8,
        proptest::collection::vec(part(), 0..3),
    )
        .prop_map(
            |(output, is_error, pending, extra, shape, parts)| match shape {
                0 => ToolResult {
                    output,
                    is_error,
                    metadata: None,
                    parts,
                },
                1 => {
                    pending.map_or_else(|| ToolResult::error(output.clone()), ToolResult::suspended)
                }
                _ => {
                    let mut metadata = Metadata::default();
                    metadata.pending = pending.map(Box::new);
                    metadata.extra = extra.into_iter().filter(|(k, _)| k != "pending").collect();
                    ToolResult {
                        output,
                        is_error,
                        metadata: Some(Box::new(metadata)),
                        parts,
                    }
                }
            },
        )
}

/// `value` -> JSON -> value -> JSON: equal values, identical bytes (read back exactly by
/// `toolnexus::limits::from_json_str`: `serde_json::from_str` reads some floats one unit off
/// unless its `float_roundtrip` feature is on, which toolnexus does not force on anyone).
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
) -> Result<(), TestCaseError> {
    let once = serde_json::to_string(value).unwrap();
    let back: T = toolnexus::limits::from_json_str(&once).unwrap();
    prop_assert_eq!(&back, value);
    prop_assert_eq!(serde_json::to_string(&back).unwrap(), once);
    // and through a `Value` (what a host storing JSON documents does)
    let via_value: T = serde_json::from_value(serde_json::to_value(value).unwrap()).unwrap();
    prop_assert_eq!(&via_value, value);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn requests_round_trip_byte_identically(request in request()) {
        round_trip(&request)?;
    }

    #[test]
    fn answers_round_trip_byte_identically(answer in answer()) {
        round_trip(&answer)?;
    }

    #[test]
    fn tool_results_round_trip_byte_identically(result in tool_result()) {
        round_trip(&result)?;
    }

    #[test]
    fn requests_built_through_the_api_have_the_pinned_key_order_and_no_nulls(
        kind in 0..6u8,
        text in any::<String>(),
        id in proptest::option::of(any::<String>()),
        prompt in proptest::option::of(any::<String>()),
        url in proptest::option::of(any::<String>()),
        data in proptest::option::of(object()),
        entries in prop::collection::vec(("[a-z]{1,6}", json()), 0..3),
        ttl in proptest::option::of(0u64..100_000_000),
    ) {
        let mut request = match kind {
            0 => Request::input(text),
            1 => Request::approval(text),
            2 => Request::authorization(text),
            3 => Request::question(text),
            4 => Request::custom("review", text),
            _ => Request::new("input", text),
        };
        if let Some(id) = id {
            request = request.with_id(id);
        }
        if let Some(prompt) = prompt {
            request = request.with_prompt(prompt);
        }
        if let Some(url) = url {
            request = request.with_url(url);
        }
        if let Some(data) = data {
            request = request.with_data(data);
        }
        for (key, value) in entries {
            request = request.with_data_entry(key, value);
        }
        if let Some(ttl) = ttl {
            request = request.expires_in(Duration::from_secs(ttl));
        }
        let text = serde_json::to_string(&request).unwrap();
        let Value::Object(map) = serde_json::from_str::<Value>(&text).unwrap() else {
            panic!("a request is an object: {text}");
        };
        let keys = toolnexus_tests::keys_in_order(&text);
        let pinned = ["id", "kind", "prompt", "url", "data", "expiresAt"];
        let expected: Vec<&str> = pinned
            .iter()
            .copied()
            .filter(|k| match *k {
                "url" => request.url.is_some(),
                "data" => request.data.is_some(),
                "expiresAt" => request.expires_at.is_some(),
                _ => true,
            })
            .collect();
        prop_assert_eq!(keys, expected);
        for (key, value) in &map {
            prop_assert!(!value.is_null(), "`{}` is null in {}", key, text);
        }
        round_trip(&request)?;
    }
}
