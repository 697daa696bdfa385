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

// ---- hand-written schemas: OpenAI strict ----

#[test]
fn strict_optional_properties_become_nullable_without_double_null() {
    let schema = json!({
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "already": {"type": ["string", "null"]},
            "multi": {"type": ["string", "integer"]},
            "color": {"type": "string", "enum": ["red", "green"]},
            "untyped_enum": {"enum": ["a", "b"]},
            "fixed": {"const": "x", "description": "Always x."},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "either_or_null": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "req": {"type": "integer"}
        },
        "required": ["req"]
    });
    assert_strict_json(
        &strict(&schema),
        &json!({
            "type": "object",
            "properties": {
                "s": {"type": ["string", "null"]},
                "already": {"type": ["string", "null"]},
                "multi": {"type": ["string", "integer", "null"]},
                "color": {"type": ["string", "null"], "enum": ["red", "green", null]},
                "untyped_enum": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]},
                "fixed": {"anyOf": [{"const": "x"}, {"type": "null"}], "description": "Always x."},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "either_or_null": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "req": {"type": "integer"}
            },
            "required": ["s", "already", "multi", "color", "untyped_enum", "fixed", "either", "either_or_null", "req"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_reaches_every_nested_object() {
    let schema = json!({
        "type": "object",
        "properties": {
            "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "choice": {"oneOf": [
                {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                {"type": "object"}
            ]},
            "merged": {"allOf": [{"type": "object", "properties": {"m": {"type": "boolean"}}}], "description": "One branch."}
        },
        "required": ["list", "choice", "merged"]
    });
    assert_strict_json(
        &strict(&schema),
        &json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"], "additionalProperties": false}},
                "choice": {"anyOf": [
                    {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false},
                    {"type": "object", "properties": {}, "required": [], "additionalProperties": false}
                ]},
                "merged": {"type": "object", "properties": {"m": {"type": ["boolean", "null"]}}, "description": "One branch.", "required": ["m"], "additionalProperties": false}
            },
            "required": ["list", "choice", "merged"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_inlines_non_recursive_defs_and_keeps_recursive_ones() {
    let schema = json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address", "description": "Where they live."},
            "work": {"$ref": "#/definitions/Address"},
            "tree": {"$ref": "#/definitions/Node", "description": "A tree."}
        },
        "required": ["home", "tree"],
        "$defs": {
            "Address": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}
        },
        "definitions": {
            "Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}, "required": ["kids"]},
            "Unused": {"type": "string"}
        }
    });
    assert_strict_json(
        &strict(&schema),
        &json!({
            "type": "object",
            "properties": {
                // the use site's description on the inlined definition; `required` and
                // `additionalProperties` always close an object schema
                "home": {"type": "object", "properties": {"street": {"type": "string"}}, "description": "Where they live.", "required": ["street"], "additionalProperties": false},
                // optional: an inlined definition with a simple type takes `null` in its type
                "work": {"type": ["object", "null"], "properties": {"street": {"type": "string"}}, "required": ["street"], "additionalProperties": false},
                "tree": {"anyOf": [{"$ref": "#/$defs/Node"}], "description": "A tree."}
            },
            "required": ["home", "work", "tree"],
            "additionalProperties": false,
            "$defs": {
                "Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["kids"], "additionalProperties": false}
            }
        }),
    );
}

