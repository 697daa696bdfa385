//! Provider tool schemas ([contract section 5](crate::contract)): the exact shapes OpenAI, Anthropic and Gemini
//! expect, in the toolkit's tool order.
//!
//! The functions here take [`ToolSpec`]s (what a `before_llm` hook may rewrite); the
//! [`Toolkit`](crate::Toolkit) methods of the same names apply them to the toolkit's tools.
//!
//! [`openai`] and [`anthropic`] pass each schema as it is (both providers take JSON Schema).
//! Two adapters lower the schemas to what a provider accepts, reporting what cannot be lowered
//! as [`Error::SchemaLowering`](crate::Error::SchemaLowering): [`openai_strict`] (OpenAI's
//! `"strict": true` function calling) and [`gemini`] (Gemini's OpenAPI subset: Gemini rejects,
//! say, the `"type":["string","null"]` an `Option` field gets, so the obvious call is the safe
//! one). [`gemini_raw`] is the Gemini shape with the schemas passed as they are, for a host
//! that lowers them itself. [`openai_strict_schema`] and [`gemini_schema`] lower one schema.

use serde_json::{Map, Value, json};

use crate::error::Result;
pub use crate::lower::{gemini_schema, openai_strict_schema};
use crate::model::ToolSpec;
use crate::tool::Tool;

/// A tool's spec as handed to an adapter: its schema with root `"type":"object"` and without
/// the root `$schema` and `title` keys that some providers reject.
pub fn spec_of(tool: &dyn Tool) -> ToolSpec {
    let mut schema = tool.input_schema().clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.shift_remove("$schema");
        obj.shift_remove("title");
        if !obj.contains_key("type") {
            obj.insert("type".to_owned(), Value::String("object".to_owned()));
        }
    }
    ToolSpec::new(tool.name(), tool.description(), schema)
}

fn declaration(spec: &ToolSpec, schema_key: &str) -> Value {
    let mut decl = Map::new();
    decl.insert("name".to_owned(), Value::String(spec.name.clone()));
    decl.insert(
        "description".to_owned(),
        Value::String(spec.description.clone()),
    );
    decl.insert(schema_key.to_owned(), spec.parameters.clone());
    Value::Object(decl)
}

/// OpenAI chat-completions tools:
/// `[{"type":"function","function":{"name","description","parameters"}}]`.
pub fn openai(specs: &[ToolSpec]) -> Value {
    specs
        .iter()
        .map(|s| json!({"type": "function", "function": declaration(s, "parameters")}))
        .collect()
}

/// Anthropic messages tools: `[{"name","description","input_schema"}]`.
pub fn anthropic(specs: &[ToolSpec]) -> Value {
    specs
        .iter()
        .map(|s| declaration(s, "input_schema"))
        .collect()
}

/// Gemini tools with the schemas passed **as they are**, exactly one wrapper element even with
/// no tools: `[{"functionDeclarations":[{"name","description","parameters"}]}]`.
///
/// Gemini rejects parts of JSON Schema that `schemars` emits (`"type":["string","null"]` for
/// an `Option`, `$ref`, ...); [`gemini`] lowers them first and is what to send.
pub fn gemini_raw(specs: &[ToolSpec]) -> Value {
    let decls: Vec<Value> = specs.iter().map(|s| declaration(s, "parameters")).collect();
    json!([{ "functionDeclarations": decls }])
}

/// OpenAI chat-completions tools in strict mode, each schema lowered by
/// [`openai_strict_schema`]:
/// `[{"type":"function","function":{"name","description","parameters","strict":true}}]`.
///
/// # Errors
///
/// [`Error::SchemaLowering`](crate::Error::SchemaLowering) for the first tool (in order) whose
/// schema strict mode cannot express, naming the tool, the construct and its location.
///
/// ```
/// use serde_json::json;
/// use toolnexus::model::ToolSpec;
///
/// let spec = ToolSpec::new("ping", "Pings.", json!({"type": "object", "properties": {}}));
/// assert_eq!(
///     toolnexus::adapters::openai_strict(&[spec]).unwrap().to_string(),
///     r#"[{"type":"function","function":{"name":"ping","description":"Pings.","parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false},"strict":true}}]"#
/// );
/// ```
pub fn openai_strict(specs: &[ToolSpec]) -> Result<Value> {
    let mut tools = Vec::with_capacity(specs.len());
    for spec in specs {
        let parameters = openai_strict_schema(&spec.name, &spec.parameters)?;
        let mut function = Map::new();
        function.insert("name".to_owned(), Value::String(spec.name.clone()));
        function.insert(
            "description".to_owned(),
            Value::String(spec.description.clone()),
        );
        function.insert("parameters".to_owned(), parameters);
        function.insert("strict".to_owned(), Value::Bool(true));
        tools.push(json!({"type": "function", "function": function}));
    }
    Ok(Value::Array(tools))
}

/// Gemini tools with each schema lowered by [`gemini_schema`] to what Gemini accepts, exactly
/// one wrapper element even with no tools:
/// `[{"functionDeclarations":[{"name","description","parameters"}]}]`.
///
/// # Errors
///
/// [`Error::SchemaLowering`](crate::Error::SchemaLowering) for the first tool (in order) whose
/// schema Gemini cannot take (a recursive type, say), naming the tool, the construct and its
/// location.
///
/// ```
/// use serde_json::json;
/// use toolnexus::model::ToolSpec;
///
/// let spec = ToolSpec::new("find", "Finds.", json!({
///     "type": "object",
///     "properties": {"near": {"type": ["string", "null"]}},
/// }));
/// assert_eq!(
///     toolnexus::adapters::gemini(&[spec]).unwrap().to_string(),
///     r#"[{"functionDeclarations":[{"name":"find","description":"Finds.","parameters":{"type":"object","properties":{"near":{"type":"string","nullable":true}}}}]}]"#
/// );
/// ```
pub fn gemini(specs: &[ToolSpec]) -> Result<Value> {
    let mut lowered = Vec::with_capacity(specs.len());
    for spec in specs {
        let parameters = gemini_schema(&spec.name, &spec.parameters)?;
        lowered.push(ToolSpec::new(
            spec.name.clone(),
            spec.description.clone(),
            parameters,
        ));
    }
    Ok(gemini_raw(&lowered))
}
