//! What the decoders accept and refuse: serde's wording, at the path inside the value.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};
use toolnexus::__private::{ArgError, ArgType};

use crate::types::{Category, Change, Expense, Lookup, Payment, Report};

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
