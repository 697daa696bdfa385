//! Hand-written schemas lowered for Gemini, and what both lowerings share: an input left
//! untouched, unused definitions left out, errors that carry the construct and its pointer.

use super::*;

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
