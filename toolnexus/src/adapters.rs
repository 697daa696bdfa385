//! Provider tool schemas (CONTRACT section 5): the exact shapes OpenAI, Anthropic and Gemini
//! expect, in the toolkit's tool order.
//!
//! The functions here take [`ToolSpec`]s (what a `before_llm` hook may rewrite); the
//! [`Toolkit`] methods of the same names apply them to the toolkit's tools.

use serde_json::{Map, Value, json};

use crate::model::ToolSpec;
use crate::tool::Tool;
use crate::toolkit::Toolkit;

/// A tool's spec as handed to an adapter: its schema with root `"type":"object"` and without
/// the root `$schema` and `title` keys that some providers reject.
pub fn spec_of(tool: &dyn Tool) -> ToolSpec {
    let mut schema = tool.input_schema().clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
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

/// Gemini tools, exactly one wrapper element even with no tools:
/// `[{"functionDeclarations":[{"name","description","parameters"}]}]`.
pub fn gemini(specs: &[ToolSpec]) -> Value {
    let decls: Vec<Value> = specs.iter().map(|s| declaration(s, "parameters")).collect();
    json!([{ "functionDeclarations": decls }])
}

impl Toolkit {
    /// The specs of the tools, in order, as the adapters and the agent loop use them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools().iter().map(|t| spec_of(t.as_ref())).collect()
    }

    /// OpenAI chat-completions tools (see [`openai`]).
    ///
    /// ```
    /// assert_eq!(toolnexus::Toolkit::new().to_openai(), serde_json::json!([]));
    /// ```
    pub fn to_openai(&self) -> Value {
        openai(&self.specs())
    }

    /// Anthropic messages tools (see [`anthropic`]).
    ///
    /// ```
    /// assert_eq!(toolnexus::Toolkit::new().to_anthropic(), serde_json::json!([]));
    /// ```
    pub fn to_anthropic(&self) -> Value {
        anthropic(&self.specs())
    }

    /// Gemini tools (see [`gemini`]); the schemas are passed as they are.
    ///
    /// ```
    /// assert_eq!(
    ///     toolnexus::Toolkit::new().to_gemini(),
    ///     serde_json::json!([{"functionDeclarations": []}])
    /// );
    /// ```
    pub fn to_gemini(&self) -> Value {
        gemini(&self.specs())
    }
}
