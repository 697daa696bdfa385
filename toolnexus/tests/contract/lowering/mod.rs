//! The provider schema lowerings: OpenAI strict and Gemini, on schemas generated from real
//! Rust types and on hand-written ones, with exact expected JSON (key order included) and
//! exact errors.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolnexus::adapters::{gemini_schema, openai_strict_schema};
use toolnexus::{Error, FnTool, Toolkit, schema::input_schema_for};

/// Byte-exact comparison: `Value` equality ignores key order, the wire does not.
#[track_caller]
/// The lowered schema is exactly `expected`, with its keys sorted at every level (the order
/// toolnexus writes schemas in, whether or not serde_json's `preserve_order` is on).
fn assert_json(actual: &Value, expected: &Value) {
    let mut expected = expected.clone();
    expected.sort_all_objects();
    assert_eq!(actual.to_string(), expected.to_string());
}

/// [`assert_json`] for strict mode, which lists every property in `required`, sorted.
fn assert_strict_json(actual: &Value, expected: &Value) {
    fn sort_required(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if let (true, Value::Array(names)) = (key == "required", &mut *item) {
                        names.sort_by_key(ToString::to_string);
                    } else {
                        sort_required(item);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(sort_required),
            _ => {}
        }
    }
    let mut expected = expected.clone();
    sort_required(&mut expected);
    assert_json(actual, &expected);
}

fn strict(schema: &Value) -> Value {
    openai_strict_schema("t", schema).unwrap()
}

fn gemini(schema: &Value) -> Value {
    gemini_schema("t", schema).unwrap()
}

fn strict_err(schema: &Value) -> String {
    openai_strict_schema("t", schema).unwrap_err().to_string()
}

fn gemini_err(schema: &Value) -> String {
    gemini_schema("t", schema).unwrap_err().to_string()
}

/// Each schema of `cases` fails to `lower`, for `target`, naming the case's construct.
fn assert_refused(cases: &[(Value, &str)], lower: fn(&Value) -> String, target: &str) {
    for (schema, construct) in cases {
        assert_eq!(
            lower(schema),
            format!("tool `t` cannot be sent to {target}: {construct}"),
            "for {schema}"
        );
    }
}

// ---- real Rust types ----

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Passenger {
    /// Full name.
    name: String,
    /// Frequent-flyer number.
    loyalty: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only the schema is used
enum Cabin {
    Economy,
    Business,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)] // only the schema is used
enum Payment {
    Card { last4: String },
    Voucher { code: String, amount: Option<f64> },
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Booking {
    /// Flight number.
    flight: String,
    /// Seats wanted.
    seats: Option<u8>,
    passengers: Vec<Passenger>,
    lead: Option<Passenger>,
    cabin: Cabin,
    meal: Option<Cabin>,
    payment: Payment,
    #[serde(default)]
    notify: bool,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Category {
    /// The name.
    name: String,
    /// Sub-categories.
    children: Vec<Category>,
    parent: Option<Box<Category>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Catalog {
    title: String,
    root: Category,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Tagged {
    name: String,
    /// Counts per tag.
    counts: HashMap<String, u32>,
}

#[test]
fn generated_schema_of_a_booking_is_what_the_lowerings_start_from() {
    // pinned so that the lowering goldens below read against their input
    assert_json(
        &input_schema_for::<Booking>(),
        &json!({
            "type": "object",
            "properties": {
                "flight": {"type": "string", "description": "Flight number."},
                "seats": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255, "description": "Seats wanted."},
                "passengers": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"description": "Full name.", "type": "string"},
                        "loyalty": {"description": "Frequent-flyer number.", "type": ["string", "null"]}
                    },
                    "required": ["name"]
                }},
                "lead": {
                    "type": ["object", "null"],
                    "properties": {
                        "name": {"type": "string", "description": "Full name."},
                        "loyalty": {"type": ["string", "null"], "description": "Frequent-flyer number."}
                    },
                    "required": ["name"]
                },
                "cabin": {"type": "string", "enum": ["economy", "business"]},
                "meal": {"type": ["string", "null"], "enum": ["economy", "business", null]},
                "payment": {"oneOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "card"}, "last4": {"type": "string"}}, "required": ["kind", "last4"]},
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "voucher"}, "code": {"type": "string"}, "amount": {"type": ["number", "null"], "format": "double"}}, "required": ["kind", "code"]}
                ]},
                "notify": {"type": "boolean", "default": false}
            },
            "required": ["flight", "passengers", "cabin", "payment"]
        }),
    );
}

