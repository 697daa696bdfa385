//! The wire types of contract sections 1 and 2: pinned bytes, round trips, rejection of
//! incomplete requests, `pending_of`, request ids, answer constructors and typed answer data.

use std::collections::HashSet;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use toolnexus::{
    Answer, Request, ToolResult, pending_of, request::DeclineReason, request::KIND_APPROVAL,
    request::KIND_AUTHORIZATION, request::KIND_INPUT, request::KIND_QUESTION,
    request::new_request_id,
};

const REQUEST_FULL: &str = r#"{"id":"r1","kind":"input","prompt":"p","url":"u","data":{"k":"v"},"expiresAt":"2026-01-01T00:00:00Z"}"#;
const REQUEST_AUTHORIZATION: &str =
    r#"{"id":"r1","kind":"authorization","prompt":"Log in","url":"https://x/login"}"#;
const ANSWER_WITH_DATA: &str = r#"{"id":"r1","ok":true,"data":{"k":"v"}}"#;
const ANSWER_WITHOUT_DATA: &str = r#"{"id":"r1","ok":true}"#;

fn data_kv() -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("k".to_owned(), json!("v"));
    data
}

#[test]
fn pinned_request_full_is_built_byte_exact() {
    let expires = UNIX_EPOCH + Duration::from_secs(1_767_225_600); // 2026-01-01T00:00:00Z
    let req = Request::input("p")
        .with_id("r1")
        .with_url("u")
        .with_data(data_kv())
        .with_expires_at(expires);
    assert_eq!(serde_json::to_string(&req).unwrap(), REQUEST_FULL);
}

#[test]
fn pinned_request_authorization_is_built_byte_exact() {
    let req = Request::authorization("https://x/login")
        .with_id("r1")
        .with_prompt("Log in");
    assert_eq!(serde_json::to_string(&req).unwrap(), REQUEST_AUTHORIZATION);
}

#[test]
fn pinned_answers_are_built_byte_exact() {
    let with_data = Answer::accept("r1", json!({"k": "v"}));
    assert_eq!(serde_json::to_string(&with_data).unwrap(), ANSWER_WITH_DATA);
    let without_data = Answer::ok("r1");
    assert_eq!(
        serde_json::to_string(&without_data).unwrap(),
        ANSWER_WITHOUT_DATA
    );
}

#[test]
fn pinned_bytes_round_trip_byte_identical() {
    let req: Request = serde_json::from_str(REQUEST_FULL).unwrap();
    assert_eq!(req.id, "r1");
    assert_eq!(req.kind, "input");
    assert_eq!(req.prompt, "p");
    assert_eq!(req.url.as_deref(), Some("u"));
    assert_eq!(req.data.as_deref(), Some(&data_kv()));
    assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(serde_json::to_string(&req).unwrap(), REQUEST_FULL);

    let req: Request = serde_json::from_str(REQUEST_AUTHORIZATION).unwrap();
    assert_eq!(req.data, None);
    assert_eq!(req.expires_at, None);
    assert_eq!(serde_json::to_string(&req).unwrap(), REQUEST_AUTHORIZATION);

    for pinned in [ANSWER_WITH_DATA, ANSWER_WITHOUT_DATA] {
        let answer: Answer = serde_json::from_str(pinned).unwrap();
        assert_eq!(serde_json::to_string(&answer).unwrap(), pinned);
    }
}

#[test]
fn data_survives_a_round_trip_byte_for_byte() {
    // nested, with every JSON type; the keys inside `data` are a `serde_json` map's, so they come
    // back in its order: sorted, or as read when another crate turns on its `preserve_order`
    // (a sorted input comes back byte for byte either way); the contract's own keys keep the
    // contract's order in every build
    let raw = r#"{"id":"r9","kind":"order","prompt":"Confirm?","data":{"alpha":{"a":true,"b":null,"y":[3,1,2]},"mid":"x","schema":{"properties":{"note":{"type":"string"},"qty":{"type":"integer"}},"type":"object"},"zeta":1}}"#;
    let req: Request = serde_json::from_str(raw).unwrap();
    assert_eq!(serde_json::to_string(&req).unwrap(), raw);

    let answer_raw = r#"{"id":"r9","ok":true,"data":{"a":{"c":2,"q":1},"z":0}}"#;
    let answer: Answer = serde_json::from_str(answer_raw).unwrap();
    assert_eq!(serde_json::to_string(&answer).unwrap(), answer_raw);

    let declined_raw = r#"{"id":"r9","ok":false,"reason":"expired"}"#;
    let declined: Answer = serde_json::from_str(declined_raw).unwrap();
    assert_eq!(declined.reason, Some(DeclineReason::Expired));
    assert_eq!(serde_json::to_string(&declined).unwrap(), declined_raw);
}

