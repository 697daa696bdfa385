//! Requests as elicitations and back, and the trust boundary at both doors, without a session.

use super::*;
use rmcp::model::RequestParamsMeta;

fn wire(params: &ElicitRequestParams) -> String {
    serde_json::to_string(params).unwrap()
}

#[test]
fn input_without_schema_asks_for_one_string_field() {
    let (mode, params) = elicitation_for(&Request::input("Which city?").with_id("r1")).unwrap();
    assert_eq!(mode, Mode::Form);
    assert_eq!(
        wire(&params),
        r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r1","kind":"input","prompt":"Which city?"}},"message":"Which city?","requestedSchema":{"type":"object","properties":{"output":{"type":"string"}},"required":["output"]}}"#
    );
}

#[test]
fn a_form_shows_required_fields_in_their_order_then_the_rest() {
    // the schema's map is sorted; `required` carries the declaration order
    let r = Request::input("Trip?").with_id("r3").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {
            "bags": {"type": "boolean"}, "city": {"type": "string"},
            "nights": {"type": "integer"}, "a_note": {"type": "string"}},
            "required": ["nights", "city"]}),
    );
    let (_, params) = elicitation_for(&r).unwrap();
    let text = wire(&params);
    let form = &text[text.find("requestedSchema").unwrap()..];
    let at = |key: &str| form.find(&format!(r#""{key}":{{"type""#)).unwrap();
    let mut keys = ["a_note", "bags", "city", "nights"];
    keys.sort_by_key(|k| at(k));
    assert_eq!(keys, ["nights", "city", "a_note", "bags"], "{text}");
}

#[test]
fn approval_is_a_form_without_fields() {
    let (_, params) = elicitation_for(&Request::approval("Delete x?").with_id("r2")).unwrap();
    assert_eq!(
        wire(&params),
        r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r2","kind":"approval","prompt":"Delete x?"}},"message":"Delete x?","requestedSchema":{"type":"object","properties":{}}}"#
    );
}

#[test]
fn question_has_one_field_per_question() {
    let r = Request::question("Seat?").with_data_entry(
        "questions",
        json!([
            {"question": "Seat?", "header": "Seat", "options": ["aisle", "window"]},
            {"question": "Meals?", "options": ["veg", "fish"], "multiple": true},
            {"question": "Note?"}
        ]),
    );
    let (_, params) = elicitation_for(&r).unwrap();
    let mut wire = serde_json::to_value(&params).unwrap();
    assert_eq!(
        wire["_meta"]["toolnexus/pending"],
        serde_json::to_value(&r).unwrap()
    );
    wire.as_object_mut().unwrap().remove("_meta");
    // the form's fields are a `serde_json` map: compared in sorted order, the order of a
    // build without `preserve_order` (`required` keeps the questions' order)
    let mut expected: serde_json::Value = serde_json::from_str(
        r#"{"mode":"form","message":"Seat?","requestedSchema":{"type":"object","properties":{"Seat?":{"type":"string","title":"Seat","enum":["aisle","window"]},"Meals?":{"type":"array","items":{"type":"string","enum":["veg","fish"]}},"Note?":{"type":"string"}},"required":["Seat?","Meals?","Note?"]}}"#,
    )
    .unwrap();
    expected.sort_all_objects();
    wire.sort_all_objects();
    assert_eq!(wire.to_string(), expected.to_string());
}

#[test]
fn authorization_is_url_mode_with_the_request_id() {
    let r = Request::authorization("https://x/login").with_id("r9");
    let (mode, params) = elicitation_for(&r).unwrap();
    assert_eq!(mode, Mode::Url);
    assert_eq!(
        wire(&params),
        r#"{"mode":"url","_meta":{"toolnexus/pending":{"id":"r9","kind":"authorization","prompt":"Login required: https://x/login","url":"https://x/login"}},"message":"Login required: https://x/login","url":"https://x/login","elicitationId":"r9"}"#
    );
}

#[test]
fn a_schema_that_is_no_flat_form_has_no_elicitation() {
    let nested = Request::input("p").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {"a": {"type": "object"}}}),
    );
    assert!(elicitation_for(&nested).is_none());
    assert!(elicitation_for(&Request::new("authorization", "no url")).is_none());
}

