//! Provider tool schemas ([contract section 5](crate::contract)): the exact shapes OpenAI, Anthropic and Gemini
//! expect, in the toolkit's tool order.
//!
//! The functions here take [`ToolSpec`]s (what a `before_llm` hook may rewrite); the
//! [`Toolkit`](crate::Toolkit) methods of the same names apply them to the toolkit's tools.
//!
//! [`openai`] and [`anthropic`] pass each schema as it is (both providers take JSON Schema).
//! Two adapters lower the schemas to what a provider accepts, reporting what cannot be lowered
//! as [`Error::SchemaLowering`]: [`openai_strict`] (OpenAI's
//! `"strict": true` function calling) and [`gemini`] (Gemini's OpenAPI subset: Gemini rejects,
//! say, the `"type":["string","null"]` an `Option` field gets, so the obvious call is the safe
//! one). [`gemini_raw`] is the Gemini shape with the schemas passed as they are, for a host
//! that lowers them itself. [`openai_strict_schema`] and [`gemini_schema`] lower one schema.
//!
//! Every adapter returns a `Result`, and first checks what the provider would refuse the whole
//! request for, so specs a [`before_llm`](crate::client::ClientBuilder::before_llm) hook
//! rewrote fail here, with the tool named, instead of as an HTTP 400 mid-run:
//! - a name outside the provider's pattern, `[A-Za-z0-9_-]{1,64}`, and for Gemini also a first
//!   character other than a letter or `_`
//!   ([`Error::InvalidToolName`]);
//! - two specs with one name ([`Error::DuplicateTool`]);
//! - parameters that are not a schema with root `"type":"object"`
//!   ([`Error::InvalidSchema`]).
//!
//! The lowering adapters ([`openai_strict`], [`gemini`]) can fail one more way,
//! [`Error::SchemaLowering`]: the schema holds what the provider's
//! subset cannot express (a recursive type, say). All of them return [`ProviderTools`], whose
//! text has the contract's key order in every build.

use std::fmt;
use std::ops::Deref;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{Error, Result};
pub use crate::lower::{gemini_schema, openai_strict_schema};
use crate::model::ToolSpec;
use crate::tool::{Tool, validate_tool_name};

/// A tool's spec as handed to an adapter: its schema with root `"type":"object"` and without
/// the root `$schema` and `title` keys that some providers reject.
pub fn spec_of(tool: &dyn Tool) -> ToolSpec {
    let mut schema = tool.input_schema().clone();
    if let Some(obj) = schema.as_object_mut() {
        crate::json_text::remove_key(obj, "$schema");
        crate::json_text::remove_key(obj, "title");
        if !obj.contains_key("type") {
            obj.insert("type".to_owned(), Value::String("object".to_owned()));
        }
    }
    ToolSpec::new(tool.name(), tool.description(), schema)
}

/// Tool declarations in one provider's shape ([contract section 5](crate::contract)), as every
/// adapter here returns them.
///
/// Written ([`Display`](fmt::Display), [`Serialize`]) with the contract's key order in every
/// build, whatever `serde_json` features another crate turns on (`{"type","function"}`,
/// `{"name","description","parameters"}`, ...; each schema's keys sorted). Read as the JSON value
/// it equals: it dereferences to a [`Value`] (`tools[0]["function"]["name"]`), compares equal to
/// one, and [`into_value`](Self::into_value) hands it over (a `Value`'s maps order their keys
/// as `serde_json` is built: sorted, unless its `preserve_order` feature is on).
///
/// ```
/// use toolnexus::model::ToolSpec;
/// use toolnexus::json;
///
/// let tools = toolnexus::adapters::openai(&[ToolSpec::new("ping", "Pings.", json!({"type": "object"}))])?;
/// assert_eq!(
///     tools.to_string(),
///     r#"[{"type":"function","function":{"name":"ping","description":"Pings.","parameters":{"type":"object"}}}]"#
/// );
/// assert_eq!(tools[0]["function"]["name"], "ping");
/// assert_eq!(tools, json!([{"type": "function", "function": {"name": "ping", "description": "Pings.", "parameters": {"type": "object"}}}]));
/// # Ok::<(), toolnexus::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderTools {
    shape: Shape,
    specs: Vec<ToolSpec>,
    value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    OpenAi { strict: bool },
    Anthropic,
    Gemini,
}

