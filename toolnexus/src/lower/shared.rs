//! What the two lowerings share: the walk's state ([`Lowering`]: the tool, the target, the
//! root's definitions and which of them are recursive), `$ref` resolution, the error naming
//! the construct and its JSON pointer, the checks every node goes through first ([`Node`]),
//! and the `allOf`/`$ref` merges both apply.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::pointer::{escape_pointer, percent_decode, unescape_pointer};
use crate::error::{Error, Result};
use crate::limits::{MAX_DEPTH, too_deep};

/// Both providers need the element schema of an array.
pub(super) const ARRAY_WITHOUT_ITEMS: &str = "an array without `items` (elements of any type)";

/// Keywords neither target can express and that cannot be dropped without changing which
/// arguments are valid; each target checks its own list first.
pub(super) const UNSUPPORTED: &[(&str, &str)] = &[
    ("dependentRequired", "`dependentRequired`"),
    ("dependentSchemas", "`dependentSchemas`"),
    ("not", "`not` (a negated schema)"),
    ("if", "`if`/`then`/`else` (a conditional schema)"),
    ("then", "`if`/`then`/`else` (a conditional schema)"),
    ("else", "`if`/`then`/`else` (a conditional schema)"),
    ("prefixItems", "a tuple (`prefixItems`)"),
    ("contains", "`contains`"),
];

/// Where a `$ref` points.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Target {
    /// `#`: the root schema.
    Root,
    /// `#/$defs/<name>` or `#/definitions/<name>`.
    Def(String),
}

/// A schema node once the checks both lowerings make first are through
/// ([`Lowering::node`]).
pub(super) enum Node<'s> {
    /// `true`: a value of any type.
    Any,
    /// An object schema to lower.
    Object(&'s Map<String, Value>),
    /// A `$ref`, with the keywords next to it in the object.
    Ref(&'s Map<String, Value>, &'s str),
    /// A one-branch `allOf` merged into its parent: lower this instead.
    Merged(Map<String, Value>),
}

pub(super) struct Lowering<'a> {
    pub(super) tool: &'a str,
    pub(super) target: &'static str,
    /// The root's definitions (`$defs`, then `definitions`).
    pub(super) defs: Map<String, Value>,
    /// Where each definition is in the input (for error locations).
    pub(super) def_paths: HashMap<String, String>,
    /// The targets that take part in a `$ref` cycle.
    pub(super) recursive: HashSet<Target>,
    /// Recursive definitions the strict output refers to.
    pub(super) referenced: BTreeSet<String>,
    /// Definitions being inlined (Gemini), a guard against cycles.
    pub(super) inlining: Vec<String>,
    /// What inlining may still copy (see [`Lowering::charge_inline`]).
    budget: usize,
    /// The weight of each definition, computed when first inlined.
    weights: HashMap<String, usize>,
    /// How deep the walk is (in the output, `$ref`s inlined).
    depth: usize,
}

/// Inlining `$ref`s may copy at most this many weight units (nodes plus string bytes) ...
pub(super) const BUDGET_BASE: usize = 1 << 18;
/// ... plus this many times the weight of the whole input schema.
pub(super) const BUDGET_FACTOR: usize = 8;

