//! What the decoders accept and refuse: serde's wording, at the path inside the value.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};
use toolnexus::__private::{ArgError, ArgType};

use super::types::{
    Category, Change, Expense, Lookup, Paging, Payment, Priority, Report, Settings,
};

fn decode<T: ArgType>(v: Value) -> Result<T, ArgError> {
    T::__toolnexus_decode(v)
}

fn err<T: ArgType + std::fmt::Debug>(v: Value) -> String {
    decode::<T>(v).unwrap_err().to_string()
}

fn expense() -> Expense {
    Expense {
        amount: 1250,
        note: None,
        count: 1,
        category: Category::Travel,
        tags: vec!["taxi".to_owned()],
        internal: false,
    }
}

#[test]
fn a_struct_decodes_with_defaults_options_and_skips() {
    let got: Expense = decode(json!({"amount": 1250, "cat": "travel", "tags": ["taxi"]})).unwrap();
    assert_eq!(got, expense());
    // `null` reads as absent for an option and for a default
    let got: Expense = decode(
        json!({"amount": 1250, "cat": "travel", "tags": ["taxi"], "note": null, "count": null}),
    )
    .unwrap();
    assert_eq!(got, expense());
    let got: Expense =
        decode(json!({"amount": 1, "cat": "other", "tags": [], "note": "lunch", "count": 3}))
            .unwrap();
    assert_eq!(
        got,
        Expense {
            amount: 1,
            note: Some("lunch".to_owned()),
            count: 3,
            category: Category::Misc,
            tags: vec![],
            internal: false,
        }
    );
}

#[test]
fn struct_errors_name_the_field_in_serde_words() {
    assert_eq!(
        err::<Expense>(json!({"amount": "12", "cat": "travel", "tags": []})),
        r#"amount: invalid type: string "12", expected u32"#
    );
    assert_eq!(
        err::<Expense>(json!({"amount": -1, "cat": "travel", "tags": []})),
        "amount: invalid value: integer `-1`, expected u32"
    );
    assert_eq!(
        err::<Expense>(json!({"cat": "travel", "tags": []})),
        "missing field `amount`"
    );
    assert_eq!(
        err::<Expense>(json!({"amount": 1, "cat": "travel", "tags": [], "internal": true})),
        "unknown field `internal`, expected one of `amount`, `note`, `count`, `cat`, `tags`"
    );
    assert_eq!(
        err::<Expense>(json!({"amount": 1, "cat": "travel", "tags": ["a", 2]})),
        "tags[1]: invalid type: integer `2`, expected a string"
    );
    assert_eq!(
        err::<Expense>(json!({"amount": 1, "cat": "plane", "tags": []})),
        "cat: unknown variant `plane`, expected one of `travel`, `office_supplies`, `other`"
    );
    assert_eq!(
        err::<Expense>(json!([1])),
        "invalid type: sequence, expected struct Expense"
    );
    assert_eq!(
        err::<Lookup>(json!(null)),
        "invalid type: null, expected struct Lookup"
    );
    assert_eq!(
        err::<Category>(json!(7)),
        "invalid type: integer `7`, expected enum Category"
    );
}

#[test]
fn internally_tagged_enums_choose_by_the_tag() {
    assert_eq!(
        decode::<Payment>(json!({"kind": "card", "last4": "4242"})).unwrap(),
        Payment::Card {
            last4: "4242".to_owned()
        }
    );
    assert_eq!(
        decode::<Payment>(json!({"kind": "cash"})).unwrap(),
        Payment::Cash
    );
    assert_eq!(
        decode::<Payment>(json!({"iban": "NO93", "kind": "bank_transfer"})).unwrap(),
        Payment::BankTransfer {
            iban: "NO93".to_owned(),
            reference: None
        }
    );
    assert_eq!(
        err::<Payment>(json!({"last4": "4242"})),
        "missing field `kind`"
    );
    assert_eq!(
        err::<Payment>(json!({"kind": "cheque"})),
        "kind: unknown variant `cheque`, expected one of `card`, `cash`, `bank_transfer`"
    );
    assert_eq!(
        err::<Payment>(json!({"kind": 1})),
        "kind: invalid type: integer `1`, expected a variant name"
    );
    assert_eq!(
        err::<Payment>(json!({"kind": "cash", "last4": "1"})),
        "unknown field `last4`, there are no fields"
    );
    assert_eq!(
        err::<Payment>(json!({"kind": "card", "last4": 4242})),
        "last4: invalid type: integer `4242`, expected a string"
    );
}