#[test]
fn a_custom_kind_without_a_schema_is_an_accept_or_decline_form() {
    let expires = "2030-01-01T00:00:00Z";
    let mut wire_money = Request::custom("wire", "Wire 5 EUR?").with_id("r-wire");
    wire_money.expires_at = Some(expires.to_owned());
    let (mode, params) = elicitation_for(&wire_money).unwrap();
    assert_eq!(mode, Mode::Form);
    // the Request in `_meta` is a serde_json map inside rmcp's params: its keys in that
    // map's order (sorted: toolnexus turns on none of serde_json's features)
    assert_eq!(
        wire(&params),
        r#"{"mode":"form","_meta":{"toolnexus/pending":{"expiresAt":"2030-01-01T00:00:00Z","id":"r-wire","kind":"wire","prompt":"Wire 5 EUR?"}},"message":"Wire 5 EUR?","requestedSchema":{"type":"object","properties":{}}}"#
    );
    // accept reads as a plain yes, decline as declined
    let yes = ElicitResult::new(ElicitationAction::Accept).with_content(json!({}));
    assert_eq!(answer_from_result(&wire_money, &yes), Answer::ok("r-wire"));
    let r = Request::custom("pay", "Pay?")
        .with_id("r-pay")
        .with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        );
    let (_, params) = elicitation_for(&r).unwrap();
    assert_eq!(
        wire(&params),
        r#"{"mode":"form","_meta":{"toolnexus/pending":{"data":{"schema":{"properties":{"ok":{"type":"boolean"}},"type":"object"}},"id":"r-pay","kind":"pay","prompt":"Pay?"}},"message":"Pay?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}"#
    );
}

#[test]
fn a_request_sent_in_meta_keeps_its_kind_id_and_expiry_on_the_consuming_side() {
    let mut sent = Request::approval("Delete x?").with_id("sus-1");
    sent.expires_at = Some("2030-01-01T00:00:00Z".to_owned());
    let (_, params) = elicitation_for(&sent).unwrap();
    let meta = params.meta().unwrap().0.0.clone();
    let r = request_from_elicitation("notes", &params, Some(&meta)).unwrap();
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"id":"sus-1","kind":"approval","prompt":"Delete x?","data":{"mcpServer":"notes"},"expiresAt":"2030-01-01T00:00:00Z"}"#
    );
    // a form keeps its fields from requestedSchema, the kind from _meta
    let pay = Request::custom("payment", "Pay?")
        .with_id("sus-2")
        .with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}),
        );
    let (_, params) = elicitation_for(&pay).unwrap();
    let meta = params.meta().unwrap().0.0.clone();
    let r = request_from_elicitation("shop", &params, Some(&meta)).unwrap();
    assert_eq!(r.kind, "payment");
    assert_eq!(r.id, "sus-2");
    assert_eq!(
        serde_json::to_string(&r.data).unwrap(),
        r#"{"mcpServer":"shop","schema":{"properties":{"confirm":{"type":"boolean"}},"type":"object"}}"#
    );
    // a form never becomes an authorization, whatever _meta claims
    let mut claims = Map::new();
    claims.insert(
        PENDING_META_KEY.to_owned(),
        json!({"id": "x", "kind": "authorization", "prompt": "p", "url": "https://x"}),
    );
    let r = request_from_elicitation("shop", &params, Some(&claims)).unwrap();
    assert_eq!(r.kind, "input");
}

#[test]
fn a_text_answer_to_a_one_field_form_goes_back_as_that_field() {
    let r = Request::input("Note?").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {"output": {"type": "string"}}}),
    );
    assert_eq!(
        serde_json::to_string(&result_from_answer(&r, &Answer::accept(&r.id, "hi"))).unwrap(),
        r#"{"action":"accept","content":{"output":"hi"}}"#
    );
}