#[test]
fn strict_lowering_of_a_booking() {
    assert_strict_json(
        &strict(&input_schema_for::<Booking>()),
        &json!({
            "type": "object",
            "properties": {
                "flight": {"type": "string", "description": "Flight number."},
                // already nullable: no second null; `format: uint8` is not a strict format
                "seats": {"type": ["integer", "null"], "minimum": 0, "maximum": 255, "description": "Seats wanted."},
                "passengers": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"description": "Full name.", "type": "string"},
                        "loyalty": {"description": "Frequent-flyer number.", "type": ["string", "null"]}
                    },
                    "required": ["name", "loyalty"],
                    "additionalProperties": false
                }},
                "lead": {
                    "type": ["object", "null"],
                    "properties": {
                        "name": {"type": "string", "description": "Full name."},
                        "loyalty": {"type": ["string", "null"], "description": "Frequent-flyer number."}
                    },
                    "required": ["name", "loyalty"],
                    "additionalProperties": false
                },
                "cabin": {"type": "string", "enum": ["economy", "business"]},
                "meal": {"type": ["string", "null"], "enum": ["economy", "business", null]},
                "payment": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "card"}, "last4": {"type": "string"}}, "required": ["kind", "last4"], "additionalProperties": false},
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "voucher"}, "code": {"type": "string"}, "amount": {"type": ["number", "null"]}}, "required": ["kind", "code", "amount"], "additionalProperties": false}
                ]},
                // optional through `#[serde(default)]`: nullable, its default dropped
                "notify": {"type": ["boolean", "null"]}
            },
            "required": ["flight", "seats", "passengers", "lead", "cabin", "meal", "payment", "notify"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn gemini_lowering_of_a_booking() {
    assert_json(
        &gemini(&input_schema_for::<Booking>()),
        &json!({
            "type": "object",
            "properties": {
                "flight": {"type": "string", "description": "Flight number."},
                "seats": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 255, "description": "Seats wanted."},
                "passengers": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"description": "Full name.", "type": "string"},
                        "loyalty": {"description": "Frequent-flyer number.", "type": "string", "nullable": true}
                    },
                    "required": ["name"]
                }},
                "lead": {
                    "type": "object",
                    "nullable": true,
                    "properties": {
                        "name": {"type": "string", "description": "Full name."},
                        "loyalty": {"type": "string", "nullable": true, "description": "Frequent-flyer number."}
                    },
                    "required": ["name"]
                },
                "cabin": {"type": "string", "enum": ["economy", "business"]},
                "meal": {"type": "string", "nullable": true, "enum": ["economy", "business"]},
                "payment": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "enum": ["card"]}, "last4": {"type": "string"}}, "required": ["kind", "last4"]},
                    {"type": "object", "properties": {"kind": {"type": "string", "enum": ["voucher"]}, "code": {"type": "string"}, "amount": {"type": "number", "nullable": true, "format": "double"}}, "required": ["kind", "code"]}
                ]},
                "notify": {"type": "boolean"}
            },
            "required": ["flight", "passengers", "cabin", "payment"]
        }),
    );
}

const CATEGORY_STRICT_PROPERTIES: &str = r##"{"children":{"description":"Sub-categories.","items":{"$ref":"#/$defs/Category"},"type":"array"},"name":{"description":"The name.","type":"string"},"parent":{"anyOf":[{"$ref":"#/$defs/Category"},{"type":"null"}]}}"##;

#[test]
fn a_recursive_root_type_keeps_its_self_reference_in_strict_mode() {
    let schema = input_schema_for::<Category>();
    assert_json(
        &schema,
        &json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name."},
                "children": {"type": "array", "items": {"$ref": "#"}, "description": "Sub-categories."},
                "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
            },
            "required": ["name", "children"]
        }),
    );
    assert_strict_json(
        &strict(&schema),
        &json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name."},
                "children": {"type": "array", "items": {"$ref": "#"}, "description": "Sub-categories."},
                "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
            },
            "required": ["name", "children", "parent"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn a_recursive_nested_type_keeps_its_defs_in_strict_mode() {
    let lowered = strict(&input_schema_for::<Catalog>());
    let expected = format!(
        r#"{{"$defs":{{"Category":{{"additionalProperties":false,"properties":{CATEGORY_STRICT_PROPERTIES},"required":["children","name","parent"],"type":"object"}}}},"additionalProperties":false,"properties":{{"root":{{"additionalProperties":false,"properties":{CATEGORY_STRICT_PROPERTIES},"required":["children","name","parent"],"type":"object"}},"title":{{"type":"string"}}}},"required":["root","title"],"type":"object"}}"#
    );
    assert_eq!(lowered.to_string(), expected);
}

#[test]
fn a_recursive_type_cannot_go_to_gemini() {
    assert_eq!(
        gemini_err(&input_schema_for::<Category>()),
        "tool `t` cannot be sent to gemini: recursive type (the root schema): a `$ref` to `#` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined) at /properties/children/items"
    );
    let err = gemini_schema("catalog", &input_schema_for::<Catalog>()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `catalog` cannot be sent to gemini: recursive type `Category`: a `$ref` to `#/$defs/Category` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined) at /properties/root/properties/children/items"
    );
    let Error::SchemaLowering {
        tool,
        target,
        construct,
        pointer,
    } = err
    else {
        panic!("a lowering error")
    };
    assert_eq!((tool.as_str(), target), ("catalog", "gemini"));
    assert!(construct.starts_with("recursive type `Category`"));
    assert_eq!(pointer, "/properties/root/properties/children/items");
}

#[test]
fn a_map_field_cannot_go_to_strict_mode_and_is_dropped_for_gemini() {
    let schema = input_schema_for::<Tagged>();
    let err = openai_strict_schema("tag_counts", &schema).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `tag_counts` cannot be sent to openai strict: a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties) at /properties/counts"
    );
    assert!(matches!(
        err,
        Error::SchemaLowering {
            target: "openai strict",
            ..
        }
    ));
    assert_json(
        &gemini(&schema),
        &json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "counts": {"type": "object", "description": "Counts per tag."}
            },
            "required": ["name", "counts"]
        }),
    );
}

#[test]
fn toolkit_lowerings_name_the_tool() {
    let kit = Toolkit::builder()
        .tool(
            FnTool::builder("browse")
                .description("Browses categories.")
                .schema_for::<Catalog>()
                .handler(|_, _| async { "" })
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    assert_eq!(
        kit.to_gemini().unwrap_err().to_string(),
        "tool `browse` cannot be sent to gemini: recursive type `Category`: a `$ref` to `#/$defs/Category` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined) at /properties/root/properties/children/items"
    );
    let strict_tools = kit.to_openai_strict().unwrap();
    assert_eq!(strict_tools[0]["function"]["strict"], json!(true));
    assert_eq!(
        strict_tools[0]["function"]["parameters"]["$defs"]["Category"]["additionalProperties"],
        json!(false)
    );
}

mod gemini;
mod strict;
