//! Schema lowerings: a tool's JSON Schema rewritten into the subset a provider accepts.
//!
//! - [`openai_strict_schema`]: OpenAI's strict function calling (`"strict": true`);
//! - [`gemini_schema`]: Gemini's function-declaration `parameters` (an OpenAPI 3.0 subset).
//!
//! A construct the target cannot express is an [`Error::SchemaLowering`] naming the tool, the
//! construct and where it is (a JSON pointer into the tool's schema), never a schema the
//! provider rejects or silently misreads.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// The target name of the OpenAI strict lowering, as [`Error::SchemaLowering`] reports it.
pub(crate) const TARGET_OPENAI_STRICT: &str = "openai strict";
/// The target name of the Gemini lowering, as [`Error::SchemaLowering`] reports it.
pub(crate) const TARGET_GEMINI: &str = "gemini";

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
/// arguments are valid.
const STRICT_UNSUPPORTED: &[(&str, &str)] = &[
    (
        "patternProperties",
        "`patternProperties` (keys matched by pattern)",
    ),
    ("propertyNames", "`propertyNames` (constrained keys)"),
    ("dependentRequired", "`dependentRequired`"),
    ("dependentSchemas", "`dependentSchemas`"),
    ("not", "`not` (a negated schema)"),
    ("if", "`if`/`then`/`else` (a conditional schema)"),
    ("then", "`if`/`then`/`else` (a conditional schema)"),
    ("else", "`if`/`then`/`else` (a conditional schema)"),
    ("prefixItems", "a tuple (`prefixItems`)"),
    ("contains", "`contains`"),
];

/// Keywords Gemini cannot express and that cannot be dropped without changing which arguments
/// are valid.
const GEMINI_UNSUPPORTED: &[(&str, &str)] = &[
    ("dependentRequired", "`dependentRequired`"),
    ("dependentSchemas", "`dependentSchemas`"),
    ("not", "`not` (a negated schema)"),
    ("if", "`if`/`then`/`else` (a conditional schema)"),
    ("then", "`if`/`then`/`else` (a conditional schema)"),
    ("else", "`if`/`then`/`else` (a conditional schema)"),
    ("prefixItems", "a tuple (`prefixItems`)"),
    ("contains", "`contains`"),
];

/// Both providers need the element schema of an array.
const ARRAY_WITHOUT_ITEMS: &str = "an array without `items` (elements of any type)";

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
/// without `items`, a `false` schema, a tuple (`prefixItems`), `not`, `if`/`then`/`else`, a several-branch `allOf`, a
/// `$ref` that is not `#`, `#/$defs/..` or `#/definitions/..`.
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
    let mut lowering = Lowering::new(tool, TARGET_OPENAI_STRICT, schema);
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
    Ok(Value::Object(root))
}

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
/// `null`-only type, an array without `items`, a `false` schema, a tuple (`prefixItems`), `not`, `if`/`then`/`else`, a
/// several-branch `allOf`, a `$ref` that is not `#`, `#/$defs/..` or `#/definitions/..`.
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
    let mut lowering = Lowering::new(tool, TARGET_GEMINI, schema);
    lowering.gemini(schema, "")
}

/// Where a `$ref` points.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Target {
    /// `#`: the root schema.
    Root,
    /// `#/$defs/<name>` or `#/definitions/<name>`.
    Def(String),
}

struct Lowering<'a> {
    tool: &'a str,
    target: &'static str,
    /// The root's definitions (`$defs`, then `definitions`).
    defs: Map<String, Value>,
    /// Where each definition is in the input (for error locations).
    def_paths: HashMap<String, String>,
    /// The targets that take part in a `$ref` cycle.
    recursive: HashSet<Target>,
    /// Recursive definitions the strict output refers to.
    referenced: BTreeSet<String>,
    /// Definitions being inlined (Gemini), a guard against cycles.
    inlining: Vec<String>,
}

impl<'a> Lowering<'a> {
    fn new(tool: &'a str, target: &'static str, root: &Value) -> Self {
        let mut defs = Map::new();
        let mut def_paths = HashMap::new();
        if let Some(obj) = root.as_object() {
            for key in ["$defs", "definitions"] {
                if let Some(Value::Object(d)) = obj.get(key) {
                    for (name, def) in d {
                        if !defs.contains_key(name) {
                            defs.insert(name.clone(), def.clone());
                            def_paths
                                .insert(name.clone(), format!("/{key}/{}", escape_pointer(name)));
                        }
                    }
                }
            }
        }
        let mut lowering = Self {
            tool,
            target,
            defs,
            def_paths,
            recursive: HashSet::new(),
            referenced: BTreeSet::new(),
            inlining: Vec::new(),
        };
        lowering.recursive = lowering.find_recursive(root);
        lowering
    }