impl<'a> Lowering<'a> {
    /// The walk's state for `root`.
    ///
    /// # Errors
    ///
    /// A schema that nests deeper than [`MAX_DEPTH`] is refused before it is walked.
    pub(super) fn new(tool: &'a str, target: &'static str, root: &Value) -> Result<Self> {
        if too_deep(root) {
            return Err(Error::SchemaLowering {
                tool: tool.to_owned(),
                target,
                construct: format!("a schema nesting deeper than {MAX_DEPTH} levels"),
                pointer: String::new(),
            });
        }
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
            budget: BUDGET_BASE.saturating_add(BUDGET_FACTOR.saturating_mul(weight(root))),
            weights: HashMap::new(),
            depth: 0,
        };
        lowering.recursive = lowering.find_recursive(root);
        Ok(lowering)
    }

    /// Charges the budget for inlining definition `name` once more: a schema whose `$ref`s
    /// would copy more than [`BUDGET_BASE`] plus [`BUDGET_FACTOR`] times its own weight (a
    /// lattice of definitions each used twice by the next grows exponentially) fails here,
    /// before the copy is made.
    pub(super) fn charge_inline(&mut self, name: &str, path: &str) -> Result<()> {
        let w = if let Some(&w) = self.weights.get(name) {
            w
        } else {
            let w = self.defs.get(name).map_or(1, weight);
            self.weights.insert(name.to_owned(), w);
            w
        };
        match self.budget.checked_sub(w) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(self.fail(
                &format!(
                    "a schema that grows too large when its `$ref`s are inlined (`{name}` is inlined too often; the budget is {BUDGET_FACTOR} times the schema's size plus {BUDGET_BASE} bytes)"
                ),
                path,
            )),
        }
    }

    /// `lower` one level deeper into the output; past [`MAX_DEPTH`] (reachable through a chain
    /// of inlined `$ref`s) the lowering fails instead of overflowing the stack.
    pub(super) fn deeper(
        &mut self,
        path: &str,
        lower: impl FnOnce(&mut Self) -> Result<Value>,
    ) -> Result<Value> {
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(
                &format!(
                    "a schema nesting deeper than {MAX_DEPTH} levels once its `$ref`s are inlined"
                ),
                path,
            ));
        }
        self.depth += 1;
        let lowered = lower(self);
        self.depth -= 1;
        lowered
    }

    /// The first keyword of `unsupported` that `obj` uses, as an error at `path`.
    pub(super) fn reject_unsupported(
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

    pub(super) fn fail(&self, construct: &str, path: &str) -> Error {
        Error::SchemaLowering {
            tool: self.tool.to_owned(),
            target: self.target,
            construct: construct.to_owned(),
            pointer: path.to_owned(),
        }
    }

    pub(super) fn def(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    pub(super) fn parse_ref(&self, reference: &str, path: &str) -> Result<Target> {
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
    pub(super) fn find_recursive(&self, root: &Value) -> HashSet<Target> {
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

    /// The checks every node goes through first: an object (or `true`), no keyword of
    /// `unsupported` (the target's own) or [`UNSUPPORTED`], then a `$ref` or a one-branch `allOf` taken apart, and not both `anyOf`
    /// and `oneOf`.
    pub(super) fn node<'s>(
        &self,
        schema: &'s Value,
        unsupported: &[(&str, &str)],
        path: &str,
    ) -> Result<Node<'s>> {
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(true) => return Ok(Node::Any),
            Value::Bool(false) => return Err(self.fail("a `false` schema (no valid value)", path)),
            _ => return Err(self.fail("a schema that is not an object", path)),
        };
        self.reject_unsupported(obj, unsupported, path)?;
        self.reject_unsupported(obj, UNSUPPORTED, path)?;
        if let Some(Value::String(reference)) = obj.get("$ref") {
            return Ok(Node::Ref(obj, reference));
        }
        if let Some(merged) = self.merge_all_of(obj, path)? {
            return Ok(Node::Merged(merged));
        }
        if obj.contains_key("anyOf") && obj.contains_key("oneOf") {
            return Err(self.fail("both `anyOf` and `oneOf` on one schema", path));
        }
        Ok(Node::Object(obj))
    }

    /// The definition `name` inlined at a `$ref` in `obj`: the definition with the use site's
    /// own keywords on top, charged to the inlining budget.
    pub(super) fn inline(
        &mut self,
        name: &str,
        obj: &Map<String, Value>,
        path: &str,
    ) -> Result<Value> {
        self.charge_inline(name, path)?;
        Ok(merge_over(self.def(name).cloned(), siblings(obj)))
    }

    /// A one-branch `allOf` merged into its parent; several branches are an error.
    pub(super) fn merge_all_of(
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
}

/// The keywords next to the `$ref` of `obj`.
pub(super) fn siblings(obj: &Map<String, Value>) -> Map<String, Value> {
    obj.iter()
        .filter(|(k, _)| k.as_str() != "$ref")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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

/// The weight of a value: its nodes plus the bytes of its strings and keys (what copying it
/// costs). Iterative.
pub(super) fn weight(value: &Value) -> usize {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(1);
        match v {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                for (k, v) in o {
                    total = total.saturating_add(k.len());
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    total
}
