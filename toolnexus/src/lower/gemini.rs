//! The Gemini lowering: an OpenAPI 3.0 subset, every `$ref` inlined, unions with `null` as
//! `nullable`, `enum` values as strings.

use serde_json::{Map, Value};

use super::pointer::escape_pointer;
use super::shared::{ARRAY_WITHOUT_ITEMS, Lowering, Node, Target};
use crate::error::Result;

/// The target name of the Gemini lowering, as `Error::SchemaLowering` reports it.
const TARGET_GEMINI: &str = "gemini";

/// Keywords Gemini cannot express and that cannot be dropped without changing which arguments
/// are valid, besides those neither target can ([`UNSUPPORTED`](super::shared::UNSUPPORTED)).
const GEMINI_UNSUPPORTED: &[(&str, &str)] = &[];

/// Keywords kept as they are by the Gemini lowering (besides the structural ones it rewrites).
const GEMINI_KEPT: &[&str] = &[
    "description",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// Lowers a tool's input schema to what Gemini accepts as a function declaration's
/// `parameters` (a subset of OpenAPI 3.0).
///
/// - `$ref`s are inlined and `$defs`/`definitions` removed;
/// - a type array becomes one type plus `"nullable": true` (`["string", "null"]` ->
///   `"type": "string", "nullable": true`), and so does an `anyOf`/`oneOf` with a `{"type":
///   "null"}` branch (a single remaining branch is merged into its parent); `oneOf` becomes
///   `anyOf`, a one-branch `allOf` is merged into its parent;
/// - `const` becomes a one-value `enum`; `enum` values become strings (as Gemini requires),
///   a `null` value becoming `"nullable": true`; an `enum` without a `type` gets the type its
///   values share;
/// - an empty `properties` (a tool without arguments) is dropped, with an empty `required`:
///   Gemini rejects an object type whose `properties` is empty;
/// - `format` is kept only where Gemini supports it (`float`/`double` on numbers,
///   `int32`/`int64` on integers, `enum`/`date-time` on strings);
/// - `additionalProperties`, `patternProperties`, `$schema`, `title`, `default`, `examples`,
///   `exclusiveMinimum`/`exclusiveMaximum` and unknown keywords are dropped.
///
/// # Errors
///
/// [`Error::SchemaLowering`] (target `gemini`) for a construct Gemini cannot express, with its
/// location: a recursive type (a `$ref` cycle), a type union other than with `null`, a
/// `null`-only type, an array without `items`, a `false` schema, a tuple (`prefixItems`),
/// `not`, `if`/`then`/`else`, a several-branch `allOf`, a `$ref` that is not `#`,
/// `#/$defs/..` or `#/definitions/..`.
///
/// [`Error::SchemaLowering`]: crate::Error::SchemaLowering
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": ["string", "null"], "format": "hostname"}},
///     "additionalProperties": false
/// });
/// assert_eq!(
///     toolnexus::adapters::gemini_schema("weather", &schema).unwrap(),
///     json!({"type": "object", "properties": {"city": {"type": "string", "nullable": true}}})
/// );
/// ```
pub fn gemini_schema(tool: &str, schema: &Value) -> Result<Value> {
    let mut lowering = Lowering::new(tool, TARGET_GEMINI, schema)?;
    let mut lowered = lowering.gemini(schema, "")?;
    // sorted keys in every build, as every schema toolnexus writes
    lowered.sort_all_objects();
    Ok(lowered)
}

impl Lowering<'_> {
    fn gemini(&mut self, schema: &Value, path: &str) -> Result<Value> {
        self.deeper(path, |l| l.gemini_node(schema, path))
    }

    fn gemini_node(&mut self, schema: &Value, path: &str) -> Result<Value> {
        let obj = match self.node(schema, GEMINI_UNSUPPORTED, path)? {
            Node::Object(obj) => obj,
            Node::Any => return Ok(Value::Object(Map::new())),
            Node::Ref(obj, reference) => return self.gemini_ref(obj, reference, path),
            Node::Merged(merged) => return self.gemini(&Value::Object(merged), path),
        };

        // one type, plus whether `null` is allowed
        let (mut single_type, type_nullable) = self.gemini_type(obj, path)?;
        if single_type.as_deref() == Some("array") && !obj.contains_key("items") {
            return Err(self.fail(ARRAY_WITHOUT_ITEMS, path));
        }
        let mut nullable = type_nullable || obj.get("nullable") == Some(&Value::Bool(true));

        // `anyOf`/`oneOf`: null branches become `nullable`; one branch left merges up
        let branches = self.gemini_branches(obj, path, &mut nullable)?;

        let mut out = Map::new();
        for (key, value) in obj {
            match key.as_str() {
                "type" => {
                    if let Some(t) = &single_type {
                        out.insert("type".to_owned(), Value::String(t.clone()));
                    }
                }
                "properties" => {
                    let Value::Object(props) = value else {
                        return Err(self.fail("a `properties` that is not an object", path));
                    };
                    let mut lowered = Map::new();
                    for (name, prop) in props {
                        let prop_path = format!("{path}/properties/{}", escape_pointer(name));
                        lowered.insert(name.clone(), self.gemini(prop, &prop_path)?);
                    }
                    out.insert(key.clone(), Value::Object(lowered));
                }
                "required" => {
                    if !is_names(value) {
                        return Err(self.fail("a `required` that is not a list of names", path));
                    }
                    out.insert(key.clone(), value.clone());
                }
                "items" => {
                    let items = self.gemini(value, &format!("{path}/items"))?;
                    out.insert(key.clone(), items);
                }
                "enum" => {
                    let values = self.gemini_enum(value, path, &mut nullable)?;
                    out.insert(key.clone(), values);
                }
                "const" => {
                    let (value, inferred) = self.gemini_const(value, path)?;
                    if single_type.is_none() && !obj.contains_key("enum") {
                        single_type = Some(inferred.to_owned());
                        out.insert("type".to_owned(), Value::String(inferred.to_owned()));
                    }
                    out.insert("enum".to_owned(), Value::Array(vec![value]));
                }
                "format" if gemini_format_supported(single_type.as_deref(), value) => {
                    out.insert(key.clone(), value.clone());
                }
                k if GEMINI_KEPT.contains(&k) => {
                    if let Some(expected) = kept_mismatch(k, value) {
                        return Err(self.fail(&format!("a `{k}` that is not {expected}"), path));
                    }
                    out.insert(key.clone(), value.clone());
                }
                // `anyOf`/`oneOf` (below), `nullable` (placed at the end), `$schema`,
                // `$defs`, `title`, `default`, `additionalProperties`, unknown keywords
                _ => {}
            }
        }
        if let Some(mut branches) = branches {
            if branches.len() == 1 {
                // the one non-null branch is the schema; the parent's own keywords win
                if let Value::Object(mut merged) = branches.remove(0) {
                    nullable |= crate::json_text::remove_key(&mut merged, "nullable")
                        == Some(Value::Bool(true));
                    merged.extend(out);
                    out = merged;
                }
            } else {
                out.insert("anyOf".to_owned(), Value::Array(branches));
            }
        }
        let out = gemini_finish(out, obj);
        Ok(Value::Object(place_nullable(out, nullable)))
    }

    /// The one type of a schema and whether its type list allowed `null`.
    fn gemini_type(&self, obj: &Map<String, Value>, path: &str) -> Result<(Option<String>, bool)> {
        match obj.get("type") {
            None => Ok((None, false)),
            Some(Value::String(t)) if t == "null" => Err(self.fail("a `null`-only type", path)),
            Some(Value::String(t)) => Ok((Some(t.clone()), false)),
            Some(Value::Array(types)) => {
                let mut nullable = false;
                let mut rest: Vec<&str> = Vec::new();
                for t in types {
                    match t.as_str() {
                        Some("null") => nullable = true,
                        Some(t) => rest.push(t),
                        None => return Err(self.fail("a `type` entry that is not a string", path)),
                    }
                }
                match rest.as_slice() {
                    [] => Err(self.fail("a `null`-only type", path)),
                    [t] => Ok((Some((*t).to_owned()), nullable)),
                    many => Err(self.fail(
                        &format!(
                            "a union of types [{}] (Gemini takes one type; use `anyOf`)",
                            many.join(", ")
                        ),
                        path,
                    )),
                }
            }
            Some(_) => Err(self.fail("a `type` that is not a string or an array", path)),
        }
    }

    /// The lowered non-null branches of `anyOf`/`oneOf`; a null branch sets `nullable`.
    fn gemini_branches(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        nullable: &mut bool,
    ) -> Result<Option<Vec<Value>>> {
        let mut branches = None;
        for key in ["anyOf", "oneOf"] {
            let Some(value) = obj.get(key) else { continue };
            let Value::Array(items) = value else {
                return Err(self.fail(&format!("a `{key}` that is not an array"), path));
            };
            let mut lowered = Vec::new();
            for (i, branch) in items.iter().enumerate() {
                if is_null_schema(branch) {
                    *nullable = true;
                    continue;
                }
                lowered.push(self.gemini(branch, &format!("{path}/{key}/{i}"))?);
            }
            if lowered.is_empty() {
                return Err(self.fail("a `null`-only type", path));
            }
            branches = Some(lowered);
        }
        Ok(branches)
    }

    /// An `enum` with string values; a `null` value sets `nullable`.
    fn gemini_enum(&self, value: &Value, path: &str, nullable: &mut bool) -> Result<Value> {
        let Value::Array(values) = value else {
            return Err(self.fail("an `enum` that is not an array", path));
        };
        let mut strings = Vec::new();
        for v in values {
            match v {
                Value::Null => *nullable = true,
                Value::String(_) => strings.push(v.clone()),
                Value::Number(_) | Value::Bool(_) => strings.push(Value::String(v.to_string())),
                _ => return Err(self.fail("an `enum` value that is an array or object", path)),
            }
        }
        Ok(Value::Array(strings))
    }

    /// A `const` as its one `enum` value (a string) and the type it implies.
    fn gemini_const(&self, value: &Value, path: &str) -> Result<(Value, &'static str)> {
        match value {
            Value::String(_) => Ok((value.clone(), "string")),
            Value::Bool(_) => Ok((Value::String(value.to_string()), "boolean")),
            Value::Number(n) if n.is_f64() => Ok((Value::String(value.to_string()), "number")),
            Value::Number(_) => Ok((Value::String(value.to_string()), "integer")),
            Value::Null => Err(self.fail("a `null`-only type (`const: null`)", path)),
            _ => Err(self.fail("a `const` value that is an array or object", path)),
        }
    }

    fn gemini_ref(
        &mut self,
        obj: &Map<String, Value>,
        reference: &str,
        path: &str,
    ) -> Result<Value> {
        let target = self.parse_ref(reference, path)?;
        let name = match &target {
            Target::Root => "(the root schema)".to_owned(),
            Target::Def(name) => format!("`{name}`"),
        };
        if self.recursive.contains(&target) {
            return Err(self.fail(
                &format!(
                    "recursive type {name}: a `$ref` to `{reference}` within itself (Gemini takes no `$ref`, and a recursive type cannot be inlined)"
                ),
                path,
            ));
        }
        let Target::Def(def_name) = target else {
            return Err(self.fail("a `$ref` to `#` outside the root's own tree", path));
        };
        if self.inlining.contains(&def_name) {
            return Err(self.fail(&format!("recursive type {name}"), path));
        }
        let merged = self.inline(&def_name, obj, path)?;
        self.inlining.push(def_name);
        let result = self.gemini(&merged, path);
        self.inlining.pop();
        result
    }
}