#[test]
fn a_request_without_id_kind_or_prompt_is_rejected_naming_the_key() {
    let cases = [
        (
            r#"{"kind":"input","prompt":"p"}"#,
            "missing field `id` at line 1 column 29",
        ),
        (
            r#"{"id":"r1","prompt":"p"}"#,
            "missing field `kind` at line 1 column 24",
        ),
        (
            r#"{"id":"r1","kind":"input"}"#,
            "missing field `prompt` at line 1 column 26",
        ),
    ];
    for (raw, expected) in cases {
        let err = serde_json::from_str::<Request>(raw).unwrap_err();
        assert_eq!(err.to_string(), expected, "for {raw}");
    }
    // the same from a Value (no position)
    let err = serde_json::from_value::<Request>(json!({"id": "r1", "kind": "input"})).unwrap_err();
    assert_eq!(err.to_string(), "missing field `prompt`");
}

#[test]
fn absent_optional_keys_are_omitted_never_null() {
    let req = Request::approval("Delete 3 files?").with_id("r2");
    assert_eq!(
        serde_json::to_string(&req).unwrap(),
        r#"{"id":"r2","kind":"approval","prompt":"Delete 3 files?"}"#
    );
    let declined = Answer::decline("r2", DeclineReason::Declined);
    assert_eq!(
        serde_json::to_string(&declined).unwrap(),
        r#"{"id":"r2","ok":false,"reason":"declined"}"#
    );
    // a null `data` reads as absent
    let answer: Answer = serde_json::from_str(r#"{"id":"r2","ok":true,"data":null}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&answer).unwrap(),
        r#"{"id":"r2","ok":true}"#
    );
}

#[test]
fn request_builders_for_known_and_custom_kinds() {
    let cases = [
        (Request::input("Which city?"), KIND_INPUT, "Which city?"),
        (Request::approval("Pay 5 EUR?"), KIND_APPROVAL, "Pay 5 EUR?"),
        (Request::question("Pick one"), KIND_QUESTION, "Pick one"),
        (
            Request::custom("captcha", "Solve it"),
            "captcha",
            "Solve it",
        ),
        (Request::new("review", "Look"), "review", "Look"),
    ];
    for (req, kind, prompt) in cases {
        assert_eq!((req.kind.as_str(), req.prompt.as_str()), (kind, prompt));
        assert_eq!((req.url.clone(), req.data.clone()), (None, None));
        assert_eq!(req.expires_at, None);
    }
    assert_eq!(
        (KIND_INPUT, KIND_APPROVAL, KIND_AUTHORIZATION, KIND_QUESTION),
        ("input", "approval", "authorization", "question")
    );

    let auth = Request::authorization("https://x/login");
    assert_eq!(auth.kind, "authorization");
    assert_eq!(auth.prompt, "Login required: https://x/login");
    assert_eq!(auth.url.as_deref(), Some("https://x/login"));

    let with_entry = Request::input("p")
        .with_id("r3")
        .with_data_entry("b", json!(1))
        .with_data_entry("a", json!(2));
    assert_eq!(
        serde_json::to_string(&with_entry).unwrap(),
        r#"{"id":"r3","kind":"input","prompt":"p","data":{"a":2,"b":1}}"#
    );
}

#[test]
fn suspension_output_follows_the_kind() {
    let cases = [
        (Request::input("Which city?"), "Input required: Which city?"),
        (Request::approval("Pay?"), "Approval required: Pay?"),
        (
            Request::authorization("https://x/login").with_prompt("Connect GitHub"),
            "Login required: https://x/login",
        ),
        (Request::question("Color?"), "Color?"),
        (Request::custom("captcha", "Solve it"), "Solve it"),
    ];
    for (req, output) in cases {
        assert_eq!(ToolResult::suspended(req).output, output);
    }
}

