//! The OpenAI strict lowering: every object closed and fully required, optional properties
//! made nullable, recursive definitions kept under `$defs`.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value, json};

use super::pointer::escape_pointer;
use super::shared::{ARRAY_WITHOUT_ITEMS, Lowering, Node, Target, siblings};
use crate::error::Result;

/// The target name of the OpenAI strict lowering, as `Error::SchemaLowering` reports it.
const TARGET_OPENAI_STRICT: &str = "openai strict";

/// String formats OpenAI strict mode supports; any other `format` is dropped.
const OPENAI_STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode cannot express and that cannot be dropped without changing which
/// arguments are valid, besides those neither target can
/// ([`UNSUPPORTED`](super::shared::UNSUPPORTED)).
const STRICT_UNSUPPORTED: &[(&str, &str)] = &[
    (
        "patternProperties",
        "`patternProperties` (keys matched by pattern)",
    ),
    ("propertyNames", "`propertyNames` (constrained keys)"),
];

/// Keywords kept as they are by the OpenAI strict lowering (besides the structural ones it
/// rewrites: `type`, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
/// `oneOf`, `allOf`, `$ref`, `$defs`, `format`).
const STRICT_KEPT: &[&str] = &[
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// Lowers a tool's input schema to what OpenAI strict function calling accepts.
///
/// - every object schema (properties, items, `anyOf` branches, `$defs`, recursively) gets
///   `"additionalProperties": false`, and lists every property in `required`;
/// - a property that was optional becomes nullable: `"type": ["string", "null"]` (with `null`
///   added to an `enum`), or `{"anyOf": [<schema>, {"type": "null"}]}` for a schema without a
///   simple type; one that is already nullable is left as it is;
/// - `oneOf` becomes `anyOf`, a one-branch `allOf` is merged into its parent;
/// - non-recursive `$ref`s are inlined; recursive types keep `$ref` (`#` for the root,
///   `#/$defs/<name>` otherwise) with their definitions under the root `$defs`;
/// - annotations and refinements strict mode rejects (`default`, `examples`, `minLength`,
///   `maxLength`, `uniqueItems`, `minProperties`, `maxProperties`, unsupported `format`s,
///   unknown keywords) are dropped.
///
/// A model using the lowered schema sends `null` for an optional property it leaves out: an
/// `Option<T>` argument reads that as `None`.
///
/// # Errors
///
/// [`Error::SchemaLowering`] (target `openai strict`) for a construct strict mode cannot
/// express, with its location: a map (`additionalProperties` set to a schema or `true`),
/// `patternProperties`, `propertyNames`, a value of any type (`{}` or `true`), an array
/// without `items`, a `false` schema, a tuple (`prefixItems`), `not`, `if`/`then`/`else`, a
/// several-branch `allOf`, a `$ref` that is not `#`, `#/$defs/..` or `#/definitions/..`.
///
/// [`Error::SchemaLowering`]: crate::Error::SchemaLowering
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
///     "required": ["city"]
/// });
/// assert_eq!(
///     toolnexus::adapters::openai_strict_schema("weather", &schema).unwrap(),
///     json!({
///         "type": "object",
///         "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}},
///         "required": ["city", "days"],
///         "additionalProperties": false
///     })
/// );
/// ```
pub fn openai_strict_schema(tool: &str, schema: &Value) -> Result<Value> {
    let mut lowering = Lowering::new(tool, TARGET_OPENAI_STRICT, schema)?;
    let Value::Object(mut root) = lowering.strict(schema, "")? else {
        return Err(lowering.fail("a root schema that is not an object", ""));
    };
    // the recursive definitions the lowered schema refers to, lowered in turn
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut lowered_defs: Vec<(String, Value)> = Vec::new();
    while let Some(name) = lowering
        .referenced
        .iter()
        .find(|n| !done.contains(*n))
        .cloned()
    {
        done.insert(name.clone());
        let def = lowering.def(&name).cloned().unwrap_or(Value::Bool(true));
        let path = lowering.def_paths.get(&name).cloned().unwrap_or_default();
        let lowered = lowering.strict(&def, &path)?;
        lowered_defs.push((name, lowered));
    }
    if !lowered_defs.is_empty() {
        // keep the original definition order
        let order: Vec<String> = lowering.defs.keys().cloned().collect();
        lowered_defs.sort_by_key(|(n, _)| order.iter().position(|o| o == n));
        root.insert(
            "$defs".to_owned(),
            Value::Object(lowered_defs.into_iter().collect()),
        );
    }
    let mut lowered = Value::Object(root);
    // sorted keys in every build, as every schema toolnexus writes
    lowered.sort_all_objects();
    Ok(lowered)
}

impl Lowering<'_> {
    fn strict(&mut self, schema: &Value, path: &str) -> Result<Value> {
        self.deeper(path, |l| l.strict_node(schema, path))
    }

    fn strict_node(&mut self, schema: &Value, path: &str) -> Result<Value> {
        let obj = match self.node(schema, STRICT_UNSUPPORTED, path)? {
            Node::Object(obj) => obj,
            Node::Any => {
                return Err(self.fail(
                    "a value of any type (`true`: strict mode needs a `type`)",
                    path,
                ));
            }
            Node::Ref(obj, reference) => return self.strict_ref(obj, reference, path),
            Node::Merged(merged) => return self.strict(&Value::Object(merged), path),
        };

        if has_type(obj, "array") && !obj.contains_key("items") {
            return Err(self.fail(ARRAY_WITHOUT_ITEMS, path));
        }
        let is_object = has_type(obj, "object") || obj.contains_key("properties");
        let mut out = Map::new();
        let mut properties_out: Option<Map<String, Value>> = None;
        for (key, value) in obj {
            match key.as_str() {
                "type" => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let props = self.strict_properties(obj, value, path)?;
                    out.insert(key.clone(), Value::Object(props.clone()));
                    properties_out = Some(props);
                }
                "required" => {} // rebuilt below
                "additionalProperties" if is_object && value != &Value::Bool(false) => {
                    return Err(self.fail(
                        "a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties)",
                        path,
                    ));
                }
                "unevaluatedProperties" if is_object && value != &Value::Bool(false) => {
                    return Err(self.fail("`unevaluatedProperties`", path));
                }
                "items" => {
                    let items = self.strict(value, &format!("{path}/items"))?;
                    out.insert(key.clone(), items);
                }
                "anyOf" | "oneOf" => {
                    let lowered = self.strict_branches(key, value, path)?;
                    out.insert("anyOf".to_owned(), Value::Array(lowered));
                }
                "format"
                    if has_type(obj, "string")
                        && value
                            .as_str()
                            .is_some_and(|f| OPENAI_STRING_FORMATS.contains(&f)) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                k if STRICT_KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {} // annotations, refinements and unknown keywords strict mode rejects
            }
        }
        if is_object {
            let props = properties_out.unwrap_or_else(|| {
                out.insert("properties".to_owned(), Value::Object(Map::new()));
                Map::new()
            });
            // every property, in sorted order (the properties' own order is serde_json's map
            // order, which another crate's `preserve_order` would change)
            let mut names: Vec<&String> = props.keys().collect();
            names.sort_unstable();
            let required: Vec<Value> = names.into_iter().cloned().map(Value::String).collect();
            out.insert("required".to_owned(), Value::Array(required));
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        let constrained = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k));
        if !constrained {
            return Err(self.fail(
                "a value of any type (a schema without `type`, `enum`, `const` or `anyOf`: strict mode needs one)",
                path,
            ));
        }
        Ok(Value::Object(out))
    }

    fn strict_branches(&mut self, key: &str, value: &Value, path: &str) -> Result<Vec<Value>> {
        let Value::Array(branches) = value else {
            return Err(self.fail(&format!("a `{key}` that is not an array"), path));
        };
        let mut lowered = Vec::with_capacity(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            match self.strict(branch, &format!("{path}/{key}/{i}"))? {
                // a bare nested `anyOf` (an optional enum, say) is spliced in
                Value::Object(mut b) if b.len() == 1 && b.contains_key("anyOf") => {
                    if let Some(Value::Array(inner)) = crate::json_text::remove_key(&mut b, "anyOf")
                    {
                        lowered.extend(inner);
                    }
                }
                other => lowered.push(other),
            }
        }
        Ok(lowered)
    }

    fn strict_properties(
        &mut self,
        obj: &Map<String, Value>,
        properties: &Value,
        path: &str,
    ) -> Result<Map<String, Value>> {
        let Value::Object(props) = properties else {
            return Err(self.fail("a `properties` that is not an object", path));
        };
        let required: HashSet<&str> = crate::schema::required_names(obj).collect();
        let mut out = Map::new();
        for (name, prop) in props {
            let prop_path = format!("{path}/properties/{}", escape_pointer(name));
            let lowered = self.strict(prop, &prop_path)?;
            let lowered = if required.contains(name.as_str()) {
                lowered
            } else {
                make_nullable(lowered)
            };
            out.insert(name.clone(), lowered);
        }
        Ok(out)
    }

    fn strict_ref(
        &mut self,
        obj: &Map<String, Value>,
        reference: &str,
        path: &str,
    ) -> Result<Value> {
        let target = self.parse_ref(reference, path)?;
        if !self.recursive.contains(&target) {
            // inline: the definition with the use site's own keywords on top
            let Target::Def(name) = target else {
                return Err(self.fail("a `$ref` to `#` outside the root's own tree", path));
            };
            let merged = self.inline(&name, obj, path)?;
            return self.strict(&merged, path);
        }
        let canonical = match &target {
            Target::Root => "#".to_owned(),
            Target::Def(name) => {
                self.referenced.insert(name.clone());
                format!("#/$defs/{}", escape_pointer(name))
            }
        };
        let bare = json!({ "$ref": canonical });
        // OpenAI takes no keywords next to `$ref`: annotations go on a one-branch `anyOf`
        let mut kept = Map::new();
        for (k, v) in &siblings(obj) {
            if ["description", "title"].contains(&k.as_str()) {
                kept.insert(k.clone(), v.clone());
            }
        }
        if kept.is_empty() {
            return Ok(bare);
        }
        let mut out = Map::new();
        out.insert("anyOf".to_owned(), Value::Array(vec![bare]));
        out.extend(kept);
        Ok(Value::Object(out))
    }
}