/// The last touches of a Gemini schema: no empty `properties`, a type on an untyped `enum`.
fn gemini_finish(mut out: Map<String, Value>, obj: &Map<String, Value>) -> Map<String, Value> {
    // Gemini rejects an empty `properties` ("should be non-empty for OBJECT type")
    if out
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        crate::json_text::remove_key(&mut out, "properties");
        if out
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            crate::json_text::remove_key(&mut out, "required");
        }
    }
    // an `enum` without a type: Gemini's enums are typed
    if !out.contains_key("type")
        && let Some(Value::Array(values)) = obj.get("enum")
        && let Some(ty) = enum_type(values)
    {
        let mut typed = Map::new();
        typed.insert("type".to_owned(), Value::String(ty.to_owned()));
        typed.extend(out);
        out = typed;
    }
    out
}

/// Whether `value` is a list of names (strings), as `required` and `propertyOrdering` are.
fn is_names(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|names| names.iter().all(Value::is_string))
}

/// What a kept keyword's value must be, when `value` is not that: a text (`description`,
/// `pattern`), a list of names (`propertyOrdering`) or a number (the bounds). Kept keywords
/// are copied as they are, so a schema (or a `$ref`) hidden in one would reach Gemini.
fn kept_mismatch(key: &str, value: &Value) -> Option<&'static str> {
    match key {
        "description" | "pattern" if !value.is_string() => Some("a string"),
        "propertyOrdering" if !is_names(value) => Some("a list of names"),
        "description" | "pattern" | "propertyOrdering" => None,
        _ if !value.is_number() => Some("a number"),
        _ => None,
    }
}

