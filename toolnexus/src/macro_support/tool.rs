//! Support for `#[tool]` and `#[toolset]`: argument decoding and schema assembly (the return
//! mapping is in `returns.rs`). Generated code reaches everything here as
//! `::toolnexus::__private::*`.
//!
//! Nothing in here panics: a malformed argument becomes the failure [`ToolResult`] the model
//! reads, and a schema that cannot be assembled degrades to a plain object schema.

use std::fmt;

use serde::Deserialize;
use serde::Serialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value};

pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
pub use std::boxed::Box;
pub use std::string::String;
pub use std::sync::{Arc, LazyLock};
pub use std::vec::Vec;

use crate::limits::{excerpt, shorten};

pub use crate::context::Context;
pub use crate::result::ToolResult;
pub use crate::tool::{BoxFuture, IntoToolResult, SharedTool, Tool};
pub use serde_json::Value as JsonValue;

/// The arguments object a tool receives.
pub type Args = Map<String, Value>;

// ---------------------------------------------------------------------------------------------
// argument decoding

/// Decodes one argument: `value` is what the call held under `key` (`None` when absent).
///
/// An absent key decodes the way serde decodes a missing struct field: `Option<T>` becomes
/// `None`, anything else fails with ``missing field `key` ``. Errors name the tool and the full
/// path (`invalid arguments for book_flight: seats: invalid type: ...`).
pub fn arg<T: for<'de> Deserialize<'de>>(
    tool: &str,
    key: &str,
    value: Option<Value>,
) -> Result<T, ToolResult> {
    match value {
        Some(value) => arg_value(tool, key, value),
        None => T::deserialize(Missing(key)).map_err(|e| fail(tool, &e)),
    }
}

/// Decodes one argument of a scalar type (a string, number, bool, or an `Option` of one):
/// there is no path inside it to track, so serde's error is reported at `key` as it is.
pub fn scalar<T: for<'de> Deserialize<'de>>(
    tool: &str,
    key: &str,
    value: Option<Value>,
) -> Result<T, ToolResult> {
    match value {
        Some(value) => T::deserialize(value).map_err(|e| {
            ToolResult::error(shorten(format!("invalid arguments for {tool}: {key}: {e}")))
        }),
        None => T::deserialize(Missing(key)).map_err(|e| fail(tool, &e)),
    }
}

/// Decodes one present argument, naming `key` and the path inside it on error.
pub fn arg_value<T: for<'de> Deserialize<'de>>(
    tool: &str,
    key: &str,
    value: Value,
) -> Result<T, ToolResult> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let inner = crate::tool::error_path(&err);
        let path = if inner.is_empty() {
            key.to_owned()
        } else if inner.starts_with('[') {
            format!("{key}{inner}")
        } else {
            format!("{key}.{inner}")
        };
        ToolResult::error(shorten(format!(
            "invalid arguments for {tool}: {}: {}",
            excerpt(&path),
            err.into_inner()
        )))
    })
}

/// The result of a generated `execute_now` (which always answers `Ok`), for `execute`.
pub fn now_or_failure(tool: &str, now: Result<ToolResult, Args>) -> ToolResult {
    now.unwrap_or_else(|_| ToolResult::error(format!("tool {tool} did not run")))
}

/// The failure for a key the tool does not take, listing the accepted ones (serde's
/// `deny_unknown_fields` wording).
pub fn unknown_field(tool: &str, key: &str, fields: &'static [&'static str]) -> ToolResult {
    let err = <serde_json::Error as de::Error>::unknown_field(key, fields);
    fail(tool, &err)
}

fn fail(tool: &str, err: &dyn fmt::Display) -> ToolResult {
    ToolResult::error(shorten(format!("invalid arguments for {tool}: {err}")))
}

