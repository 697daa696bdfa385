//! The one walk at every door: a credential at any depth, in any spelling the boundary reads,
//! is refused by each door that checks requests (the tool's own check, the answer page, MCP
//! serving and consuming) and each door that checks answers (the loop and the MCP server's
//! resolve, the page, `check_answer`); a value the model proposed may stay where it was at any
//! depth; and what the crate writes itself into a `reconcile` request is not read as prose.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{check_answer, check_request};
use crate::client::edit::{self, Edit};
use crate::request::{Answer, Request};
use crate::tool::{FnTool, Tool};

/// Spellings of a credential the boundary reads as one: case, separators, humps, confusables
/// (a Cyrillic `а`, a fullwidth `ｐ`), a zero-width space, and other words of its list.
const SPELLINGS: &[&str] = &[
    "password",
    "Password",
    "PASSWORD",
    "pass_word",
    "pass-word",
    "passWord",
    "p\u{430}ssword",
    "pass\u{200b}word",
    "\u{ff50}assword",
    "apiKey",
    "api_key",
    "2fa",
    "PIN",
    "otp",
    "session_id",
    "credentials",
    "Authorization",
];

const INNOCENT: &[&str] = &[
    "city",
    "passenger",
    "compass",
    "author",
    "keyboard",
    "spinner",
    "tokenizer",
    "account",
    "code",
    "key",
    "id",
];

/// `{leaf: "x"}` nested `depth` containers deep (objects, every third level an array), the
/// outermost an object.
fn nest(depth: usize, leaf: &str) -> Value {
    nest_value(depth, leaf, "x")
}

/// [`nest`] with `value` at the leaf.
fn nest_value(depth: usize, leaf: &str, value: &str) -> Value {
    let mut v = json!({ leaf: value });
    for level in 1..depth {
        v = if level % 3 == 2 {
            Value::Array(vec![v])
        } else {
            json!({ format!("n{level}"): v })
        };
    }
    if v.is_array() { json!({"top": v}) } else { v }
}

/// A form whose property `leaf` sits `depth` objects (every third one an array's `items`)
/// down.
fn nested_form(depth: usize, leaf: &str) -> Value {
    let mut v = json!({"type": "object", "properties": { leaf: {"type": "string"} }});
    for level in 1..depth {
        v = if level % 3 == 2 {
            json!({"type": "array", "items": [v]})
        } else {
            json!({"type": "object", "properties": { format!("n{level}"): v }})
        };
    }
    if v["type"] == "array" {
        json!({"type": "object", "properties": {"top": v}})
    } else {
        v
    }
}

/// The doors that check a request: `Err(path or message)` when refused.
fn request_doors(request: &Request) -> Vec<(&'static str, Result<(), String>)> {
    // without the page and MCP there is no other door to add
    #[cfg_attr(not(any(feature = "inbox", feature = "mcp")), allow(unused_mut))]
    let mut doors = vec![(
        "check_request (the tool, the loop)",
        check_request(request).map_err(|e| e.path().to_owned()),
    )];
    #[cfg(feature = "inbox")]
    {
        use crate::inbox::fields::{Refusal, Shape};
        doors.push((
            "the answer page",
            match Shape::of(request) {
                Err(Refusal::Credential(why)) => Err(why),
                _ => Ok(()),
            },
        ));
    }
    #[cfg(feature = "mcp")]
    {
        use crate::mcp::elicit::{Incoming, checked_elicitation_for, incoming};
        doors.push((
            "MCP serve",
            checked_elicitation_for(request)
                .map(drop)
                .map_err(|e| e.path().to_owned()),
        ));
        // a toolnexus server's elicitation carries its request whole in `_meta` (a form
        // without fields keeps the request's own `data`)
        let params = rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: request.prompt.clone(),
            requested_schema: serde_json::from_value(json!({"type": "object", "properties": {}}))
                .unwrap(),
        };
        let mut meta = serde_json::Map::new();
        meta.insert(
            crate::mcp::PENDING_META_KEY.to_owned(),
            serde_json::to_value(request).unwrap(),
        );
        doors.push((
            "MCP consume",
            match incoming("srv", &params, Some(&meta)) {
                Incoming::Refused(e) => Err(e.path().to_owned()),
                _ => Ok(()),
            },
        ));
    }
    doors
}

/// An editable tool whose schema takes any object.
fn editable() -> FnTool {
    FnTool::builder("sign_in")
        .description("Signs in.")
        .editable()
        .schema(json!({"type": "object"}))
        .handler(|_, _| async { "ok" })
        .build()
        .unwrap()
}