/// The one JSON type of an `enum`'s non-null values, if they share one.
fn enum_type(values: &[Value]) -> Option<&'static str> {
    let mut ty = None;
    for v in values {
        let this = match v {
            Value::Null => continue,
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() => "number",
            Value::Number(_) => "integer",
            _ => return None,
        };
        match ty {
            None => ty = Some(this),
            Some(t) if t == this => {}
            Some(_) => return None,
        }
    }
    ty
}

/// Whether Gemini supports `format` on a schema of type `ty`.
fn gemini_format_supported(ty: Option<&str>, format: &Value) -> bool {
    match (ty, format.as_str()) {
        (Some("number"), Some(f)) => ["float", "double"].contains(&f),
        (Some("integer"), Some(f)) => ["int32", "int64"].contains(&f),
        (Some("string"), Some(f)) => ["enum", "date-time"].contains(&f),
        _ => false,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|o| o.get("type").and_then(Value::as_str) == Some("null"))
}

/// `"nullable": true` right after `type` (or last when there is no `type`), when `nullable`.
fn place_nullable(obj: Map<String, Value>, nullable: bool) -> Map<String, Value> {
    if !nullable {
        return obj;
    }
    let mut out = Map::new();
    for (k, v) in obj {
        if k == "nullable" {
            continue;
        }
        let is_type = k == "type";
        out.insert(k, v);
        if is_type {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
    }
    out.entry("nullable").or_insert(Value::Bool(true));
    out
}