#[test]
fn expiry_is_rfc3339_utc_and_checked() {
    let at = UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let req = Request::input("p").with_expires_at(at);
    assert_eq!(req.expires_at.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(req.expires_at_time(), Some(at));
    assert!(!req.is_expired_at(at));
    assert!(req.is_expired_at(at + Duration::from_secs(1)));
    assert!(!Request::input("p").is_expired_at(at));
    let mut broken = Request::input("p");
    broken.expires_at = Some("tomorrow".to_owned());
    assert!(broken.is_expired_at(UNIX_EPOCH));
}

#[test]
fn pending_of_on_suspended_plain_and_failed_results() {
    let req = Request::input("Which city?").with_id("r1");
    let suspended = ToolResult::suspended(req.clone());
    assert_eq!(pending_of(&suspended), Some(&req));
    assert_eq!(suspended.pending(), Some(&req));
    assert!(suspended.is_error);
    assert!(suspended.is_pending());
    assert!(!suspended.is_failure());
    assert_eq!(
        serde_json::to_string(&suspended).unwrap(),
        r#"{"output":"Input required: Which city?","isError":true,"metadata":{"pending":{"id":"r1","kind":"input","prompt":"Which city?"}}}"#
    );

    let plain = ToolResult::success("42");
    assert_eq!(pending_of(&plain), None);
    assert!(!plain.is_pending());
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        r#"{"output":"42","isError":false}"#
    );

    let failed = ToolResult::error("boom");
    assert_eq!(pending_of(&failed), None);
    assert!(failed.is_failure());
    assert_eq!(
        serde_json::to_string(&failed).unwrap(),
        r#"{"output":"boom","isError":true}"#
    );

    // metadata without `pending` is not a suspension
    let tagged = ToolResult::error("boom").with_metadata("attempts", json!(3));
    assert_eq!(pending_of(&tagged), None);
    assert_eq!(
        serde_json::to_string(&tagged).unwrap(),
        r#"{"output":"boom","isError":true,"metadata":{"attempts":3}}"#
    );

    // a suspension read back from the wire
    let wire = r#"{"output":"Login required: https://x/login","isError":true,"metadata":{"pending":{"id":"r1","kind":"authorization","prompt":"Log in","url":"https://x/login"},"trace":"t1"}}"#;
    let read: ToolResult = serde_json::from_str(wire).unwrap();
    assert_eq!(
        pending_of(&read).unwrap().url.as_deref(),
        Some("https://x/login")
    );
    assert_eq!(serde_json::to_string(&read).unwrap(), wire);
    assert_eq!(read.into_pending().unwrap().id, "r1");
}

/// `sus-<ms>-<counter>-<random suffix: 16 lowercase hex digits, 64 bits>`.
fn assert_id_format(id: &str) -> (u128, u64) {
    let rest = id.strip_prefix("sus-").expect("starts with sus-");
    let mut parts = rest.split('-');
    let (millis, counter, suffix) = (
        parts.next().unwrap(),
        parts.next().expect("a counter"),
        parts.next().expect("a random suffix"),
    );
    assert_eq!(parts.next(), None, "{id}");
    assert!(millis.chars().all(|c| c.is_ascii_digit()), "{id}");
    assert!(counter.chars().all(|c| c.is_ascii_digit()), "{id}");
    assert_eq!(suffix.len(), 16, "{id}");
    assert!(
        suffix.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
        "{id}"
    );
    (millis.parse().unwrap(), counter.parse().unwrap())
}

#[test]
fn request_ids_have_the_contract_format() {
    let before = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let id = new_request_id();
    let after = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let (millis, counter) = assert_id_format(&id);
    assert!(before <= millis && millis <= after, "{id}");
    assert!(counter >= 1);
    let (_, next) = assert_id_format(&new_request_id());
    assert!(next > counter);
    // builders draw fresh ids
    let (a, b) = (Request::input("p"), Request::input("p"));
    assert_ne!(a.id, b.id);
    assert_id_format(&a.id);
}

#[test]
fn request_ids_are_unique_across_threads() {
    let handles: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(|| (0..500).map(|_| Request::input("p").id).collect::<Vec<_>>())
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.join().unwrap());
    }
    assert_eq!(all.len(), 4000);
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), 4000);
    let counters: HashSet<u64> = all.iter().map(|id| assert_id_format(id).1).collect();
    assert_eq!(counters.len(), 4000, "the counter alone never repeats");
}