#[derive(Serialize)]
struct Declaration<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Serialize)]
struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Declaration<'a>,
}

#[derive(Serialize)]
struct GeminiTools<'a> {
    #[serde(rename = "functionDeclarations")]
    function_declarations: Vec<Declaration<'a>>,
}

impl ProviderTools {
    fn new(shape: Shape, mut specs: Vec<ToolSpec>) -> Self {
        // schemas in sorted key order in every build (a `preserve_order` build keeps a map's
        // insertion order, which would otherwise show through)
        for spec in &mut specs {
            spec.parameters.sort_all_objects();
        }
        let mut tools = Self {
            shape,
            specs,
            value: Value::Null,
        };
        tools.value = serde_json::to_value(&tools).unwrap_or_default();
        tools
    }

    /// The declarations as a JSON value (the same value this dereferences to).
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The tool specs the declarations were made from, in order (schemas lowered, for the
    /// adapters that lower them).
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }
}

impl Serialize for ProviderTools {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let shape = self.shape;
        let declaration = move |spec| declaration(shape, spec);
        match self.shape {
            Shape::OpenAi { .. } => serializer.collect_seq(self.specs.iter().map(|s| OpenAiTool {
                kind: "function",
                function: declaration(s),
            })),
            Shape::Anthropic => serializer.collect_seq(self.specs.iter().map(declaration)),
            Shape::Gemini => serializer.collect_seq([GeminiTools {
                function_declarations: self.specs.iter().map(declaration).collect(),
            }]),
        }
    }
}

/// One tool's declaration in `shape`.
fn declaration(shape: Shape, spec: &ToolSpec) -> Declaration<'_> {
    let mut d = Declaration {
        name: &spec.name,
        description: &spec.description,
        parameters: None,
        input_schema: None,
        strict: None,
    };
    match shape {
        Shape::Anthropic => d.input_schema = Some(&spec.parameters),
        Shape::OpenAi { strict } => {
            d.parameters = Some(&spec.parameters);
            d.strict = strict.then_some(true);
        }
        Shape::Gemini => d.parameters = Some(&spec.parameters),
    }
    d
}

impl fmt::Display for ProviderTools {
    /// The compact JSON text, in the contract's key order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| fmt::Error)?)
    }
}