/// The doors that check an answer: `Err(message)` when refused.
fn answer_doors(request: &Request, answer: &Answer) -> Vec<(&'static str, Result<(), String>)> {
    let tool = editable();
    // without the page and MCP there is no other door to add
    #[cfg_attr(not(any(feature = "inbox", feature = "mcp")), allow(unused_mut))]
    let mut doors = vec![
        (
            "check_answer (a web tier)",
            check_answer(request, answer).map_err(|e| e.to_string()),
        ),
        (
            "the loop and the MCP server's resolve",
            match edit::edited(Some(&tool as &dyn Tool), "sign_in", request, answer) {
                Edit::Refused(why) => Err(why),
                _ => Ok(()),
            },
        ),
    ];
    #[cfg(feature = "inbox")]
    doors.push((
        "the answer page",
        crate::inbox::fields::boundary_checked(request, answer.clone())
            .map(drop)
            .map_err(|i| i.message),
    ));
    #[cfg(feature = "mcp")]
    if let (Some(Value::Object(proposed)), Some(Value::Object(data))) =
        (request.proposed_args(), answer.data.as_ref())
        && let Some(Value::Object(args)) = data.get("args")
    {
        // an MCP client's edit form answers with the fields it changed
        let changed: serde_json::Map<String, Value> = args
            .iter()
            .filter(|(k, v)| proposed.get(*k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let result = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
            .with_content(Value::Object(changed));
        let answer = crate::mcp::elicit::answer_from_result(request, &result);
        doors.push((
            "an MCP client's elicitation result",
            match edit::edited(Some(&tool as &dyn Tool), "sign_in", request, &answer) {
                Edit::Refused(why) => Err(why),
                _ => Ok(()),
            },
        ));
    }
    doors
}

fn proposed_approval(args: Value) -> Request {
    Request::editable_approval("Sign in?", args, json!({"type": "object"}))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_credential_at_any_depth_of_a_form_is_refused_at_every_door(
        depth in 1usize..40,
        word in prop::sample::select(SPELLINGS),
        kind in prop::sample::select(&["input", "question", "approval", "login"][..]),
        key in prop::sample::select(&["schema", "fields", "form"][..]),
    ) {
        let request = Request::custom(kind, "A few details")
            .with_data_entry(key, nested_form(depth, word));
        for (door, outcome) in request_doors(&request) {
            let why = outcome.expect_err(door);
            prop_assert!(why.contains(&crate::limits::excerpt(word).into_owned()), "{door}: {why}");
        }
    }

    #[test]
    fn an_innocent_word_at_any_depth_of_a_form_passes_every_door(
        depth in 1usize..40,
        word in prop::sample::select(INNOCENT),
    ) {
        let request = Request::input("A few details").with_data_entry("schema", nested_form(depth, word));
        for (door, outcome) in request_doors(&request) {
            prop_assert!(outcome.is_ok(), "{door}: {outcome:?}");
        }
    }

    #[test]
    fn an_edit_cannot_carry_a_secret_at_any_depth_through_any_door(
        depth in 1usize..60,
        word in prop::sample::select(SPELLINGS),
    ) {
        let request = proposed_approval(json!({"user": "ada"}));
        let answer = request.approve_with(json!({"user": "ada", "deep": nest(depth, word)}));
        for (door, outcome) in answer_doors(&request, &answer) {
            prop_assert!(outcome.is_err(), "{door} let `{word}` {depth} deep through");
        }
    }

    #[test]
    fn an_edit_may_keep_what_the_model_proposed_at_any_depth(
        depth in 1usize..60,
        word in prop::sample::select(SPELLINGS),
    ) {
        let proposed = json!({"user": "ada", "deep": nest(depth, word)});
        let request = proposed_approval(proposed.clone());
        let mut edited = proposed;
        edited["user"] = json!("bob");
        let answer = request.approve_with(edited.clone());
        for (door, outcome) in answer_doors(&request, &answer) {
            prop_assert!(outcome.is_ok(), "{door}: {outcome:?}");
        }
        // the same place with another value is typed by the person
        let mut typed = edited;
        typed["deep"] = nest_value(depth, word, "typed");
        let answer = request.approve_with(typed);
        for (door, outcome) in answer_doors(&request, &answer) {
            prop_assert!(outcome.is_err(), "{door} let a typed `{word}` {depth} deep through");
        }
    }

    #[test]
    fn a_form_answer_cannot_carry_a_secret_at_any_depth(
        depth in 1usize..60,
        word in prop::sample::select(SPELLINGS),
    ) {
        let request = Request::input("Where to?").with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        );
        let answer = request.accept(json!({"city": "Oslo", "more": nest(depth, word)}));
        for (door, outcome) in answer_doors(&request, &answer) {
            prop_assert!(outcome.is_err(), "{door} let `{word}` {depth} deep through");
        }
        let innocent = request.accept(json!({"city": "my password", "more": nest(depth, "note")}));
        for (door, outcome) in answer_doors(&request, &innocent) {
            prop_assert!(outcome.is_ok(), "{door}: {outcome:?}");
        }
    }

    #[test]
    fn random_hex_idempotency_keys_never_trip_the_boundary(
        key in "[0-9a-f]{64}",
        at in 0usize..62,
    ) {
        for key in [key.clone(), format!("{}2fa{}", &key[..at], &key[at + 3..])] {
            let request = Request::reconcile(
                "pay",
                json!({"amount": 40}),
                &key,
                "2026-12-06T13:50:10.123Z",
            );
            prop_assert!(request.data_entry("schema").is_some(), "{key}: the form was left out");
            prop_assert!(check_request(&request).is_ok());
        }
    }
}

#[test]
fn an_edit_cannot_carry_a_secret_one_level_down() {
    let request = proposed_approval(json!({"user": "ada", "account": {"id": "a1"}}));
    let answer = request
        .approve_with(json!({"user": "ada", "account": {"id": "a1", "password": "hunter2"}}));
    let err = check_answer(&request, &answer).unwrap_err();
    assert_eq!(err.path(), "data.args.account.password");
    assert!(err.is_answer());
    assert_eq!(err.word(), Some("password"));
    for (door, outcome) in answer_doors(&request, &answer) {
        let why = outcome.expect_err(door);
        assert!(why.contains("account.password"), "{door}: {why}");
    }
}

#[test]
fn a_secret_at_the_deepest_place_an_answer_may_hold_is_found() {
    // `data` + `args` + the levels below: the walk reads up to MAX_DEPTH levels, and refuses
    // deeper as too deep to check
    let request = proposed_approval(json!({"user": "ada"}));
    let mut deep = json!({"password": "x"});
    for _ in 0..crate::limits::MAX_DEPTH - 3 {
        deep = json!({ "n": deep });
    }
    let answer = request.approve_with(deep);
    assert_eq!(
        check_answer(&request, &answer).unwrap_err().word(),
        Some("password")
    );
    let mut deeper = json!({"city": "x"});
    for _ in 0..crate::limits::MAX_DEPTH {
        deeper = json!({ "n": deeper });
    }
    let err = check_answer(&request, &request.approve_with(deeper)).unwrap_err();
    assert_eq!(err.word(), None);
    assert!(
        err.to_string().contains("nests deeper than 128 levels"),
        "{err}"
    );
}

#[test]
fn a_question_answer_may_use_the_question_as_its_key() {
    // `auth` is refused in names only: a question may mention it in prose, and its answer is
    // keyed by the question
    let request = Request::custom("question", "One thing").with_data_entry(
        "questions",
        json!([{"question": "Which auth provider do you use?"}]),
    );
    assert!(check_request(&request).is_ok());
    let answer = request.accept(json!({"Which auth provider do you use?": "GitHub"}));
    assert!(check_answer(&request, &answer).is_ok());
    let smuggled = request.accept(json!({"Which auth provider do you use?": {"token": "t"}}));
    assert_eq!(
        check_answer(&request, &smuggled).unwrap_err().path(),
        "data.Which auth provider do you use?.token"
    );
}

#[test]
fn a_declined_answer_or_one_without_data_passes() {
    let request = Request::input("Where to?");
    assert!(check_answer(&request, &Answer::ok(&request.id)).is_ok());
    let declined = Answer {
        data: Some(json!({"password": "x"})),
        ..request.decline(crate::request::DeclineReason::Declined)
    };
    assert!(check_answer(&request, &declined).is_ok());
}

#[test]
fn a_reconcile_request_keeps_its_form_whatever_letters_its_hex_key_holds() {
    let key = "9b2fa0c3344556677889900aabbccddeeff00112233445566778899aabbccdde";
    assert_eq!(key.len(), 64);
    let request = Request::reconcile("pay", json!({"amount": 40}), key, "2026-01-01T00:00:00Z");
    assert!(request.data_entry("schema").is_some());
    assert!(check_request(&request).is_ok());
    // read as prose, the same key holds `2fa`
    let elsewhere = Request::input("Cut").with_data_entry("note", json!(key));
    assert_eq!(check_request(&elsewhere).unwrap_err().word(), Some("2fa"));
}

#[test]
fn prose_in_a_machine_made_slot_is_still_read() {
    let form = json!({"type": "object", "properties": {"action": {"type": "string"}}});
    // prose where the crate puts a hex key, or a time
    for (key, value) in [
        ("idempotencyKey", "enter your 2fa code"),
        ("idempotencyKey", "2FA0"),
        ("startedAt", "2fa"),
    ] {
        let request = Request::custom("reconcile", "Cut")
            .with_data_entry("schema", form.clone())
            .with_data_entry(key, json!(value));
        let err = check_request(&request).unwrap_err();
        assert_eq!(err.path(), format!("data.{key}"), "{value}");
    }
    // the same hex key in another kind, or under another key, is read
    let hex = json!("a2fa");
    let input = Request::input("Cut")
        .with_data_entry("schema", form.clone())
        .with_data_entry("idempotencyKey", hex.clone());
    assert_eq!(
        check_request(&input).unwrap_err().path(),
        "data.idempotencyKey"
    );
    let other = Request::custom("reconcile", "Cut")
        .with_data_entry("schema", form)
        .with_data_entry("note", hex);
    assert_eq!(check_request(&other).unwrap_err().path(), "data.note");
    // a tool's own reconcile request built with prose as its key loses its form, as any
    // request whose form would fail the boundary
    let by_hand = Request::reconcile("pay", json!({}), "your 2fa code", "2026-01-01T00:00:00Z");
    assert!(by_hand.data_entry("schema").is_none());
}
