//! Property tests, one per shape: values generated from the schema (valid by an independent
//! validator, boon) always decode, and the decoded value's JSON (what a default shows)
//! is valid too and decodes to the same value; values near the schema (a wrong leaf, an extra
//! key, a missing one) that the decoder refuses, the validator refuses too. And the lowerings
//! (OpenAI strict, Gemini) accept every schema the derive writes, except a map for OpenAI strict
//! (which has no way to say one).

use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::{Map, Value, json};
use toolnexus::__private::{ArgType, schema_of};
use toolnexus::adapters::{gemini_schema, openai_strict_schema};

use super::types::{
    Category, Change, Expense, Lookup, Paging, Payment, Priority, Report, Settings,
};

/// Anything at all: the wrong leaf a model might send.
fn junk() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e12..1e12_f64).prop_map(Value::from),
        (0..300_u16).prop_map(|i| json!(f64::from(i))),
        "[a-z_]{0,6}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
    ]
    .boxed()
}

/// Values of `schema` (the subset the derive writes); with `noise`, sometimes not.
fn arb(schema: &Value, noise: bool) -> BoxedStrategy<Value> {
    let valid = valid(schema, noise);
    if noise {
        prop_oneof![8 => valid, 1 => junk()].boxed()
    } else {
        valid
    }
}

fn valid(schema: &Value, noise: bool) -> BoxedStrategy<Value> {
    let obj = schema.as_object().expect("a schema object");
    if let Some(Value::Array(branches)) = obj.get("oneOf").or_else(|| obj.get("anyOf")) {
        return Union::new(branches.iter().map(|b| arb(b, noise))).boxed();
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        let values = values.clone();
        return (0..values.len())
            .prop_map(move |i| values[i].clone())
            .boxed();
    }
    if let Some(c) = obj.get("const") {
        return Just(c.clone()).boxed();
    }
    match obj.get("type") {
        Some(Value::Array(types)) => Union::new(types.iter().map(|t| {
            let mut one = obj.clone();
            one.insert("type".to_owned(), t.clone());
            valid(&Value::Object(one), noise)
        }))
        .boxed(),
        Some(Value::String(t)) => match t.as_str() {
            "null" => Just(Value::Null).boxed(),
            "boolean" => any::<bool>().prop_map(Value::from).boxed(),
            "string" => "\\PC{0,6}".prop_map(Value::from).boxed(),
            "number" => (-1e9..1e9_f64).prop_map(Value::from).boxed(),
            "integer" => {
                let min = obj
                    .get("minimum")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MIN);
                let max = obj
                    .get("maximum")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX);
                (min..=max).prop_map(Value::from).boxed()
            }
            "array" => proptest::collection::vec(arb(&obj["items"], noise), 0..3)
                .prop_map(Value::Array)
                .boxed(),
            "object" => object(obj, noise),
            other => panic!("a type the derive does not write: {other}"),
        },
        _ => panic!("a schema the derive does not write: {schema}"),
    }
}

fn object(obj: &Map<String, Value>, noise: bool) -> BoxedStrategy<Value> {
    let required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut members: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (key, schema) in obj
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let k = key.clone();
        let value = arb(schema, noise).prop_map(move |v| Some((k.clone(), v)));
        if required.contains(key) && !noise {
            members.push(value.boxed());
        } else {
            members.push(prop_oneof![Just(None), value].boxed());
        }
    }
    let extra = match obj.get("additionalProperties") {
        Some(Value::Bool(false)) | None if noise => {
            proptest::collection::btree_map("x[a-z]{0,3}", junk(), 0..=1).boxed()
        }
        Some(Value::Bool(false)) | None => Just(std::collections::BTreeMap::default()).boxed(),
        Some(values) => {
            proptest::collection::btree_map("\\PC{0,4}", arb(values, noise), 0..3).boxed()
        }
    };
    (members, extra)
        .prop_map(|(members, extra)| {
            let mut out: Map<String, Value> = members.into_iter().flatten().collect();
            out.extend(extra);
            Value::Object(out)
        })
        .boxed()
}

