//! Whether a value fits a tool's input schema: the check an edited approval's arguments pass
//! before they run instead of the model's (CONTRACT section 2, editable approvals).
//!
//! The schemas checked are the ones tools publish (`#[tool]`, `#[derive(Args)]`, schemars,
//! hand-written): `type` (one or a list), `enum`, `const`, `properties`, `required`,
//! `additionalProperties` (`false` or a schema), `items`, `minItems`/`maxItems`,
//! `minimum`/`maximum` (and their exclusive forms), `minLength`/`maxLength`, `anyOf`/`oneOf`/
//! `allOf`, and local `$ref`s into `$defs`/`definitions`. A keyword it does not know is not a
//! constraint here (the tool's own decoding still runs before its body).

use serde_json::{Map, Value};

/// How deep `$ref`s may chain before the check gives up (a schema referring to itself).
const MAX_REFS: usize = 32;

/// `Ok` when `value` fits `schema`, else what does not fit and where (a JSON pointer).
pub(crate) fn conforms(schema: &Value, value: &Value) -> Result<(), String> {
    Check { root: schema }.value(schema, value, "", 0)
}

struct Check<'a> {
    root: &'a Value,
}

fn at(path: &str) -> &str {
    if path.is_empty() {
        "the arguments"
    } else {
        path
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(v: &Value, ty: &str) -> bool {
    match ty {
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => v.is_number(),
        other => type_name(v) == other,
    }
}

impl<'a> Check<'a> {
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn value(&self, schema: &Value, v: &Value, path: &str, refs: usize) -> Result<(), String> {
        let Some(s) = schema.as_object() else {
            // `true` (or anything else that is not an object) accepts every value
            return if schema == &Value::Bool(false) {
                Err(format!("{} is not allowed", at(path)))
            } else {
                Ok(())
            };
        };
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            if refs >= MAX_REFS {
                return Err(format!("{}: the schema's `$ref`s nest too deep", at(path)));
            }
            let target = self.resolve(reference).ok_or_else(|| {
                format!("{}: the schema's `$ref` {reference} is unknown", at(path))
            })?;
            self.value(target, v, path, refs + 1)?;
        }
        Self::types(s, v, path)?;
        if let Some(options) = s.get("enum").and_then(Value::as_array)
            && !options.contains(v)
        {
            return Err(format!(
                "{} must be one of {}, not {v}",
                at(path),
                Value::Array(options.clone())
            ));
        }
        if let Some(c) = s.get("const")
            && c != v
        {
            return Err(format!("{} must be {c}, not {v}", at(path)));
        }
        for all in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.value(all, v, path, refs)?;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array)
                && !branches.is_empty()
                && !branches
                    .iter()
                    .any(|b| self.value(b, v, path, refs).is_ok())
            {
                return Err(format!(
                    "{} fits none of the schema's choices ({key})",
                    at(path)
                ));
            }
        }
        match v {
            Value::Object(map) => self.object(s, map, path, refs),
            Value::Array(items) => self.array(s, items, path, refs),
            Value::String(text) => Self::string(s, text, path),
            Value::Number(n) => Self::number(s, n.as_f64().unwrap_or(f64::NAN), path),
            _ => Ok(()),
        }
    }

    fn types(s: &Map<String, Value>, v: &Value, path: &str) -> Result<(), String> {
        let wanted: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => return Ok(()),
        };
        if wanted.iter().any(|t| is_type(v, t)) {
            Ok(())
        } else {
            Err(format!(
                "{} must be {}, not {}",
                at(path),
                wanted.join(" or "),
                type_name(v)
            ))
        }
    }

    fn object(
        &self,
        s: &Map<String, Value>,
        map: &Map<String, Value>,
        path: &str,
        refs: usize,
    ) -> Result<(), String> {
        let empty = Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for key in crate::schema::required_names(s) {
            if !map.contains_key(key) {
                return Err(format!("{}: `{key}` is required", at(path)));
            }
        }
        let extra = s.get("additionalProperties");
        for (key, value) in map {
            let inner = format!("{path}/{key}");
            match (props.get(key), extra) {
                (Some(prop), _) => self.value(prop, value, &inner, refs)?,
                (None, Some(Value::Bool(false))) => {
                    return Err(format!("{}: `{key}` is not a parameter", at(path)));
                }
                (None, Some(other)) => self.value(other, value, &inner, refs)?,
                (None, None) => {}
            }
        }
        Ok(())
    }

    fn array(
        &self,
        s: &Map<String, Value>,
        items: &[Value],
        path: &str,
        refs: usize,
    ) -> Result<(), String> {
        let n = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64).filter(|m| n < *m) {
            return Err(format!("{} needs at least {min} items", at(path)));
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64).filter(|m| n > *m) {
            return Err(format!("{} takes at most {max} items", at(path)));
        }
        if let Some(item) = s.get("items") {
            for (i, v) in items.iter().enumerate() {
                self.value(item, v, &format!("{path}/{i}"), refs)?;
            }
        }
        Ok(())
    }

    fn string(s: &Map<String, Value>, text: &str, path: &str) -> Result<(), String> {
        let n = text.chars().count() as u64;
        if let Some(min) = s
            .get("minLength")
            .and_then(Value::as_u64)
            .filter(|m| n < *m)
        {
            return Err(format!("{} needs at least {min} characters", at(path)));
        }
        if let Some(max) = s
            .get("maxLength")
            .and_then(Value::as_u64)
            .filter(|m| n > *m)
        {
            return Err(format!("{} takes at most {max} characters", at(path)));
        }
        Ok(())
    }

    fn number(s: &Map<String, Value>, n: f64, path: &str) -> Result<(), String> {
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        let fails = [
            ("minimum", bound("minimum").filter(|m| n < *m), "at least"),
            ("maximum", bound("maximum").filter(|m| n > *m), "at most"),
            (
                "exclusiveMinimum",
                bound("exclusiveMinimum").filter(|m| n <= *m),
                "more than",
            ),
            (
                "exclusiveMaximum",
                bound("exclusiveMaximum").filter(|m| n >= *m),
                "less than",
            ),
        ];
        match fails
            .into_iter()
            .find_map(|(_, b, words)| b.map(|b| (b, words)))
        {
            Some((b, words)) => Err(format!("{} must be {words} {b}, not {n}", at(path))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::conforms;

    fn pay() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "amount": {"type": "integer", "minimum": 1, "maximum": 500},
                "to": {"type": "string", "minLength": 2},
                "memo": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "maxItems": 2},
                "speed": {"enum": ["normal", "fast"]}
            },
            "required": ["amount", "to"],
            "additionalProperties": false,
            "$defs": {"tag": {"type": "string", "maxLength": 5}}
        })
    }

    #[test]
    fn arguments_that_fit_pass() {
        for ok in [
            json!({"amount": 5, "to": "Ada"}),
            json!({"amount": 500, "to": "Ada", "memo": null, "tags": ["a", "b"], "speed": "fast"}),
            json!({"amount": 5.0, "to": "Ada"}),
        ] {
            assert_eq!(conforms(&pay(), &ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn what_does_not_fit_is_named_with_its_place() {
        let cases = [
            (json!({"to": "Ada"}), "the arguments: `amount` is required"),
            (
                json!({"amount": "5", "to": "Ada"}),
                "/amount must be integer, not string",
            ),
            (
                json!({"amount": 501, "to": "Ada"}),
                "/amount must be at most 500, not 501",
            ),
            (
                json!({"amount": 1.5, "to": "Ada"}),
                "/amount must be integer, not number",
            ),
            (
                json!({"amount": 5, "to": "A"}),
                "/to needs at least 2 characters",
            ),
            (
                json!({"amount": 5, "to": "Ada", "iban": "x"}),
                "the arguments: `iban` is not a parameter",
            ),
            (
                json!({"amount": 5, "to": "Ada", "tags": ["toolong"]}),
                "/tags/0 takes at most 5 characters",
            ),
            (
                json!({"amount": 5, "to": "Ada", "speed": "slow"}),
                r#"/speed must be one of ["normal","fast"], not "slow""#,
            ),
            (json!([1]), "the arguments must be object, not array"),
        ];
        for (value, why) in cases {
            assert_eq!(conforms(&pay(), &value), Err(why.to_owned()), "{value}");
        }
    }

    #[test]
    fn a_schema_that_refers_to_itself_ends() {
        let schema = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}});
        assert_eq!(
            conforms(&schema, &json!(1)),
            Err("the arguments: the schema's `$ref`s nest too deep".to_owned())
        );
    }
}
