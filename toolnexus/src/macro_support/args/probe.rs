//! How `#[tool]` picks the derive over `Deserialize + JsonSchema` for a parameter
//! ([`ParamProbe`](super::ParamProbe)).

use crate::limits::{excerpt, shorten};
use crate::macro_support::tool::{Args, SchemaBuilder, StructSchema};
use crate::result::ToolResult;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

use super::{ArgType, schema_of, schema_text};

// ---------------------------------------------------------------------------------------------
// `#[tool]`: a parameter's type that derives `Args`, or is `Deserialize + JsonSchema`

/// Picks how `#[tool]` describes and decodes a parameter of type `T`:
/// `(&&ParamProbe::<T>::new()).__toolnexus_way()` is a [`DeriveWay`] when `T` is an
/// [`ArgType`], else a [`SerdeWay`].
pub struct ParamProbe<T>(PhantomData<T>);

impl<T> ParamProbe<T> {
    /// The probe.
    #[allow(clippy::new_without_default)] // only generated code makes one
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> fmt::Debug for ParamProbe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ParamProbe")
    }
}

/// The derive's way, preferred.
pub trait ProbeDerive<T> {
    /// How to describe and decode `T`.
    fn __toolnexus_way(&self) -> DeriveWay<T>;
}

impl<T: ArgType> ProbeDerive<T> for &ParamProbe<T> {
    fn __toolnexus_way(&self) -> DeriveWay<T> {
        DeriveWay(PhantomData)
    }
}

/// The `Deserialize + JsonSchema` way, the fallback.
pub trait ProbeSerde<T> {
    /// How to describe and decode `T`.
    fn __toolnexus_way(&self) -> SerdeWay<T>;
}

impl<T> ProbeSerde<T> for ParamProbe<T> {
    fn __toolnexus_way(&self) -> SerdeWay<T> {
        SerdeWay(PhantomData)
    }
}

/// A parameter whose type derives `Args`.
pub struct DeriveWay<T>(PhantomData<T>);

impl<T> fmt::Debug for DeriveWay<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeriveWay")
    }
}

impl<T: ArgType> DeriveWay<T> {
    /// Adds the parameter's property to the tool's schema.
    pub fn schema(self, schema: &mut SchemaBuilder, key: &str, description: Option<&str>) {
        schema.derived(key, &schema_text::<T>(description));
    }

    /// Decodes the parameter (`value` is what the call held under `key`).
    pub fn decode(self, tool: &str, key: &str, value: Option<Value>) -> Result<T, ToolResult> {
        match value {
            Some(v) => self.decode_value(tool, key, v),
            None => T::__toolnexus_absent().ok_or_else(|| {
                ToolResult::error(shorten(format!(
                    "invalid arguments for {tool}: missing field `{}`",
                    excerpt(key)
                )))
            }),
        }
    }

    /// Decodes a present parameter.
    pub fn decode_value(self, tool: &str, key: &str, value: Value) -> Result<T, ToolResult> {
        T::__toolnexus_decode(value).map_err(|e| {
            ToolResult::error(shorten(format!(
                "invalid arguments for {tool}: {}",
                e.at_key(key)
            )))
        })
    }

    /// The schema of an `#[args]` parameter: the type's own (it closes itself).
    pub fn struct_schema(&self) -> StructSchema {
        StructSchema::derived(schema_of::<T>())
    }

    /// Decodes an `#[args]` parameter from the whole arguments object.
    pub fn struct_args(
        self,
        tool: &str,
        args: Args,
        _schema: &StructSchema,
    ) -> Result<T, ToolResult> {
        T::__toolnexus_decode(Value::Object(args))
            .map_err(|e| ToolResult::error(shorten(format!("invalid arguments for {tool}: {e}"))))
    }
}

/// A parameter whose type is `Deserialize + JsonSchema` (as before the derive).
pub struct SerdeWay<T>(PhantomData<T>);

impl<T> fmt::Debug for SerdeWay<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SerdeWay")
    }
}

/// A `#[tool]` parameter type described by its `JsonSchema` (the way of a type that does not
/// derive `Args`). Its own trait so that the compile error of a type without a schema speaks
/// of the parameter, not of `__private` or schemars' trait in the headline.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an argument type of `#[tool]`: it has no JSON Schema",
    label = "this parameter's type derives neither `toolnexus::Args` nor `schemars::JsonSchema`",
    note = "derive `toolnexus::Args` on `{Self}`, or derive `schemars::JsonSchema` beside `serde::Deserialize`"
)]
pub trait ArgSchema: schemars::JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: schemars::JsonSchema> ArgSchema for T {}

/// A `#[tool]` parameter type decoded by serde (the way of a type that does not derive
/// `Args`); its own trait for the same reason as [`ArgSchema`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an argument type of `#[tool]`: serde cannot decode it",
    label = "this parameter's type derives neither `toolnexus::Args` nor `serde::Deserialize`",
    note = "derive `toolnexus::Args` on `{Self}`, or derive `serde::Deserialize` beside `schemars::JsonSchema`"
)]
pub trait ArgDecode: for<'de> Deserialize<'de> {}

#[diagnostic::do_not_recommend]
impl<T: for<'de> Deserialize<'de>> ArgDecode for T {}

impl<T> SerdeWay<T> {
    /// Adds the parameter's property to the tool's schema (its `JsonSchema`).
    pub fn schema(self, schema: &mut SchemaBuilder, key: &str, description: Option<&str>)
    where
        T: ArgSchema,
    {
        schema.typed::<T>(key, description);
    }

    /// Decodes the parameter with serde.
    pub fn decode(self, tool: &str, key: &str, value: Option<Value>) -> Result<T, ToolResult>
    where
        T: ArgDecode,
    {
        crate::macro_support::tool::arg::<T>(tool, key, value)
    }

    /// Decodes a present parameter with serde.
    pub fn decode_value(self, tool: &str, key: &str, value: Value) -> Result<T, ToolResult>
    where
        T: ArgDecode,
    {
        crate::macro_support::tool::arg_value::<T>(tool, key, value)
    }

    /// The schema of an `#[args]` parameter.
    pub fn struct_schema(&self) -> StructSchema
    where
        T: schemars::JsonSchema,
    {
        crate::macro_support::tool::struct_schema::<T>()
    }

    /// Decodes an `#[args]` parameter.
    pub fn struct_args(self, tool: &str, args: Args, schema: &StructSchema) -> Result<T, ToolResult>
    where
        T: DeserializeOwned,
    {
        crate::macro_support::tool::struct_args::<T>(tool, args, schema)
    }
}
