//! The form of a request and the check of what comes back, without a server.

use serde_json::json;

use super::*;

fn trip() -> Vec<Field> {
    let schema = json!({"type":"object","properties":{
        "city":{"type":"string","description":"Where to."},
        "nights":{"type":"integer","minimum":1},
        "seat":{"type":"string","enum":["aisle","window"]},
        "bags":{"type":"boolean"}},"required":["city","nights"]});
    schema_form(&schema).unwrap()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn form_values_become_typed_data() {
    let data = from_form(
        &trip(),
        &pairs(&[
            ("f.city", "Oslo"),
            ("f.nights", "3"),
            ("f.seat", "aisle"),
            ("f.bags", "on"),
        ]),
    )
    .unwrap();
    assert_eq!(
        Value::Object(data),
        json!({"bags":true,"city":"Oslo","nights":3,"seat":"aisle"})
    );
}

#[test]
fn wrong_values_name_the_field() {
    let f = trip();
    let e = from_form(&f, &pairs(&[("f.city", "Oslo"), ("f.nights", "three")])).unwrap_err();
    assert_eq!(e.message, "Nights: must be a whole number, not `three`");
    let e = from_form(&f, &pairs(&[("f.nights", "2")])).unwrap_err();
    assert_eq!(e.message, "Where to: required");
    let e = from_form(&f, &pairs(&[("f.city", "x"), ("f.nights", "0")])).unwrap_err();
    assert_eq!(e.message, "Nights: must be at least 1");
    let e = from_form(
        &f,
        &pairs(&[("f.city", "x"), ("f.nights", "1"), ("f.seat", "roof")]),
    )
    .unwrap_err();
    assert_eq!(e.message, "Seat: must be one of: aisle, window");
    let e = from_json(&f, Some(&json!({"city":"x","nights":1,"pet":"cat"}))).unwrap_err();
    assert_eq!(e.message, "`pet` is not a field of this form");
    let e = from_json(&f, Some(&json!({"city":"x","nights":1.5}))).unwrap_err();
    assert_eq!(e.message, "Nights: must be a whole number");
}

#[test]
fn fields_show_required_ones_in_their_order_then_the_rest() {
    // `required` is written in declaration order; the map of `properties` is sorted
    let keys: Vec<String> = trip().into_iter().map(|f| f.key).collect();
    assert_eq!(keys, ["city", "nights", "bags", "seat"]);
    let schema = json!({"type":"object","properties":{
        "bags":{"type":"boolean"},"city":{"type":"string"},"nights":{"type":"integer"}},
        "required":["nights","city"]});
    let keys: Vec<String> = schema_form(&schema)
        .unwrap()
        .into_iter()
        .map(|f| f.key)
        .collect();
    assert_eq!(keys, ["nights", "city", "bags"]);
}

#[test]
fn labels_are_words_a_person_reads_never_the_code_name() {
    assert_eq!(words("cost_center"), "Cost center");
    assert_eq!(words("costCenter"), "Cost center");
    assert_eq!(words("cost-center"), "Cost center");
    assert_eq!(words("vatID"), "Vat id");
    assert_eq!(words("nights2Stay"), "Nights2 stay");
    assert_eq!(words("_"), "_");
    let schema = json!({"type":"object","properties":{
        "cost_center":{"type":"string"},
        "amount":{"type":"number","description":"Amount in EUR."},
        "note":{"type":"string","title":"Note for finance","description":"Shown on the report."},
        "why":{"type":"string","description":"Why this expense is needed; a sentence or two that finance reads before it signs off."}}});
    let f = schema_form(&schema).unwrap();
    // by key: the order of properties is not what this checks
    let mut seen: Vec<(&str, &str, Option<&str>)> = f
        .iter()
        .map(|f| (f.key.as_str(), f.label.as_str(), f.help.as_deref()))
        .collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            ("amount", "Amount in EUR", None),
            ("cost_center", "Cost center", None),
            ("note", "Note for finance", Some("Shown on the report.")),
            (
                "why",
                "Why",
                Some(
                    "Why this expense is needed; a sentence or two that finance reads before it signs off."
                )
            ),
        ]
    );
}

