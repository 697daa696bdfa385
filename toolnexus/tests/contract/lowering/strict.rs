//! Hand-written schemas lowered for OpenAI strict mode.

use super::*;

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