/// `schema` compiled by an independent validator (boon, JSON Schema draft 2020-12).
struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    fn new(schema: &Value) -> Self {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler
            .add_resource("args.json", schema.clone())
            .expect("a JSON document");
        let index = compiler
            .compile("args.json", &mut schemas)
            .expect("a valid JSON Schema");
        Self { schemas, index }
    }

    fn is_valid(&self, value: &Value) -> bool {
        self.schemas.validate(value, self.index).is_ok()
    }
}

/// The two properties for `T`, over `cases` values each.
fn agree<T: ArgType + std::fmt::Debug + PartialEq>() {
    let schema = schema_of::<T>();
    let validator = Validator::new(&schema);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&arb(&schema, false), |v| {
            prop_assert!(
                validator.is_valid(&v),
                "the generator made an invalid value: {v}"
            );
            let decoded = match T::__toolnexus_decode(v.clone()) {
                Ok(d) => d,
                Err(e) => {
                    return Err(TestCaseError::fail(format!(
                        "{v} is valid by the schema but: {e}"
                    )));
                }
            };
            let Some(json) = decoded.__toolnexus_json() else {
                return Err(TestCaseError::fail(format!(
                    "{decoded:?} (from {v}) has no JSON"
                )));
            };
            prop_assert!(
                validator.is_valid(&json),
                "the JSON of {decoded:?} is not valid by the schema: {json}"
            );
            let again = T::__toolnexus_decode(json.clone());
            prop_assert!(
                again.as_ref().is_ok_and(|a| *a == decoded),
                "{json} (the JSON of {decoded:?}) decodes to {again:?}"
            );
            Ok(())
        })
        .unwrap();
    let refused = std::cell::Cell::new(0_u32);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&arb(&schema, true), |v| {
            if let Err(e) = T::__toolnexus_decode(v.clone()) {
                refused.set(refused.get() + 1);
                prop_assert!(
                    !validator.is_valid(&v),
                    "the decoder refuses {v} ({e}) but the schema accepts it"
                );
            }
            Ok(())
        })
        .unwrap();
    // the noise reaches the decoder's refusals, or the second property says little
    let refused = refused.get();
    assert!(
        refused > 10,
        "only {refused} of 256 noisy values were refused"
    );
}

#[test]
fn a_struct_of_scalars() {
    agree::<Lookup>();
}

#[test]
fn a_struct_with_options_defaults_renames_and_a_string_enum() {
    agree::<Expense>();
}

#[test]
fn a_string_enum() {
    agree::<Category>();
    agree::<Option<Category>>();
}

#[test]
fn an_internally_tagged_enum() {
    agree::<Payment>();
    agree::<Option<Payment>>();
}

#[test]
fn an_adjacently_tagged_enum() {
    agree::<Change>();
}

#[test]
fn nested_lists_maps_and_boxes() {
    agree::<Report>();
}

#[test]
fn a_string_enum_with_documented_variants() {
    agree::<Priority>();
    agree::<Option<Priority>>();
}

#[test]
fn defaults_of_every_kind() {
    agree::<Settings>();
    agree::<Paging>();
}

/// A tool schema holding `schema` as its one property, as `#[tool]` makes it.
fn tool_schema(schema: &Value) -> Value {
    json!({"type": "object", "properties": {"arg": schema}, "required": ["arg"], "additionalProperties": false})
}

#[test]
fn the_lowerings_accept_every_schema_but_a_map_for_openai_strict() {
    let schemas = [
        ("lookup", schema_of::<Lookup>()),
        ("expense", schema_of::<Expense>()),
        ("category", schema_of::<Option<Category>>()),
        ("payment", schema_of::<Option<Payment>>()),
        ("change", schema_of::<Change>()),
        ("report", schema_of::<Report>()),
        ("priority", schema_of::<Option<Priority>>()),
        ("settings", schema_of::<Settings>()),
        ("paging", schema_of::<Paging>()),
    ];
    for (name, schema) in &schemas {
        let whole = tool_schema(schema);
        gemini_schema(name, &whole).unwrap_or_else(|e| panic!("gemini refuses {name}: {e}"));
        match openai_strict_schema(name, &whole) {
            Ok(_) => assert_ne!(*name, "report"),
            Err(e) => {
                assert_eq!(*name, "report", "openai strict refuses {name}: {e}");
                assert!(
                    e.to_string()
                        .contains("/properties/arg/properties/byPerson"),
                    "{e}"
                );
            }
        }
    }
}