#[test]
fn strict_keeps_supported_keywords_and_drops_the_rest() {
    let schema = json!({
        "type": "object",
        "title": "Root",
        "properties": {
            "when": {"type": "string", "format": "date-time", "pattern": "^2", "minLength": 1, "maxLength": 30},
            "id": {"type": "string", "format": "uri"},
            "n": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0, "maximum": 10, "default": 1, "examples": [2]},
            "list": {"type": "array", "items": {"type": "integer", "format": "int64"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
            "x-vendor": {"type": "boolean", "x-extra": 1, "deprecated": true, "readOnly": true}
        },
        "required": ["when", "id", "n", "list", "x-vendor"],
        "additionalProperties": false
    });
    assert_strict_json(
        &strict(&schema),
        &json!({
            "type": "object",
            "title": "Root",
            "properties": {
                "when": {"type": "string", "format": "date-time", "pattern": "^2"},
                "id": {"type": "string"},
                "n": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0, "maximum": 10},
                "list": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
                "x-vendor": {"type": "boolean"}
            },
            "required": ["when", "id", "n", "list", "x-vendor"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_reports_what_it_cannot_express_with_its_location() {
    let cases = [
        (
            json!({"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            "a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties) at /properties/tags",
        ),
        (
            json!({"type": "object", "additionalProperties": true}),
            "a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties) at the root",
        ),
        (
            json!({"type": "object", "properties": {"env": {"type": "object", "patternProperties": {"^[A-Z]+$": {"type": "string"}}}}}),
            "`patternProperties` (keys matched by pattern) at /properties/env",
        ),
        (
            json!({"type": "object", "properties": {"data": {}}}),
            "a value of any type (a schema without `type`, `enum`, `const` or `anyOf`: strict mode needs one) at /properties/data",
        ),
        (
            json!({"type": "object", "properties": {"data": true}}),
            "a value of any type (`true`: strict mode needs a `type`) at /properties/data",
        ),
        (
            json!({"type": "object", "properties": {"never": false}}),
            "a `false` schema (no valid value) at /properties/never",
        ),
        (
            json!({"type": "object", "properties": {"list": {"type": ["array", "null"]}}}),
            "an array without `items` (elements of any type) at /properties/list",
        ),
        (
            json!({"type": "object", "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}}}),
            "a tuple (`prefixItems`) at /properties/pair",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"not": {"type": "string"}}}}}),
            "`not` (a negated schema) at /properties/a/items",
        ),
        (
            json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 2}]}}}),
            "an `allOf` of several schemas (an intersection of types) at /properties/a",
        ),
        (
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"if": {"type": "string"}}]}}}),
            "`if`/`then`/`else` (a conditional schema) at /properties/a/anyOf/1",
        ),
        (
            json!({"type": "object", "properties": {"a~b/c": {"type": "object", "propertyNames": {"pattern": "^x"}}}}),
            "`propertyNames` (constrained keys) at /properties/a~0b~1c",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/schema.json"}}}),
            "a `$ref` to `https://example.com/schema.json` (only `#`, `#/$defs/<name>` and `#/definitions/<name>` are supported) at /properties/a",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}),
            "a `$ref` to `#/$defs/Missing`, which is not defined at /properties/a",
        ),
    ];
    assert_refused(&cases, strict_err, "openai strict");
}

#[test]
fn strict_output_has_pinned_key_order_in_the_tool_shape() {
    let kit = Toolkit::builder()
        .tool(
            FnTool::builder("seat")
                .description("Picks a seat.")
                .schema(json!({"type": "object", "properties": {"row": {"type": "integer"}}}))
                .handler(|_, _| async { "" })
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    assert_eq!(
        kit.to_openai_strict().unwrap().to_string(),
        r#"[{"type":"function","function":{"name":"seat","description":"Picks a seat.","parameters":{"additionalProperties":false,"properties":{"row":{"type":["integer","null"]}},"required":["row"],"type":"object"},"strict":true}}]"#
    );
}

// ---- hand-written schemas: Gemini ----

#[test]
fn gemini_nullable_forms() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Args",
        "properties": {
            "a": {"type": ["string", "null"], "description": "A."},
            "b": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "description": "B."},
            "c": {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]},
            "d": {"enum": ["x", null]},
            "e": {"type": "string", "nullable": true}
        },
        "additionalProperties": false
    });
    assert_json(
        &gemini(&schema),
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "nullable": true, "description": "A."},
                "b": {"type": "integer", "nullable": true, "minimum": 1, "description": "B."},
                "c": {"anyOf": [{"type": "string"}, {"type": "number"}], "nullable": true},
                "d": {"type": "string", "nullable": true, "enum": ["x"]},
                "e": {"type": "string", "nullable": true}
            }
        }),
    );
}