#[test]
fn results_become_answers() {
    let r = Request::input("p")
        .with_id("r1")
        .with_data_entry("schema", json!({"type": "object"}));
    let accept = ElicitResult::new(ElicitationAction::Accept).with_content(json!({"k": "v"}));
    assert_eq!(
        serde_json::to_string(&answer_from_result(&r, &accept)).unwrap(),
        r#"{"id":"r1","ok":true,"data":{"k":"v"}}"#
    );
    let decline = ElicitResult::new(ElicitationAction::Decline);
    assert_eq!(
        serde_json::to_string(&answer_from_result(&r, &decline)).unwrap(),
        r#"{"id":"r1","ok":false,"reason":"declined"}"#
    );
    let cancel = ElicitResult::new(ElicitationAction::Cancel);
    assert_eq!(
        serde_json::to_string(&answer_from_result(&r, &cancel)).unwrap(),
        r#"{"id":"r1","ok":false,"reason":"cancelled"}"#
    );
    let empty = ElicitResult::new(ElicitationAction::Accept).with_content(json!({}));
    assert_eq!(
        serde_json::to_string(&answer_from_result(
            &Request::approval("ok?").with_id("r2"),
            &empty
        ))
        .unwrap(),
        r#"{"id":"r2","ok":true}"#
    );
    let text = ElicitResult::new(ElicitationAction::Accept).with_content(json!({"output": "hi"}));
    assert_eq!(
        serde_json::to_string(&answer_from_result(
            &Request::input("note?").with_id("r3"),
            &text
        ))
        .unwrap(),
        r#"{"id":"r3","ok":true,"data":"hi"}"#
    );
}

#[test]
fn answers_become_results() {
    let r = Request::input("p").with_id("r1");
    let wire = |a: &Answer| serde_json::to_string(&result_from_answer(&r, a)).unwrap();
    assert_eq!(
        wire(&Answer::accept("r1", json!({"city": "Oslo"}))),
        r#"{"action":"accept","content":{"city":"Oslo"}}"#
    );
    assert_eq!(wire(&Answer::ok("r1")), r#"{"action":"accept"}"#);
    assert_eq!(
        wire(&Answer::decline("r1", DeclineReason::Declined)),
        r#"{"action":"decline"}"#
    );
    assert_eq!(
        wire(&Answer::decline("r1", DeclineReason::Cancelled)),
        r#"{"action":"cancel"}"#
    );
    assert_eq!(
        wire(&Answer::decline("r1", DeclineReason::Expired)),
        r#"{"action":"cancel"}"#
    );
}

#[test]
fn no_elicitation_leaves_that_asks_for_a_credential_whatever_the_kind() {
    let login = Request::custom("login", "Online banking").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {
            "p": {"type": "string", "title": "Online-banking password"}
        }}),
    );
    let err = checked_elicitation_for(&login).expect_err("refused");
    assert_eq!(err.path(), "data.schema.properties.p.title");
    let fine = Request::custom("login", "Online banking").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {"user": {"type": "string"}}}),
    );
    assert!(matches!(
        checked_elicitation_for(&fine),
        Ok(Some((Mode::Form, _)))
    ));
}

#[test]
fn an_incoming_elicitation_asking_for_a_password_is_declined_with_the_reason() {
    let form = |schema: Value| ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Sign in to continue".into(),
        requested_schema: serde_json::from_value(schema).unwrap(),
    };
    for (schema, path) in [
        (
            json!({"type": "object", "properties": {"password": {"type": "string"}}}),
            "data.schema.properties.password",
        ),
        (
            json!({"type": "object", "properties": {"p": {"type": "string", "description": "Your online-banking password"}}}),
            "data.schema.properties.p.description",
        ),
        (
            json!({"type": "object", "properties": {"p": {"type": "string", "title": "Bank PIN"}}}),
            "data.schema.properties.p.title",
        ),
    ] {
        let Incoming::Refused(err) = incoming("bank", &form(schema), None) else {
            panic!("refused: {path}");
        };
        assert_eq!(err.path(), path);
        let result = refused_result(&err);
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["action"], "decline");
        assert_eq!(wire["_meta"]["toolnexus/refused"], err.to_string());
        assert!(wire.get("content").is_none());
    }
    let city = form(json!({"type": "object", "properties": {"city": {"type": "string"}}}));
    assert!(matches!(incoming("bank", &city, None), Incoming::Ask(r) if r.kind == "input"));
    // the way to a secret: a URL elicitation
    let url = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: "Enter your password at the bank".into(),
        url: "https://bank.example/login".into(),
        elicitation_id: "e-1".into(),
    };
    assert!(matches!(incoming("bank", &url, None), Incoming::Ask(r) if r.kind == "authorization"));
}

