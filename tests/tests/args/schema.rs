//! The schemas the derive writes.

use serde_json::{Value, json};
use toolnexus::__private::{schema_of, schema_text};

use super::types::{Category, Change, Expense, Lookup, Paging, Payment, Priority, Settings};

/// `schema` with `"default": value` as its last member.
fn with_default(schema: Value, value: Value) -> Value {
    let mut schema = schema;
    schema
        .as_object_mut()
        .unwrap()
        .insert("default".to_owned(), value);
    schema
}

#[test]
fn a_struct_of_scalars_is_one_literal() {
    assert_eq!(
        schema_of::<Lookup>(),
        json!({
            "description": "Plain scalars, as the compile-time benchmark uses.",
            "type": "object",
            "properties": {
                "query": {"description": "What to look for.", "type": "string"},
                "limit": {"description": "At most this many results.", "type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u32},
                "exact": {"description": "Whether to match exactly.", "type": ["boolean", "null"]}
            },
            "required": ["query", "limit"],
            "additionalProperties": false
        })
    );
}

#[test]
fn renames_defaults_skips_and_nested_types() {
    assert_eq!(
        schema_of::<Expense>(),
        json!({
            "description": "An expense to file.",
            "type": "object",
            "properties": {
                "amount": {"description": "The amount, in cents.", "type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u32},
                "note": {"description": "What it was for.", "type": ["string", "null"]},
                "count": {"description": "How many of it.", "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255, "default": 1},
                "cat": {"description": "Where an expense goes.", "type": "string", "enum": ["travel", "office_supplies", "other"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["amount", "cat", "tags"],
            "additionalProperties": false
        })
    );
}

#[test]
fn unit_enums_are_string_enums() {
    assert_eq!(
        schema_of::<Option<Category>>(),
        json!({
            "description": "Where an expense goes.",
            "type": ["string", "null"],
            "enum": ["travel", "office_supplies", "other", null]
        })
    );
}

#[test]
fn internally_tagged_enums_are_one_of_with_a_const_tag() {
    assert_eq!(
        schema_of::<Payment>(),
        json!({
            "description": "How it was paid.",
            "oneOf": [
                {
                    "description": "By card.",
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "card"},
                        "last4": {"description": "The card's last four digits.", "type": "string"}
                    },
                    "required": ["kind", "last4"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "cash"}},
                    "required": ["kind"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "bank_transfer"},
                        "iban": {"type": "string"},
                        "reference": {"type": ["string", "null"]}
                    },
                    "required": ["kind", "iban"],
                    "additionalProperties": false
                }
            ]
        })
    );
}

#[test]
fn documented_variants_are_one_branch_each_with_their_description() {
    let branches = json!([
        {"description": "Whenever there is time.", "type": "string", "const": "low"},
        {"type": "string", "const": "normal"},
        {"description": "Before anything else.", "type": "string", "const": "high"}
    ]);
    assert_eq!(
        schema_of::<Priority>(),
        json!({
            "description": "How urgent: a string enum whose variants say what they mean.",
            "oneOf": branches
        })
    );
    let mut nullable = branches.as_array().unwrap().clone();
    nullable.push(json!({"type": "null"}));
    assert_eq!(
        schema_of::<Option<Priority>>(),
        json!({
            "description": "How urgent: a string enum whose variants say what they mean.",
            "oneOf": nullable
        })
    );
}

#[test]
fn every_kind_of_default_is_shown_as_the_json_the_decoder_reads_back() {
    let schema = schema_of::<Settings>();
    let props = &schema["properties"];
    // literals, written at compile time
    assert_eq!(
        props["limit"],
        json!({"description": "Results per page.", "type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u32, "default": 20})
    );
    assert_eq!(
        props["offset"],
        json!({"type": "number", "format": "double", "default": -1.5})
    );
    assert_eq!(
        props["ratio"],
        json!({"type": "number", "format": "float", "default": 0.1})
    );
    assert_eq!(
        props["note"],
        json!({"type": ["string", "null"], "default": null})
    );
    // computed once running: `Default`, a function, expressions of derived types
    assert_eq!(
        props["verbose"],
        json!({"type": "boolean", "default": false})
    );
    assert_eq!(
        props["name"],
        json!({"type": "string", "default": "report"})
    );
    assert_eq!(
        props["priority"],
        with_default(schema_of::<Priority>(), json!("high"))
    );
    assert_eq!(
        props["fallback"],
        with_default(schema_of::<Priority>(), json!("normal"))
    );
    assert_eq!(
        props["payment"],
        with_default(
            schema_of::<Payment>(),
            json!({"kind": "card", "last4": "0000"})
        )
    );
    assert_eq!(
        props["changes"],
        json!({
            "type": "array",
            "items": schema_of::<Change>(),
            "default": [{"op": "Clear"}, {"op": "Move", "with": {"from": 1, "to": 2}}]
        })
    );
    // nothing is required, and nothing else is there
    assert_eq!(schema.get("required"), None);
    // in declaration order in the text (a `Value`'s map may sort them)
    assert_eq!(
        toolnexus_tests::keys_in_order_at(&schema_text::<Settings>(None), &["properties"]),
        [
            "limit", "offset", "verbose", "name", "priority", "fallback", "payment", "note",
            "changes", "ratio"
        ]
    );
}

#[test]
fn a_container_default_shows_each_field_of_the_default_value() {
    assert_eq!(
        schema_of::<Paging>(),
        json!({
            "description": "Defaults of the whole struct.",
            "type": "object",
            "properties": {
                "page": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u32, "default": 1},
                "size": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u32, "default": 50}
            },
            "additionalProperties": false
        })
    );
}

#[test]
fn a_schema_assembled_once_keeps_each_callers_description() {
    // the first call, with a description of its own, fills the type's cache; the cache holds
    // what follows the description, so later calls still start with theirs
    let first = schema_text::<Settings>(Some("Mine."));
    let second = schema_text::<Settings>(None);
    let own = r#"{"description":"Defaults of every kind, each shown in the schema.","#;
    assert!(
        first.starts_with(r#"{"description":"Mine.","type":"object""#),
        "{first}"
    );
    assert!(second.starts_with(own), "{second}");
    assert_eq!(
        first[r#"{"description":"Mine.","#.len()..],
        second[own.len()..]
    );
    assert_eq!(schema_text::<Settings>(None), second);
}