#[test]
fn gemini_inlines_refs_and_drops_defs() {
    let schema = json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address", "description": "Home."},
            "work": {"anyOf": [{"$ref": "#/definitions/Address"}, {"type": "null"}]}
        },
        "required": ["home"],
        "$defs": {"Address": {"type": "object", "title": "Address", "properties": {"street": {"type": "string"}}, "required": ["street"]}},
        "definitions": {"Address": {"type": "object", "properties": {"street": {"type": "string"}}}}
    });
    assert_json(
        &gemini(&schema),
        &json!({
            "type": "object",
            "properties": {
                "home": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"], "description": "Home."},
                "work": {"type": "object", "nullable": true, "properties": {"street": {"type": "string"}}, "required": ["street"]}
            },
            "required": ["home"]
        }),
    );
}

#[test]
fn gemini_const_enum_and_format() {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": {"const": "card"},
            "level": {"const": 3},
            "size": {"type": "integer", "enum": [1, 2]},
            "when": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "big": {"type": "integer", "format": "int64"},
            "small": {"type": "integer", "format": "uint8", "exclusiveMinimum": 0},
            "ratio": {"type": "number", "format": "float", "default": 0.5},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5, "uniqueItems": true},
            "env": {"type": "object", "patternProperties": {"^A": {"type": "string"}}}
        }
    });
    assert_json(
        &gemini(&schema),
        &json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["card"]},
                "level": {"type": "integer", "enum": ["3"]},
                "size": {"type": "integer", "enum": ["1", "2"]},
                "when": {"type": "string", "format": "date-time"},
                "id": {"type": "string"},
                "big": {"type": "integer", "format": "int64"},
                "small": {"type": "integer"},
                "ratio": {"type": "number", "format": "float"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
                "env": {"type": "object"}
            }
        }),
    );
}

#[test]
fn gemini_reports_what_it_cannot_express_with_its_location() {
    let cases = [
        (
            json!({"type": "object", "properties": {"v": {"type": ["string", "integer", "null"]}}}),
            "a union of types [string, integer] (Gemini takes one type; use `anyOf`) at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"v": {"type": "null"}}}),
            "a `null`-only type at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "null"}]}}}),
            "a `null`-only type at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"}]}}}),
            "a tuple (`prefixItems`) at /properties/pair",
        ),
        (
            json!({"type": "object", "properties": {"v": false}}),
            "a `false` schema (no valid value) at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"list": {"type": "array"}}}),
            "an array without `items` (elements of any type) at /properties/list",
        ),
        (
            json!({"type": "object", "properties": {"v": {"allOf": [{"type": "string"}, {"type": "string"}]}}}),
            "an `allOf` of several schemas (an intersection of types) at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"type": "array", "items": {"$ref": "#/$defs/A"}}}}),
            "recursive type `A`: a `$ref` to `#/$defs/A` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined) at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"v": {"$ref": "other.json#/x"}}}),
            "a `$ref` to `other.json#/x` (only `#`, `#/$defs/<name>` and `#/definitions/<name>` are supported) at /properties/v",
        ),
        // kept keywords are copied as they are: a schema hidden in one would reach Gemini
        // (found by the `lowering` fuzz target: a `$ref` inside an inlined def's `required`)
        (
            json!({"type": "object", "properties": {"home": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "object", "required": {"street": {"$ref": "#/x"}}}}}),
            "a `required` that is not a list of names at /properties/home",
        ),
        (
            json!({"type": "object", "properties": {"v": {"type": "string", "description": {"$ref": "#/x"}}}}),
            "a `description` that is not a string at /properties/v",
        ),
        (
            json!({"type": "object", "properties": {"v": {"type": "string", "maxLength": "5"}}}),
            "a `maxLength` that is not a number at /properties/v",
        ),
        (
            json!({"type": "object", "propertyOrdering": ["a", 1], "properties": {"a": {"type": "string"}}}),
            "a `propertyOrdering` that is not a list of names at the root",
        ),
    ];
    assert_refused(&cases, gemini_err, "gemini");
}