#[test]
fn answer_constructors() {
    let req = Request::input("Which city?").with_id("r7");
    let accepted = req.accept("Oslo");
    assert_eq!(
        serde_json::to_string(&accepted).unwrap(),
        r#"{"id":"r7","ok":true,"data":"Oslo"}"#
    );
    let declined = req.decline(DeclineReason::Cancelled);
    assert_eq!(
        serde_json::to_string(&declined).unwrap(),
        r#"{"id":"r7","ok":false,"reason":"cancelled"}"#
    );
    // data that serializes to null is absent
    assert_eq!(
        serde_json::to_string(&Answer::accept("r7", ())).unwrap(),
        r#"{"id":"r7","ok":true}"#
    );
    assert_eq!(
        serde_json::to_string(&Answer::accept("r7", Option::<u8>::None)).unwrap(),
        r#"{"id":"r7","ok":true}"#
    );
    assert_eq!(
        [
            DeclineReason::Declined,
            DeclineReason::Cancelled,
            DeclineReason::Expired
        ]
        .map(|r| r.to_string()),
        ["declined", "cancelled", "expired"]
    );
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Trip {
    city: String,
    nights: u8,
    legs: Vec<Leg>,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Leg {
    from: String,
}

#[test]
fn data_as_reads_typed_data() {
    let answer = Answer::accept(
        "r1",
        json!({"city": "Oslo", "nights": 2, "legs": [{"from": "AMS"}]}),
    );
    assert_eq!(
        answer.data_as::<Trip>().unwrap(),
        Trip {
            city: "Oslo".to_owned(),
            nights: 2,
            legs: vec![Leg {
                from: "AMS".to_owned()
            }]
        }
    );
    assert_eq!(
        Answer::accept("r1", "Oslo").data_as::<String>().unwrap(),
        "Oslo"
    );
    assert_eq!(Answer::ok("r1").data_as::<Option<String>>().unwrap(), None);
}

#[test]
fn data_as_errors_name_the_field_and_why() {
    let wrong_type = Answer::accept("r1", json!({"city": "Oslo", "nights": "two", "legs": []}));
    let err = wrong_type.data_as::<Trip>().unwrap_err();
    assert_eq!(err.path(), "nights");
    assert_eq!(err.message(), r#"invalid type: string "two", expected u8"#);
    assert_eq!(
        err.to_string(),
        r#"invalid answer data at `nights`: invalid type: string "two", expected u8"#
    );

    let nested = Answer::accept(
        "r1",
        json!({"city": "Oslo", "nights": 1, "legs": [{"from": "AMS"}, {"to": "OSL"}]}),
    );
    assert_eq!(
        nested.data_as::<Trip>().unwrap_err().to_string(),
        "invalid answer data at `legs[1]`: missing field `from`"
    );

    let out_of_range = Answer::accept("r1", json!({"city": "Oslo", "nights": 300, "legs": []}));
    assert_eq!(
        out_of_range.data_as::<Trip>().unwrap_err().to_string(),
        "invalid answer data at `nights`: invalid value: integer `300`, expected u8"
    );

    let absent = Answer::ok("r1");
    assert_eq!(
        absent.data_as::<Trip>().unwrap_err().to_string(),
        "invalid answer data at `.`: invalid type: null, expected struct Trip"
    );
}

// --- content parts (contract section 1) ---------------------------------------------------

#[test]
fn a_result_without_parts_keeps_its_bytes_and_parts_come_last() {
    use toolnexus::ContentPart;

    let plain = ToolResult::success("42");
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        r#"{"output":"42","isError":false}"#
    );
    let full = ToolResult::success("chart")
        .with_metadata("k", json!("v"))
        .with_part(ContentPart::image("aGk=", "image/png"))
        .with_part(ContentPart::audio("UklGRg==", "audio/wav"))
        .with_part(ContentPart::url("file", "https://x/r.pdf").with_mime_type("application/pdf"));
    assert_eq!(
        serde_json::to_string(&full).unwrap(),
        r#"{"output":"chart","isError":false,"metadata":{"k":"v"},"parts":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},{"type":"file","mimeType":"application/pdf","url":"https://x/r.pdf"}]}"#
    );
    // an empty parts array reads as no parts and is omitted again
    let empty: ToolResult =
        serde_json::from_str(r#"{"output":"o","isError":false,"parts":[]}"#).unwrap();
    assert!(empty.parts.is_empty());
    assert_eq!(
        serde_json::to_string(&empty).unwrap(),
        r#"{"output":"o","isError":false}"#
    );
}

#[test]
fn parts_from_another_port_are_kept_with_unknown_kinds_and_keys() {
    let raw = r#"{"output":"o","isError":false,"parts":[{"type":"file","data":"JVBERg==","mimeType":"application/pdf","name":"r.pdf"},{"type":"video","url":"https://x/v.mp4","durationMs":1200}]}"#;
    let r: ToolResult = serde_json::from_str(raw).unwrap();
    assert_eq!(r.parts.len(), 2);
    assert_eq!(r.parts[0].kind, "file");
    assert_eq!(r.parts[0].data.as_deref(), Some("JVBERg=="));
    assert_eq!(r.parts[0].mime_type.as_deref(), Some("application/pdf"));
    assert_eq!(r.parts[0].extra.get("name"), Some(&json!("r.pdf")));
    assert_eq!(r.parts[1].kind, "video");
    assert_eq!(r.parts[1].url.as_deref(), Some("https://x/v.mp4"));
    assert_eq!(r.parts[1].extra.get("durationMs"), Some(&json!(1200)));
    assert_eq!(serde_json::to_string(&r).unwrap(), raw);
}

#[test]
fn a_part_without_a_type_is_refused() {
    let err = serde_json::from_str::<ToolResult>(
        r#"{"output":"o","isError":false,"parts":[{"data":"aGk=","mimeType":"image/png"}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("missing field `type`"), "{err}");
}

// --- answers: advisory reasons, free text (contract section 2) ----------------------------

#[test]
fn an_unknown_reason_parses_and_round_trips_byte_identically() {
    let raw = r#"{"id":"r1","ok":false,"reason":"timeout"}"#;
    let a: Answer = serde_json::from_str(raw).unwrap();
    assert!(!a.ok);
    assert_eq!(a.reason, Some(DeclineReason::Other("timeout".to_owned())));
    assert_eq!(a.reason.as_ref().unwrap().to_string(), "timeout");
    assert_eq!(serde_json::to_string(&a).unwrap(), raw);
    // the three known words still read as themselves
    for (word, reason) in [
        ("declined", DeclineReason::Declined),
        ("cancelled", DeclineReason::Cancelled),
        ("expired", DeclineReason::Expired),
    ] {
        let raw = format!(r#"{{"id":"r1","ok":false,"reason":"{word}"}}"#);
        let a: Answer = serde_json::from_str(&raw).unwrap();
        assert_eq!(a.reason, Some(reason));
        assert_eq!(serde_json::to_string(&a).unwrap(), raw);
    }
    // a reason that is not a string is still refused
    let err = serde_json::from_str::<Answer>(r#"{"id":"r1","ok":false,"reason":7}"#).unwrap_err();
    assert!(
        err.to_string().starts_with("invalid type: integer `7`"),
        "{err}"
    );
}

#[test]
fn a_free_text_answer_reads_as_its_text_in_either_shape() {
    let bare = Answer::accept("r1", "Oslo");
    let wrapped: Answer =
        serde_json::from_str(r#"{"id":"r1","ok":true,"data":{"output":"Oslo"}}"#).unwrap();
    assert_eq!(bare.data_as::<String>().unwrap(), "Oslo");
    assert_eq!(wrapped.data_as::<String>().unwrap(), "Oslo");
    let ctx = toolnexus::Context::new().with_answer(wrapped.clone());
    assert_eq!(
        ctx.answer_data::<String>().unwrap(),
        Some("Oslo".to_owned())
    );
    // the wrapped answer is still the object for a caller that wants the object
    assert_eq!(
        wrapped.data_as::<Value>().unwrap(),
        json!({"output": "Oslo"})
    );
    // other objects are not free text: the error is the original one
    let other = Answer::accept("r1", json!({"output": "Oslo", "extra": 1}));
    assert_eq!(
        other.data_as::<String>().unwrap_err().to_string(),
        "invalid answer data at `.`: invalid type: map, expected a string"
    );
    let not_text = Answer::accept("r1", json!({"output": 3}));
    assert_eq!(
        not_text.data_as::<String>().unwrap_err().to_string(),
        "invalid answer data at `.`: invalid type: map, expected a string"
    );
}