#[test]
fn adjacently_tagged_enums_hold_their_content_apart() {
    assert_eq!(
        decode::<Change>(json!({"op": "Move", "with": {"from": 1, "to": 2}})).unwrap(),
        Change::Move { from: 1, to: 2 }
    );
    assert_eq!(
        decode::<Change>(json!({"op": "Clear"})).unwrap(),
        Change::Clear
    );
    assert_eq!(
        err::<Change>(json!({"op": "clear"})),
        "op: unknown variant `clear`, expected one of `Add`, `Move`, `Clear`"
    );
    assert_eq!(
        decode::<Change>(
            json!({"op": "Add", "with": {"amount": 1250, "cat": "travel", "tags": ["taxi"]}})
        )
        .unwrap(),
        Change::Add(expense())
    );
    assert_eq!(
        err::<Change>(json!({"op": "Move", "with": {"from": 1, "to": "x"}})),
        r#"with.to: invalid type: string "x", expected i32"#
    );
    assert_eq!(err::<Change>(json!({"op": "Move"})), "missing field `with`");
    assert_eq!(
        err::<Change>(json!({"op": "Clear", "with": 1})),
        "unknown field `with`, expected `op`"
    );
    assert_eq!(
        err::<Change>(json!({"op": "Add", "with": {"amount": 1}, "extra": 1})),
        "unknown field `extra`, expected `op` or `with`"
    );
}

#[test]
fn nested_lists_maps_and_boxes_name_the_whole_path() {
    let report = json!({
        "expenses": [{"amount": 1250, "cat": "travel", "tags": ["taxi"]}],
        "byPerson": {"ada": {"amount": 1250, "cat": "travel", "tags": ["taxi"]}},
        "totals": {"travel": 12.5},
        "payment": {"kind": "cash"},
        "lastChange": null
    });
    let got: Report = decode(report.clone()).unwrap();
    assert_eq!(
        got,
        Report {
            expenses: vec![expense()],
            by_person: HashMap::from([("ada".to_owned(), Box::new(expense()))]),
            totals: BTreeMap::from([("travel".to_owned(), 12.5)]),
            payment: Payment::Cash,
            last_change: None,
            approved: false,
        }
    );
    let mut bad = report.clone();
    bad["byPerson"]["ada"]["amount"] = json!(1.5);
    assert_eq!(
        err::<Report>(bad),
        "byPerson.ada.amount: invalid type: floating point `1.5`, expected u32"
    );
    let mut bad = report.clone();
    bad["expenses"][0]["tags"][0] = json!(null);
    assert_eq!(
        err::<Report>(bad),
        "expenses[0].tags[0]: invalid type: null, expected a string"
    );
    let mut bad = report;
    bad["payment"] = json!({"kind": "card"});
    assert_eq!(err::<Report>(bad), "payment: missing field `last4`");
}

fn settings() -> Settings {
    Settings {
        limit: 20,
        offset: -1.5,
        verbose: false,
        name: "report".to_owned(),
        priority: Priority::High,
        fallback: Priority::Normal,
        payment: Payment::Card {
            last4: "0000".to_owned(),
        },
        note: None,
        changes: vec![Change::Clear, Change::Move { from: 1, to: 2 }],
        ratio: 0.1,
    }
}

#[test]
fn absent_or_null_fields_take_their_defaults() {
    assert_eq!(decode::<Settings>(json!({})).unwrap(), settings());
    let nulls: serde_json::Map<String, Value> = schema_keys::<Settings>()
        .into_iter()
        .map(|k| (k, Value::Null))
        .collect();
    assert_eq!(
        decode::<Settings>(Value::Object(nulls)).unwrap(),
        settings()
    );
    assert_eq!(
        decode::<Paging>(json!({"size": 10})).unwrap(),
        Paging { page: 1, size: 10 }
    );
    assert_eq!(
        decode::<Settings>(json!({"priority": "low", "limit": 3}))
            .map(|s| (s.priority, s.limit))
            .unwrap(),
        (Priority::Low, 3)
    );
    assert_eq!(
        err::<Settings>(json!({"priority": "urgent"})),
        "priority: unknown variant `urgent`, expected one of `low`, `normal`, `high`"
    );
}

/// The property names of `T`'s schema.
fn schema_keys<T: ArgType>() -> Vec<String> {
    toolnexus::__private::schema_of::<T>()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_encoder_writes_what_the_decoder_reads_back() {
    let json = settings().__toolnexus_json().unwrap();
    assert_eq!(
        json,
        json!({
            "limit": 20,
            "offset": -1.5,
            "verbose": false,
            "name": "report",
            "priority": "high",
            "fallback": "normal",
            "payment": {"kind": "card", "last4": "0000"},
            "note": null,
            "changes": [{"op": "Clear"}, {"op": "Move", "with": {"from": 1, "to": 2}}],
            "ratio": 0.1
        })
    );
    assert_eq!(decode::<Settings>(json).unwrap(), settings());
    // a skipped field is not written; a float that is not finite has no JSON
    let mut e = expense();
    e.internal = true;
    assert_eq!(
        e.__toolnexus_json().unwrap(),
        json!({"amount": 1250, "note": null, "count": 1, "cat": "travel", "tags": ["taxi"]})
    );
    let mut s = settings();
    s.offset = f64::NAN;
    assert_eq!(s.__toolnexus_json(), None);
    // a map's keys are sorted, whatever its order
    let map: HashMap<String, u8> = (0..20).map(|i| (format!("k{i:02}"), i)).collect();
    let keys: Vec<String> = match map.__toolnexus_json().unwrap() {
        Value::Object(m) => m.keys().cloned().collect(),
        other => panic!("{other}"),
    };
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}