    /// The first keyword of `unsupported` that `obj` uses, as an error at `path`.
    fn reject_unsupported(
        &self,
        obj: &Map<String, Value>,
        unsupported: &[(&str, &str)],
        path: &str,
    ) -> Result<()> {
        match unsupported.iter().find(|(key, _)| obj.contains_key(*key)) {
            Some((_, construct)) => Err(self.fail(construct, path)),
            None => Ok(()),
        }
    }

    fn fail(&self, construct: &str, path: &str) -> Error {
        let at = if path.is_empty() {
            "the root".to_owned()
        } else {
            path.to_owned()
        };
        Error::SchemaLowering {
            tool: self.tool.to_owned(),
            target: self.target,
            construct: format!("{construct} at {at}"),
        }
    }

    fn def(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    fn parse_ref(&self, reference: &str, path: &str) -> Result<Target> {
        if reference == "#" {
            return Ok(Target::Root);
        }
        for prefix in ["#/$defs/", "#/definitions/"] {
            if let Some(rest) = reference.strip_prefix(prefix) {
                let name = unescape_pointer(&percent_decode(rest));
                if self.defs.contains_key(&name) {
                    return Ok(Target::Def(name));
                }
                return Err(self.fail(
                    &format!("a `$ref` to `{reference}`, which is not defined"),
                    path,
                ));
            }
        }
        Err(self.fail(
            &format!(
                "a `$ref` to `{reference}` (only `#`, `#/$defs/<name>` and `#/definitions/<name>` are supported)"
            ),
            path,
        ))
    }

    /// The targets on a `$ref` cycle: the root (when reached from itself) and definitions.
    /// A `$ref` that cannot be resolved is no edge here; lowering reports it where it is used.
    fn find_recursive(&self, root: &Value) -> HashSet<Target> {
        let targets = |schema: &Value, skip_defs: bool| -> Vec<Target> {
            let mut refs = Vec::new();
            collect_refs(schema, &mut refs, skip_defs);
            refs.iter()
                .filter_map(|r| self.parse_ref(r, "").ok())
                .collect()
        };
        let mut edges: Vec<(Target, Vec<Target>)> = vec![(Target::Root, targets(root, true))];
        for (name, def) in &self.defs {
            edges.push((Target::Def(name.clone()), targets(def, false)));
        }
        let next = |t: &Target| -> Vec<Target> {
            edges
                .iter()
                .find(|(from, _)| from == t)
                .map(|(_, to)| to.clone())
                .unwrap_or_default()
        };
        let mut recursive = HashSet::new();
        for (start, _) in &edges {
            // is `start` reachable from itself?
            let mut seen: HashSet<Target> = HashSet::new();
            let mut stack = next(start);
            while let Some(t) = stack.pop() {
                if &t == start {
                    recursive.insert(start.clone());
                    break;
                }
                if seen.insert(t.clone()) {
                    stack.extend(next(&t));
                }
            }
        }
        recursive
    }

    // ---- OpenAI strict ----

    fn strict(&mut self, schema: &Value, path: &str) -> Result<Value> {
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(true) => {
                return Err(self.fail(
                    "a value of any type (`true`: strict mode needs a `type`)",
                    path,
                ));
            }
            Value::Bool(false) => return Err(self.fail("a `false` schema (no valid value)", path)),
            _ => return Err(self.fail("a schema that is not an object", path)),
        };
        self.reject_unsupported(obj, STRICT_UNSUPPORTED, path)?;
        if let Some(Value::String(reference)) = obj.get("$ref") {
            return self.strict_ref(obj, reference, path);
        }
        if let Some(merged) = self.merge_all_of(obj, path)? {
            return self.strict(&Value::Object(merged), path);
        }
        if obj.contains_key("anyOf") && obj.contains_key("oneOf") {
            return Err(self.fail("both `anyOf` and `oneOf` on one schema", path));
        }

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
            let required: Vec<Value> = props.keys().cloned().map(Value::String).collect();
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
                    if let Some(Value::Array(inner)) = b.shift_remove("anyOf") {
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
        let required: HashSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
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
        let siblings: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| k.as_str() != "$ref")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !self.recursive.contains(&target) {
            // inline: the definition with the use site's own keywords on top
            let Target::Def(name) = target else {
                return Err(self.fail("a `$ref` to `#` outside the root's own tree", path));
            };
            let merged = merge_over(self.def(&name).cloned(), siblings);
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
        for (k, v) in &siblings {
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

    /// A one-branch `allOf` merged into its parent; several branches are an error.
    fn merge_all_of(
        &self,
        obj: &Map<String, Value>,
        path: &str,
    ) -> Result<Option<Map<String, Value>>> {
        let Some(all_of) = obj.get("allOf") else {
            return Ok(None);
        };
        match all_of {
            Value::Array(branches) if branches.len() == 1 => {
                let Value::Object(branch) = &branches[0] else {
                    return Err(self.fail("an `allOf` branch that is not an object", path));
                };
                let mut merged = branch.clone();
                for (k, v) in obj {
                    if k != "allOf" {
                        merged.insert(k.clone(), v.clone());
                    }
                }
                Ok(Some(merged))
            }
            _ => Err(self.fail(
                "an `allOf` of several schemas (an intersection of types)",
                path,
            )),
        }
    }

    // ---- Gemini ----

    fn gemini(&mut self, schema: &Value, path: &str) -> Result<Value> {
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(true) => return Ok(Value::Object(Map::new())),
            Value::Bool(false) => return Err(self.fail("a `false` schema (no valid value)", path)),
            _ => return Err(self.fail("a schema that is not an object", path)),
        };
        self.reject_unsupported(obj, GEMINI_UNSUPPORTED, path)?;
        if let Some(Value::String(reference)) = obj.get("$ref") {
            return self.gemini_ref(obj, reference, path);
        }
        if let Some(merged) = self.merge_all_of(obj, path)? {
            return self.gemini(&Value::Object(merged), path);
        }
        if obj.contains_key("anyOf") && obj.contains_key("oneOf") {
            return Err(self.fail("both `anyOf` and `oneOf` on one schema", path));
        }

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
                    nullable |= merged.shift_remove("nullable") == Some(Value::Bool(true));
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
        let siblings: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| k.as_str() != "$ref")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let merged = merge_over(self.def(&def_name).cloned(), siblings);
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
        out.shift_remove("properties");
        if out
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            out.shift_remove("required");
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

/// `base` (a definition) with `over` (the keywords next to its `$ref`) on top.
fn merge_over(base: Option<Value>, over: Map<String, Value>) -> Value {
    match base {
        Some(Value::Object(mut base)) => {
            for (k, v) in over {
                base.insert(k, v);
            }
            Value::Object(base)
        }
        Some(other) if over.is_empty() => other,
        Some(Value::Bool(true)) | None => Value::Object(over),
        Some(other) => other,
    }
}

/// Every `$ref` string in `schema`; the root's own definitions are skipped when `skip_defs`
/// (they are graph nodes of their own).
fn collect_refs(schema: &Value, out: &mut Vec<String>, skip_defs: bool) {
    match schema {
        Value::Object(obj) => {
            for (k, v) in obj {
                match k.as_str() {
                    "$ref" => {
                        if let Value::String(r) = v {
                            out.push(r.clone());
                        }
                    }
                    "$defs" | "definitions" if skip_defs => {}
                    // maps of schemas: their keys are names, not keywords
                    "properties" | "patternProperties" | "dependentSchemas" | "$defs"
                    | "definitions" => {
                        for sub in v.as_object().into_iter().flat_map(Map::values) {
                            collect_refs(sub, out, false);
                        }
                    }
                    // values, not schemas
                    "enum" | "const" | "default" | "examples" | "required" => {}
                    _ => collect_refs(v, out, false),
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_refs(v, out, false);
            }
        }
        _ => {}
    }
}

fn has_type(obj: &Map<String, Value>, ty: &str) -> bool {
    match obj.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|o| o.get("type").and_then(Value::as_str) == Some("null"))
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
    let description = obj.shift_remove("description");
    let title = obj.shift_remove("title");
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

fn add_null_to_enum(obj: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = obj.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Escapes a JSON pointer token (RFC 6901).
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Decodes `%XX` escapes of a URI fragment (invalid escapes are kept as they are).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}