#[test]
fn gemini_drops_empty_properties() {
    // Gemini rejects `"properties": {}` ("should be non-empty for OBJECT type")
    let schema = json!({
        "type": "object",
        "properties": {"opts": {"type": "object", "properties": {}, "required": []}},
        "required": []
    });
    assert_json(
        &gemini(&schema),
        &json!({"type": "object", "properties": {"opts": {"type": "object"}}, "required": []}),
    );
    assert_json(
        &gemini(&json!({"type": "object", "properties": {}})),
        &json!({"type": "object"}),
    );
}

#[test]
fn gemini_keeps_an_any_value_schema_open() {
    let schema = json!({"type": "object", "properties": {"data": true, "more": {}}});
    assert_json(
        &gemini(&schema),
        &json!({"type": "object", "properties": {"data": {}, "more": {}}}),
    );
}

#[test]
fn lowering_leaves_the_input_untouched_and_is_repeatable() {
    let schema = input_schema_for::<Booking>();
    let before = schema.to_string();
    let once = strict(&schema);
    assert_eq!(schema.to_string(), before);
    assert_eq!(strict(&schema).to_string(), once.to_string());
    // lowering a lowered schema changes nothing
    assert_eq!(strict(&once).to_string(), once.to_string());
    let g = gemini(&schema);
    assert_eq!(gemini(&g).to_string(), g.to_string());
}

#[test]
fn unused_definitions_are_left_out_and_errors_point_into_the_used_ones() {
    let unused_only = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "$defs": {"Unused": {"$ref": "https://example.com/x.json"}}
    });
    assert_strict_json(
        &strict(&unused_only),
        &json!({
            "type": "object",
            "properties": {"a": {"type": ["string", "null"]}},
            "required": ["a"],
            "additionalProperties": false
        }),
    );
    assert_json(
        &gemini(&unused_only),
        &json!({"type": "object", "properties": {"a": {"type": "string"}}}),
    );

    let recursive_with_a_map = json!({
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/Node"}},
        "required": ["n"],
        "definitions": {
            "Node": {"type": "object", "properties": {
                "next": {"$ref": "#/definitions/Node"},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}}
            }}
        }
    });
    assert_eq!(
        strict_err(&recursive_with_a_map),
        "tool `t` cannot be sent to openai strict: a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties) at /definitions/Node/properties/meta"
    );
    assert_eq!(
        gemini_err(&recursive_with_a_map),
        "tool `t` cannot be sent to gemini: recursive type `Node`: a `$ref` to `#/definitions/Node` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined) at /properties/n"
    );
}

#[test]
fn a_lowering_error_carries_the_construct_and_its_pointer_apart() {
    let nested = json!({"type": "object", "properties": {"a/b": {"type": "object", "properties": {"x": {"not": {"type": "string"}}}}}});
    let Error::SchemaLowering {
        tool,
        target,
        construct,
        pointer,
    } = gemini_schema("t", &nested).unwrap_err()
    else {
        panic!("a lowering error")
    };
    assert_eq!((tool.as_str(), target), ("t", "gemini"));
    assert_eq!(construct, "`not` (a negated schema)");
    assert_eq!(pointer, "/properties/a~1b/properties/x");

    let root = json!({"type": "object", "additionalProperties": true});
    let err = openai_strict_schema("t", &root).unwrap_err();
    assert!(matches!(&err, Error::SchemaLowering { pointer, .. } if pointer.is_empty()));
    assert!(err.to_string().ends_with(" at the root"), "{err}");
}