/// Decodes a whole arguments struct (a `#[args]` parameter). When the struct's own schema does
/// not say what happens to unknown keys, [`struct_schema`] closed it with
/// `additionalProperties: false` and unknown keys are rejected here, so schema and decoder agree.
pub fn struct_args<T: DeserializeOwned>(
    tool: &str,
    args: Args,
    schema: &StructSchema,
) -> Result<T, ToolResult> {
    if let Some(fields) = &schema.closed
        && let Some(key) = args.keys().find(|k| !fields.contains(k))
    {
        let err = <serde_json::Error as de::Error>::custom(format_args!(
            "unknown field `{key}`, {}",
            ExpectedFields(fields)
        ));
        return Err(fail(tool, &err));
    }
    crate::tool::deserialize_args(tool, args)
}

struct ExpectedFields<'a>(&'a [String]);

impl fmt::Display for ExpectedFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str("there are no fields"),
            [one] => write!(f, "expected `{one}`"),
            [a, b] => write!(f, "expected `{a}` or `{b}`"),
            many => {
                f.write_str("expected one of ")?;
                for (i, name) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{name}`")?;
                }
                Ok(())
            }
        }
    }
}

/// A deserializer for an absent field: `Option` reads it as `None`, everything else reports
/// ``missing field `name` ``, exactly as a serde derive does.
struct Missing<'a>(&'a str);

impl<'de> Deserializer<'de> for Missing<'_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(<serde_json::Error as de::Error>::custom(format_args!(
            "missing field `{}`",
            self.0
        )))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

// ---------------------------------------------------------------------------------------------
// schemas

/// Parses the input schema the macro wrote as a literal (every parameter's type was known).
pub fn schema_literal(json: &str) -> Value {
    let mut schema = serde_json::from_str(json).unwrap_or_else(|_| empty_schema());
    // keys in sorted order whether or not a crate turned on serde_json's `preserve_order`
    schema.sort_all_objects();
    schema
}

fn empty_schema() -> Value {
    let mut root = Map::new();
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    root.insert("properties".to_owned(), Value::Object(Map::new()));
    Value::Object(root)
}

/// Assembles an input schema property by property, when some parameter's schema comes from
/// its type's `JsonSchema` implementation.
pub struct SchemaBuilder {
    generator: schemars::SchemaGenerator,
    properties: Map<String, Value>,
}

impl fmt::Debug for SchemaBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaBuilder")
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

impl Default for SchemaBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SchemaBuilder {
    /// An empty schema.
    pub fn new() -> Self {
        Self {
            generator: crate::schema::generator(),
            properties: Map::new(),
        }
    }

    /// A property whose schema the macro wrote (`json`), with an optional description that is
    /// only known once compiled (a `#[doc = include_str!(..)]`).
    pub fn known(&mut self, key: &str, json: &str, description: Option<&str>) {
        let schema = serde_json::from_str(json).unwrap_or_else(|_| Value::Object(Map::new()));
        self.insert(key, schema, description);
    }

    /// A property of type `T`, its schema generated by `schemars` (subschemas inlined).
    pub fn typed<T: schemars::JsonSchema>(&mut self, key: &str, description: Option<&str>) {
        let schema = self.generator.subschema_for::<T>().to_value();
        self.insert(key, schema, description);
    }

    /// A property whose schema a `#[derive(Args)]` type wrote (`json`, its description in it).
    pub(crate) fn derived(&mut self, key: &str, json: &str) {
        let schema = serde_json::from_str(json).unwrap_or_else(|_| Value::Object(Map::new()));
        self.properties.insert(key.to_owned(), schema);
    }

    fn insert(&mut self, key: &str, schema: Value, description: Option<&str>) {
        let schema = match (description, schema) {
            (Some(d), Value::Object(obj)) => {
                let mut with = Map::with_capacity(obj.len() + 1);
                with.insert("description".to_owned(), Value::String(d.to_owned()));
                with.extend(obj.into_iter().filter(|(k, _)| k != "description"));
                Value::Object(with)
            }
            (Some(d), Value::Bool(true)) => {
                let mut with = Map::new();
                with.insert("description".to_owned(), Value::String(d.to_owned()));
                Value::Object(with)
            }
            (_, schema) => schema,
        };
        self.properties.insert(key.to_owned(), schema);
    }

    /// Records a parameter's default value (`#[arg(default = ..)]`), when it serializes.
    pub fn default_value(&mut self, key: &str, value: Option<Value>) {
        if let (Some(value), Some(Value::Object(prop))) = (value, self.properties.get_mut(key)) {
            prop.insert("default".to_owned(), value);
        }
    }

    /// The finished schema: `{"type":"object","properties","required","additionalProperties":false}`,
    /// plus `$defs` for recursive types.
    pub fn finish(mut self, required: &[&str]) -> Value {
        let mut root = Map::new();
        root.insert("type".to_owned(), Value::String("object".to_owned()));
        root.insert("properties".to_owned(), Value::Object(self.properties));
        if !required.is_empty() {
            root.insert(
                "required".to_owned(),
                Value::Array(
                    required
                        .iter()
                        .map(|r| Value::String((*r).to_owned()))
                        .collect(),
                ),
            );
        }
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(defs));
        }
        let mut schema = Value::Object(root);
        schema.sort_all_objects();
        schema
    }
}

