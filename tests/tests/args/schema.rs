//! The schemas the derive writes.

use serde_json::json;
use toolnexus::__private::schema_of;

use crate::types::{Category, Expense, Lookup, Payment};

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
                "count": {"description": "How many of it.", "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
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