#[test]
fn a_required_choice_left_empty_is_refused_on_its_field() {
    let schema = json!({"type":"object","properties":{
        "cost_center":{"type":"string","enum":["sales","lab"]}},"required":["cost_center"]});
    let f = schema_form(&schema).unwrap();
    // the page's empty "Choose..." option submits an empty value
    let e = from_form(&f, &pairs(&[("f.cost_center", "")])).unwrap_err();
    assert_eq!(e, Invalid::new("cost_center", "Cost center: choose one"));
    let e = from_json(&f, Some(&json!({}))).unwrap_err();
    assert_eq!(e.message, "Cost center: choose one");
    let ok = from_form(&f, &pairs(&[("f.cost_center", "lab")])).unwrap();
    assert_eq!(Value::Object(ok), json!({"cost_center":"lab"}));
}

#[test]
fn nested_schemas_are_refused() {
    let e =
        schema_form(&json!({"type":"object","properties":{"a":{"type":"object"}}})).unwrap_err();
    assert_eq!(
        e,
        Refusal::Unsupported(
            "field `a` is not a flat primitive (string, number, integer, boolean, string enum)"
                .to_owned()
        )
    );
}

fn pay_schema() -> Value {
    json!({"type":"object","properties":{
        "amount":{"type":"number","minimum":1},
        "to":{"type":"string"},
        "urgent":{"type":"boolean"}},"required":["amount","to"]})
}

#[test]
fn editable_arguments_are_typed_fields_filled_with_the_proposal() {
    let edit = Edit::new(json!({"amount": 40, "to": "Ada"}), pay_schema());
    let fields = edit.fields.as_deref().expect("a flat schema is a form");
    assert_eq!(
        fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["f.amount", "f.to", "f.urgent"]
    );
    assert_eq!(
        edit.defaults(),
        pairs(&[("f.amount", "40"), ("f.to", "Ada")])
    );
    // sent back unchanged: the proposal as it was (40 stays 40, the unticked box stays unset)
    let same = edit.args_of_fields(fields, &edit.defaults()).unwrap();
    assert_eq!(same, json!({"amount": 40, "to": "Ada"}));
    // a change: the new values, typed
    let changed = edit
        .args_of_fields(
            fields,
            &pairs(&[("f.amount", "35.5"), ("f.to", "Bo"), ("f.urgent", "on")]),
        )
        .unwrap();
    assert_eq!(changed, json!({"amount": 35.5, "to": "Bo", "urgent": true}));
    // a wrong value is named on its field
    let wrong = edit
        .args_of_fields(fields, &pairs(&[("f.amount", "lots"), ("f.to", "Bo")]))
        .unwrap_err();
    assert_eq!(wrong.field, "amount");
}

#[test]
fn what_a_form_cannot_express_stays_json() {
    // a nested argument
    let nested = json!({"type":"object","properties":{"to":{"type":"object","properties":{"iban":{"type":"string"}}}}});
    assert!(
        Edit::new(json!({"to": {"iban": "x"}}), nested)
            .fields
            .is_none()
    );
    // a proposed value the field cannot hold (text where the schema says number)
    assert!(
        Edit::new(json!({"amount": "forty", "to": "Ada"}), pay_schema())
            .fields
            .is_none()
    );
    // an argument the schema does not name
    assert!(
        Edit::new(json!({"amount": 4, "to": "Ada", "memo": "x"}), pay_schema())
            .fields
            .is_none()
    );
}

#[test]
fn a_reconcile_form_speaks_in_plain_words() {
    let request = Request::reconcile("pay", json!({"to": "Ada"}), "k", "2026-01-01T00:00:00Z");
    let Ok(Shape::Fields(fields)) = Shape::of(&request) else {
        panic!("a reconcile request is a form");
    };
    let action = fields.iter().find(|f| f.key == "action").unwrap();
    assert_eq!(action.label, "What to do");
    assert_eq!(
        action.option_labels.as_deref().unwrap(),
        ["Run it again", "Record what happened", "Fail the call"]
    );
    assert_eq!(
        action.control,
        Control::Select(vec!["rerun".into(), "record".into(), "fail".into()])
    );
    let help = action.help.as_deref().unwrap();
    assert!(
        !help.contains("rerun:") && help.starts_with("Run it again: "),
        "{help}"
    );
    assert_eq!(
        fields.iter().find(|f| f.key == "output").unwrap().label,
        "What happened"
    );
}