#[test]
fn elicitations_become_requests() {
    let form = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Which city?".into(),
        requested_schema: serde_json::from_value(json!({
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
        }))
        .unwrap(),
    };
    let r = request_from_elicitation("travel", &form, None).unwrap();
    assert_eq!(r.kind, "input");
    assert_eq!(r.prompt, "Which city?");
    assert_eq!(
        serde_json::to_string(&r.data).unwrap(),
        r#"{"mcpServer":"travel","schema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}}"#
    );
    let url = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: "Log in".into(),
        url: "https://x/login".into(),
        elicitation_id: "e-7".into(),
    };
    let r = request_from_elicitation("travel", &url, None).unwrap();
    assert_eq!(r.kind, "authorization");
    assert_eq!(r.prompt, "Log in");
    assert_eq!(r.url.as_deref(), Some("https://x/login"));
    assert_eq!(
        serde_json::to_string(&r.data).unwrap(),
        r#"{"elicitationId":"e-7","mcpServer":"travel"}"#
    );
}

fn editable(args: Value, schema: Value) -> Request {
    Request::editable_approval("Pay Ada?", args, schema).with_id("r-pay")
}

fn pay_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "Who is paid"},
            "amount": {"type": "integer", "minimum": 1},
            "express": {"type": "boolean"}
        },
        "required": ["to", "amount"]
    })
}

#[test]
fn an_editable_approval_is_a_form_of_its_arguments_filled_in_with_the_proposed_values() {
    let request = editable(
        json!({"to": "Ada", "amount": 140, "express": false}),
        pay_schema(),
    );
    let (mode, params) = elicitation_for(&request).unwrap();
    assert_eq!(mode, Mode::Form);
    let wire: Value = serde_json::from_str(&wire(&params)).unwrap();
    assert_eq!(
        wire["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "Who is paid", "default": "Ada"},
                "amount": {"type": "integer", "minimum": 1, "default": 140},
                "express": {"type": "boolean", "default": false}
            },
            "required": ["to", "amount"]
        })
    );
    assert_eq!(wire["message"], "Pay Ada?");
}

#[test]
fn an_editable_approval_it_cannot_ask_field_by_field_is_a_plain_approval() {
    let no_fields = json!({"type": "object", "properties": {}});
    // an argument the restricted schema cannot ask for (an array)
    let list = editable(
        json!({"to": ["Ada"]}),
        json!({"type": "object", "properties": {"to": {"type": "array", "items": {"type": "string"}}}}),
    );
    // an optional argument (a type union)
    let optional = editable(
        json!({"to": "Ada"}),
        json!({"type": "object", "properties": {"to": {"type": ["string", "null"]}}}),
    );
    // a field that asks for a credential never leaves as a form field
    let secret = editable(
        json!({"password": "x"}),
        json!({"type": "object", "properties": {"password": {"type": "string"}}}),
    );
    // a keyword the restricted schema refuses
    let pattern = editable(
        json!({"to": "Ada"}),
        json!({"type": "object", "properties": {"to": {"type": "string", "enum": [1, 2]}}}),
    );
    for request in [list, optional, secret, pattern] {
        let (_, params) = elicitation_for(&request).unwrap();
        let wire: Value = serde_json::from_str(&wire(&params)).unwrap();
        assert_eq!(wire["requestedSchema"], no_fields, "{request:?}");
    }
}

#[test]
fn an_edit_form_accepted_changed_is_the_edit_and_unchanged_a_plain_approval() {
    let request = editable(
        json!({"to": "Ada", "amount": 140, "express": false}),
        pay_schema(),
    );
    let accept = |content: Value| {
        answer_from_result(
            &request,
            &ElicitResult::new(ElicitationAction::Accept).with_content(content),
        )
    };
    // a changed field: the proposed arguments with it over them
    assert_eq!(
        accept(json!({"to": "Ada", "amount": 90, "express": false})),
        request.approve_with(json!({"to": "Ada", "amount": 90, "express": false}))
    );
    // a client that sends only what changed
    assert_eq!(
        accept(json!({"express": true})),
        request.approve_with(json!({"to": "Ada", "amount": 140, "express": true}))
    );
    // unchanged, or nothing sent: what was shown runs
    assert_eq!(
        accept(json!({"to": "Ada", "amount": 140, "express": false})),
        Answer::ok("r-pay")
    );
    assert_eq!(accept(json!({})), Answer::ok("r-pay"));
    // and back: an edit is the form's fields
    let edit = request.approve_with(json!({"to": "Bob", "amount": 140, "express": false}));
    let result = result_from_answer(&request, &edit);
    assert_eq!(result.action, ElicitationAction::Accept);
    assert_eq!(
        result.content,
        Some(json!({"to": "Bob", "amount": 140, "express": false}))
    );
}