/// The input schema of a `#[args]` struct, and whether toolnexus closed it.
#[derive(Debug)]
pub struct StructSchema {
    /// The schema.
    pub schema: Value,
    /// The accepted keys, when toolnexus added `additionalProperties: false` (the struct's
    /// deserializer would otherwise ignore unknown keys).
    closed: Option<Vec<String>>,
}

impl StructSchema {
    /// The schema of a `#[derive(Args)]` struct: closed by the derive, which rejects unknown
    /// keys itself.
    pub(crate) fn derived(schema: Value) -> Self {
        Self {
            schema,
            closed: None,
        }
    }
}

/// `schemars`' schema of `T`, closed with `additionalProperties: false` unless `T` says
/// otherwise.
pub fn struct_schema<T: schemars::JsonSchema>() -> StructSchema {
    let mut schema = crate::schema::input_schema_for::<T>();
    let mut closed = None;
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("description");
        if let Some(extra) = crate::json_text::remove_key(obj, "additionalProperties") {
            // after `properties` and `required`, as in every other tool schema
            obj.insert("additionalProperties".to_owned(), extra);
        } else {
            obj.insert("additionalProperties".to_owned(), Value::Bool(false));
            let names = obj
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            closed = Some(names);
        }
    }
    schema.sort_all_objects();
    StructSchema { schema, closed }
}

/// A default value's JSON for the schema: what `#[derive(Args)]` writes for it when its type
/// is an argument type, else its `Serialize` form, else `None`
/// (`(&&&DefaultProbe(&v)).__toolnexus_default()`).
#[derive(Debug)]
pub struct DefaultProbe<'a, T>(pub &'a T);

/// The argument-type case of [`DefaultProbe`] (preferred: it is what the decoder reads back).
pub trait DefaultArg {
    /// The default as JSON.
    fn __toolnexus_default(&self) -> Option<Value>;
}

impl<T: super::args::ArgType> DefaultArg for &&DefaultProbe<'_, T> {
    fn __toolnexus_default(&self) -> Option<Value> {
        self.0.__toolnexus_json()
    }
}

/// The `Serialize` case of [`DefaultProbe`].
pub trait DefaultSerialize {
    /// The default as JSON.
    fn __toolnexus_default(&self) -> Option<Value>;
}

impl<T: Serialize> DefaultSerialize for &DefaultProbe<'_, T> {
    fn __toolnexus_default(&self) -> Option<Value> {
        serde_json::to_value(self.0).ok()
    }
}

/// The fallback case of [`DefaultProbe`].
pub trait DefaultOpaque {
    /// No JSON for this default.
    fn __toolnexus_default(&self) -> Option<Value>;
}

impl<T> DefaultOpaque for DefaultProbe<'_, T> {
    fn __toolnexus_default(&self) -> Option<Value> {
        None
    }
}
