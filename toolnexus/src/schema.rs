//! Input schemas: generation from Rust types and the checks every tool schema passes.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The names an object schema's `required` lists, in its order (its entries that are
/// strings; none when it has no such list).
pub(crate) fn required_names(schema: &Map<String, Value>) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The schema generator toolnexus uses: JSON Schema 2020-12, no `$schema`, subschemas inlined
/// (only recursive types keep `$ref`/`$defs`), describing what deserialization accepts.
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .for_deserialize()
        .into_generator()
}

/// The input schema of a tool whose arguments are the fields of `T`: root `"type":"object"`,
/// no `$schema`, no root `title`, subschemas inlined.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Args {
///     /// The city.
///     city: String,
/// }
///
/// assert_eq!(
///     toolnexus::schema::input_schema_for::<Args>(),
///     serde_json::json!({
///         "type": "object",
///         "properties": {"city": {"description": "The city.", "type": "string"}},
///         "required": ["city"]
///     })
/// );
/// ```
pub fn input_schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        crate::json_text::remove_key(obj, "$schema");
        crate::json_text::remove_key(obj, "title");
    }
    // keys sorted in every build, as every schema toolnexus writes
    value.sort_all_objects();
    value
}

/// Checks that `schema` is a JSON Schema object with root `"type":"object"`, nesting at most
/// [`MAX_DEPTH`](crate::limits::MAX_DEPTH) levels.
///
/// # Errors
///
/// [`Error::InvalidSchema`] naming the tool and what is wrong.
pub fn check_input_schema(tool: &str, schema: &Value) -> Result<()> {
    let fail = |reason: &str| {
        Err(Error::InvalidSchema {
            tool: tool.to_owned(),
            reason: reason.to_owned(),
        })
    };
    let Some(obj) = schema.as_object() else {
        return fail("a schema must be a JSON object");
    };
    if crate::limits::too_deep(schema) {
        return fail(&crate::limits::too_deep_message("the schema nests"));
    }
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(other) => fail(&format!(
            "the root `type` must be \"object\" (tool arguments are a JSON object), found {other}"
        )),
        None => fail("the root needs `\"type\": \"object\"` (tool arguments are a JSON object)"),
    }
}
