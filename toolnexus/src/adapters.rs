//! Provider tool schemas (CONTRACT section 5): the exact shapes OpenAI, Anthropic and Gemini
//! expect, in the toolkit's tool order.

use serde_json::{Map, Value, json};

use crate::tool::Tool;
use crate::toolkit::Toolkit;

/// A tool's schema as handed to an adapter: root `"type":"object"`, without the root
/// `$schema` and `title` keys that some providers reject.
pub(crate) fn adapter_schema(tool: &dyn Tool) -> Value {
    let mut schema = tool.input_schema().clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        if !obj.contains_key("type") {
            obj.insert("type".to_owned(), Value::String("object".to_owned()));
        }
    }
    schema
}

fn function_declaration(tool: &dyn Tool, parameters: Value) -> Value {
    let mut decl = Map::new();
    decl.insert("name".to_owned(), Value::String(tool.name().to_owned()));
    decl.insert(
        "description".to_owned(),
        Value::String(tool.description().to_owned()),
    );
    decl.insert("parameters".to_owned(), parameters);
    Value::Object(decl)
}

impl Toolkit {
    /// OpenAI chat-completions tools:
    /// `[{"type":"function","function":{"name","description","parameters"}}]`.
    ///
    /// ```
    /// let empty = toolnexus::Toolkit::new();
    /// assert_eq!(empty.to_openai(), serde_json::json!([]));
    /// ```
    pub fn to_openai(&self) -> Value {
        Value::Array(
            self.tools()
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": function_declaration(t.as_ref(), adapter_schema(t.as_ref())),
                    })
                })
                .collect(),
        )
    }

    /// Anthropic messages tools: `[{"name","description","input_schema"}]`.
    ///
    /// ```
    /// assert_eq!(toolnexus::Toolkit::new().to_anthropic(), serde_json::json!([]));
    /// ```
    pub fn to_anthropic(&self) -> Value {
        Value::Array(
            self.tools()
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name(),
                        "description": t.description(),
                        "input_schema": adapter_schema(t.as_ref()),
                    })
                })
                .collect(),
        )
    }

    /// Gemini tools: exactly one wrapper element, even with no tools:
    /// `[{"functionDeclarations":[{"name","description","parameters"}]}]`. The schemas are
    /// passed as they are; see [`Toolkit::to_gemini_lowered`] for the dialect Gemini accepts.
    ///
    /// ```
    /// assert_eq!(
    ///     toolnexus::Toolkit::new().to_gemini(),
    ///     serde_json::json!([{"functionDeclarations": []}])
    /// );
    /// ```
    pub fn to_gemini(&self) -> Value {
        let decls: Vec<Value> = self
            .tools()
            .iter()
            .map(|t| function_declaration(t.as_ref(), adapter_schema(t.as_ref())))
            .collect();
        json!([{ "functionDeclarations": decls }])
    }
}