fn has_type(obj: &Map<String, Value>, ty: &str) -> bool {
    match obj.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

/// Whether a lowered (strict) schema already accepts `null`.
fn accepts_null(obj: &Map<String, Value>) -> bool {
    if obj.contains_key("type") {
        return has_type(obj, "null");
    }
    if let Some(Value::Array(branches)) = obj.get("anyOf") {
        return branches
            .iter()
            .any(|b| b.as_object().is_some_and(accepts_null));
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        return values.contains(&Value::Null);
    }
    obj.get("const") == Some(&Value::Null)
}

/// Makes a lowered strict schema accept `null`, unless it already does.
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut obj) = schema else {
        return schema;
    };
    if accepts_null(&obj) {
        return Value::Object(obj);
    }
    let simple_type = !obj.contains_key("const") && !obj.contains_key("$ref");
    match obj.get_mut("type") {
        Some(Value::String(t)) if simple_type => {
            let t = std::mem::take(t);
            obj.insert("type".to_owned(), json!([t, "null"]));
            add_null_to_enum(&mut obj);
            return Value::Object(obj);
        }
        Some(Value::Array(types)) if simple_type => {
            types.push(Value::String("null".to_owned()));
            add_null_to_enum(&mut obj);
            return Value::Object(obj);
        }
        _ => {}
    }
    if !obj.contains_key("type")
        && !obj.contains_key("enum")
        && !obj.contains_key("const")
        && let Some(Value::Array(branches)) = obj.get_mut("anyOf")
    {
        branches.push(json!({"type": "null"}));
        return Value::Object(obj);
    }
    // wrap; the annotations describe the whole, so they move to the wrapper
    let mut outer = Map::new();
    let description = crate::json_text::remove_key(&mut obj, "description");
    let title = crate::json_text::remove_key(&mut obj, "title");
    outer.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(obj), json!({"type": "null"})]),
    );
    if let Some(d) = description {
        outer.insert("description".to_owned(), d);
    }
    if let Some(t) = title {
        outer.insert("title".to_owned(), t);
    }
    Value::Object(outer)
}

fn add_null_to_enum(obj: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = obj.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