impl Deref for ProviderTools {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl PartialEq<Value> for ProviderTools {
    fn eq(&self, other: &Value) -> bool {
        self.value == *other
    }
}

impl PartialEq<ProviderTools> for Value {
    fn eq(&self, other: &ProviderTools) -> bool {
        *self == other.value
    }
}

impl From<ProviderTools> for Value {
    fn from(tools: ProviderTools) -> Self {
        tools.value
    }
}

/// OpenAI chat-completions tools:
/// `[{"type":"function","function":{"name","description","parameters"}}]`.
///
/// # Errors
///
/// What OpenAI would refuse the request for (see the [module docs](self)): an invalid or
/// duplicate name, parameters without root `"type":"object"`.
pub fn openai(specs: &[ToolSpec]) -> Result<ProviderTools> {
    check(specs, Shape::OpenAi { strict: false })?;
    Ok(ProviderTools::new(
        Shape::OpenAi { strict: false },
        specs.to_vec(),
    ))
}

/// Anthropic messages tools: `[{"name","description","input_schema"}]`.
///
/// # Errors
///
/// What Anthropic would refuse the request for (see the [module docs](self)): an invalid or
/// duplicate name, an `input_schema` without root `"type":"object"`.
pub fn anthropic(specs: &[ToolSpec]) -> Result<ProviderTools> {
    check(specs, Shape::Anthropic)?;
    Ok(ProviderTools::new(Shape::Anthropic, specs.to_vec()))
}

/// Gemini tools with the schemas passed **as they are**, exactly one wrapper element even with
/// no tools: `[{"functionDeclarations":[{"name","description","parameters"}]}]`.
///
/// Gemini rejects parts of JSON Schema that `schemars` emits (`"type":["string","null"]` for
/// an `Option`, `$ref`, ...); [`gemini`] lowers them first and is what to send.
///
/// # Errors
///
/// What Gemini would refuse the request for (see the [module docs](self)): an invalid or
/// duplicate name (a Gemini name starts with a letter or `_`), parameters without root
/// `"type":"object"`.
pub fn gemini_raw(specs: &[ToolSpec]) -> Result<ProviderTools> {
    check(specs, Shape::Gemini)?;
    Ok(ProviderTools::new(Shape::Gemini, specs.to_vec()))
}

/// OpenAI chat-completions tools in strict mode, each schema lowered by
/// [`openai_strict_schema`]:
/// `[{"type":"function","function":{"name","description","parameters","strict":true}}]`.
///
/// # Errors
///
/// What OpenAI would refuse the request for, as [`openai`]; then
/// [`Error::SchemaLowering`] for the first tool (in order) whose
/// schema strict mode cannot express, naming the tool, the construct and its location.
///
/// ```
/// use serde_json::json;
/// use toolnexus::model::ToolSpec;
///
/// let spec = ToolSpec::new("ping", "Pings.", json!({"type": "object", "properties": {}}));
/// assert_eq!(
///     toolnexus::adapters::openai_strict(&[spec]).unwrap().to_string(),
///     r#"[{"type":"function","function":{"name":"ping","description":"Pings.","parameters":{"additionalProperties":false,"properties":{},"required":[],"type":"object"},"strict":true}}]"#
/// );
/// ```
pub fn openai_strict(specs: &[ToolSpec]) -> Result<ProviderTools> {
    lowered(specs, Shape::OpenAi { strict: true }, openai_strict_schema)
}

/// Gemini tools with each schema lowered by [`gemini_schema`] to what Gemini accepts, exactly
/// one wrapper element even with no tools:
/// `[{"functionDeclarations":[{"name","description","parameters"}]}]`.
///
/// # Errors
///
/// What Gemini would refuse the request for, as [`gemini_raw`]; then
/// [`Error::SchemaLowering`] for the first tool (in order) whose
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
///     r#"[{"functionDeclarations":[{"name":"find","description":"Finds.","parameters":{"properties":{"near":{"nullable":true,"type":"string"}},"type":"object"}}]}]"#
/// );
/// ```
pub fn gemini(specs: &[ToolSpec]) -> Result<ProviderTools> {
    lowered(specs, Shape::Gemini, gemini_schema)
}

/// The tools of `shape`, once [`check`]ed, with each schema lowered by `lower` (the tool's
/// name, its schema), the first tool whose schema cannot be lowered failing all.
fn lowered(
    specs: &[ToolSpec],
    shape: Shape,
    lower: fn(&str, &Value) -> Result<Value>,
) -> Result<ProviderTools> {
    check(specs, shape)?;
    let mut lowered = Vec::with_capacity(specs.len());
    for spec in specs {
        let parameters = lower(&spec.name, &spec.parameters)?;
        lowered.push(ToolSpec::new(
            spec.name.clone(),
            spec.description.clone(),
            parameters,
        ));
    }
    Ok(ProviderTools::new(shape, lowered))
}

/// What the provider of `shape` refuses a whole request for, checked spec by spec in order:
/// the name, a name seen before, the parameters' root.
fn check(specs: &[ToolSpec], shape: Shape) -> Result<()> {
    let mut seen = std::collections::HashSet::with_capacity(specs.len());
    for spec in specs {
        validate_tool_name(&spec.name)?;
        if shape == Shape::Gemini
            && !spec
                .name
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return Err(Error::InvalidToolName {
                name: spec.name.clone(),
                reason: "Gemini needs a name that starts with a letter or `_`".to_owned(),
            });
        }
        if !seen.insert(spec.name.as_str()) {
            return Err(Error::DuplicateTool {
                name: spec.name.clone(),
            });
        }
        let root = spec.parameters.as_object().and_then(|o| o.get("type"));
        if root != Some(&Value::String("object".to_owned())) {
            let found = match root {
                None if spec.parameters.is_object() => "a schema without `type`".to_owned(),
                None => format!(
                    "{} instead of a schema",
                    crate::util::json_kind(&spec.parameters)
                ),
                Some(t) => format!("root `\"type\":{t}`"),
            };
            return Err(Error::InvalidSchema {
                tool: spec.name.clone(),
                reason: format!(
                    "the provider needs parameters with root `\"type\":\"object\"`, found {found}"
                ),
            });
        }
    }
    Ok(())
}
