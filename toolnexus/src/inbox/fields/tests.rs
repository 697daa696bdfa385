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
