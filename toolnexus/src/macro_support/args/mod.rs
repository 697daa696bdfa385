//! Support for `#[derive(Args)]`: the [`ArgType`] trait the derive implements (and the std types
//! it composes: scalars, `Option`, `Vec`, `Box`, maps keyed by `String`), the decoding error
//! that remembers its path, and how `#[tool]` picks the derive over `Deserialize + JsonSchema`
//! for a parameter ([`ParamProbe`]). Generated code reaches everything here as
//! `::toolnexus::__private::*`.
//!
//! A type's schema is compact JSON text the derive wrote at compile time; composite types
//! (a field whose type is another derived type, a default computed once running) splice their
//! parts' text together once per process ([`cached_schema`], a cache per type). Decoding reads
//! a `serde_json::Value` directly: a struct's object once, through [`decode_object`] over the
//! generic list of its fields ([`Fields`]: each key matched, its value decoded at once; generic
//! code, so `cargo check` of the user's crate has nothing per field to check but the list);
//! integers, bools and strings are read without serde. A value that does not decode fails with
//! serde's own wording, at the path inside the value. Encoding ([`ArgType::__toolnexus_json`]) writes a value as the JSON its
//! decoder reads back: a default shown in a schema.
//!
//! Here the trait and what the derive's decoders call; the decoding error is `error.rs`, the
//! `ArgType` impls of the std types `std_types.rs`, and `#[tool]`'s choice between the derive
//! and serde `probe.rs`.

mod error;
mod probe;
mod std_types;

pub use error::ArgError;
pub use probe::{ArgDecode, ArgSchema, DeriveWay, ParamProbe, ProbeDerive, ProbeSerde, SerdeWay};

use std::fmt;
pub use std::sync::OnceLock;

use serde_json::{Map, Value};

/// A JSON object's members.
pub type JsonMap = Map<String, Value>;

// ---------------------------------------------------------------------------------------------
// the trait

/// A type `#[derive(toolnexus::Args)]` can describe and decode: the derived types themselves,
/// and the std types they are built from.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an argument type of `#[derive(toolnexus::Args)]`",
    label = "this field's type does not derive `toolnexus::Args`",
    note = "derive `toolnexus::Args` on `{Self}`, or derive `serde::Deserialize` and `schemars::JsonSchema` on the outer type instead"
)]
pub trait ArgType: Sized {
    /// Writes the JSON Schema of the type as compact JSON text, with `description` first when
    /// given (else the type's own, if it has one).
    fn __toolnexus_schema(out: &mut String, description: Option<&str>);

    /// Writes the schema of `Option<Self>`: `Self`'s or `null`.
    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        open(out, description);
        out.push_str(r#""anyOf":["#);
        Self::__toolnexus_schema(out, None);
        out.push_str(r#",{"type":"null"}]}"#);
    }

    /// Decodes a present value.
    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError>;

    /// The value of an absent property: `None` for an `Option`, else nothing (the property
    /// is required).
    fn __toolnexus_absent() -> Option<Self> {
        None
    }

    /// The value as the JSON its decoder reads back (a default shown in a schema), or `None`
    /// when it has none (a float that is not finite, a skipped variant).
    fn __toolnexus_json(&self) -> Option<Value> {
        None
    }
}

/// `{` and a first `"description":..,` member when there is one.
fn open(out: &mut String, description: Option<&str>) {
    out.push('{');
    if let Some(d) = description {
        out.push_str(r#""description":"#);
        push_json_string(out, d);
        out.push(',');
    }
}

/// Appends `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    use fmt::Write as _;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes a schema the derive wrote whole: `rest` is its text after the opening `{`; the
/// description given wins over the type's own (`own`).
pub fn write_schema(out: &mut String, description: Option<&str>, own: Option<&str>, rest: &str) {
    open(out, description.or(own));
    out.push_str(rest);
}

/// Writes the start of a schema the derive writes in pieces: `{`, the description (given, else
/// the type's own) and `head` (the text up to the first part written by another type).
pub fn open_schema(out: &mut String, description: Option<&str>, own: Option<&str>, head: &str) {
    open(out, description.or(own));
    out.push_str(head);
}

/// The schema of `T` as text (for tests and for `#[tool]`).
pub fn schema_text<T: ArgType>(description: Option<&str>) -> String {
    let mut out = String::with_capacity(256);
    T::__toolnexus_schema(&mut out, description);
    out
}

/// The schema of `T` as JSON.
pub fn schema_of<T: ArgType>() -> Value {
    super::tool::schema_literal(&schema_text::<T>(None))
}

// ---------------------------------------------------------------------------------------------
// what the derive's decoders call

/// The members of an object, or ``invalid type: .., expected <expected>``.
#[inline]
pub fn object(value: Value, expected: &'static str) -> Result<Map<String, Value>, ArgError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ArgError::invalid_type(&other, expected)),
    }
}

/// How a field of type `T` is described, decoded and shown: the one place generated code names
/// a field's type (so a type that is not an [`ArgType`] is one error, not one per use).
#[inline]
pub fn field_type<T: ArgType>() -> FieldType<T> {
    FieldType {
        schema: T::__toolnexus_schema,
        decode: T::__toolnexus_decode,
        absent: T::__toolnexus_absent,
        json: T::__toolnexus_json,
    }
}

/// What [`field_type`] gives: `T`'s functions.
pub struct FieldType<T> {
    schema: fn(&mut String, Option<&str>),
    decode: fn(Value) -> Result<T, ArgError>,
    absent: fn() -> Option<T>,
    json: fn(&T) -> Option<Value>,
}

impl<T> fmt::Debug for FieldType<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FieldType")
    }
}

impl<T> FieldType<T> {
    /// Writes the field's schema, with its description.
    pub fn schema(&self, out: &mut String, description: Option<&str>) {
        (self.schema)(out, description);
    }

    /// Writes the field's schema, with its description and its default (when the default has
    /// JSON).
    pub fn schema_default(&self, out: &mut String, description: Option<&str>, default: &T) {
        (self.schema)(out, description);
        default_member(out, (self.json)(default).as_ref());
    }

    /// Decodes a present value; errors name the field.
    #[inline]
    pub fn decode(&self, value: Value, key: &'static str) -> Result<T, ArgError> {
        (self.decode)(value).map_err(|e| e.at_field(key))
    }

    /// A field's value: decoded when present, its absent value (`None`) or ``missing field``
    /// otherwise; errors name the field.
    #[inline]
    pub fn field(&self, value: Option<Value>, key: &'static str) -> Result<T, ArgError> {
        match value {
            Some(v) => self.decode(v, key),
            None => (self.absent)().ok_or_else(|| ArgError::missing_field(key)),
        }
    }

    /// The field's value as JSON (see [`ArgType::__toolnexus_json`]).
    pub fn json(&self, value: &T) -> Option<Value> {
        (self.json)(value)
    }
}

impl<T> FieldType<T> {
    /// The struct field `key`, required (its absent value, or ``missing field``).
    #[inline]
    pub fn required(self, key: &'static str) -> Required<T> {
        Required { ty: self, key }
    }

    /// The struct field `key`, with a default: absent or `null` leaves it unset (OpenAI strict
    /// schemas make models send `null` for what they leave out).
    #[inline]
    pub fn defaulted(self, key: &'static str) -> Defaulted<T> {
        Defaulted { ty: self, key }
    }
}

/// A required struct field (see [`FieldType::required`]).
pub struct Required<T> {
    ty: FieldType<T>,
    key: &'static str,
}

/// A struct field with a default (see [`FieldType::defaulted`]).
pub struct Defaulted<T> {
    ty: FieldType<T>,
    key: &'static str,
}

impl<T> fmt::Debug for Required<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Required").field(&self.key).finish()
    }
}

impl<T> fmt::Debug for Defaulted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Defaulted").field(&self.key).finish()
    }
}

/// A struct's fields as the derive lists them, `(field, (field, (.., ())))` (a list of any
/// length with no generated code per field but the list itself): each key matched as the
/// object is read, its value decoded at once into its slot.
pub trait Fields {
    /// The fields' values so far: `(Option<T>, (.., ()))`.
    type Slots;
    /// The fields' values once read: a required field's `T` (its absent value when absent),
    /// a defaulted field's `Option<T>` (`None`: the default), as `(T, (Option<U>, (.., ())))`.
    type Values;

    /// No field read yet.
    fn empty(&self) -> Self::Slots;

    /// Decodes `value` into the slot of the field named `key`; `Ok(false)` when there is none.
    ///
    /// # Errors
    ///
    /// The value's error, at the field's key.
    fn offer(&self, slots: &mut Self::Slots, key: &str, value: Value) -> Result<bool, ArgError>;

    /// The values read; a required field that is absent is its absent value or
    /// ``missing field``.
    ///
    /// # Errors
    ///
    /// ``missing field`` for the first required field absent with no absent value.
    fn finish(&self, slots: Self::Slots) -> Result<Self::Values, ArgError>;
}

impl Fields for () {
    type Slots = ();
    type Values = ();

    #[inline]
    fn empty(&self) {}

    #[inline]
    fn offer(&self, (): &mut (), _: &str, _: Value) -> Result<bool, ArgError> {
        Ok(false)
    }

    #[inline]
    fn finish(&self, (): ()) -> Result<(), ArgError> {
        Ok(())
    }
}

impl<T, R: Fields> Fields for (Required<T>, R) {
    type Slots = (Option<T>, R::Slots);
    type Values = (T, R::Values);

    #[inline]
    fn empty(&self) -> Self::Slots {
        (None, self.1.empty())
    }

    #[inline]
    fn offer(&self, slots: &mut Self::Slots, key: &str, value: Value) -> Result<bool, ArgError> {
        if key == self.0.key {
            slots.0 = Some(self.0.ty.decode(value, self.0.key)?);
            Ok(true)
        } else {
            self.1.offer(&mut slots.1, key, value)
        }
    }

    #[inline]
    fn finish(&self, slots: Self::Slots) -> Result<Self::Values, ArgError> {
        let value = match slots.0 {
            Some(v) => v,
            None => (self.0.ty.absent)().ok_or_else(|| ArgError::missing_field(self.0.key))?,
        };
        Ok((value, self.1.finish(slots.1)?))
    }
}

impl<T, R: Fields> Fields for (Defaulted<T>, R) {
    type Slots = (Option<T>, R::Slots);
    type Values = (Option<T>, R::Values);

    #[inline]
    fn empty(&self) -> Self::Slots {
        (None, self.1.empty())
    }

    #[inline]
    fn offer(&self, slots: &mut Self::Slots, key: &str, value: Value) -> Result<bool, ArgError> {
        if key == self.0.key {
            if !value.is_null() {
                slots.0 = Some(self.0.ty.decode(value, self.0.key)?);
            }
            Ok(true)
        } else {
            self.1.offer(&mut slots.1, key, value)
        }
    }

    #[inline]
    fn finish(&self, slots: Self::Slots) -> Result<Self::Values, ArgError> {
        Ok((slots.0, self.1.finish(slots.1)?))
    }
}

/// A struct's fields from its object's members, each key matched and its value decoded as it
/// is read; a key no field has is ``unknown field`` (`keys` lists them for the message).
///
/// # Errors
///
/// The first field's error, at its key; ``unknown field``; ``missing field``.
#[inline]
pub fn decode_object<F: Fields>(
    map: Map<String, Value>,
    keys: &'static [&'static str],
    fields: &F,
) -> Result<F::Values, ArgError> {
    let mut slots = fields.empty();
    for (key, value) in map {
        if !fields.offer(&mut slots, &key, value)? {
            return Err(ArgError::unknown_field(&key, keys));
        }
    }
    fields.finish(slots)
}

/// Adds `"default":<value>` as the last member of the schema just written (which ends with its
/// closing `}`), when there is a value.
pub fn default_member(out: &mut String, value: Option<&Value>) {
    let Some(text) = value.and_then(|v| serde_json::to_string(v).ok()) else {
        return;
    };
    if out.ends_with('}') {
        out.pop();
        if !out.ends_with('{') {
            out.push(',');
        }
        out.push_str(r#""default":"#);
        out.push_str(&text);
        out.push('}');
    }
}

/// The members of an object into slots, in the order of `keys`; any other key is
/// ``unknown field``.
#[inline]
pub fn slots<const N: usize>(
    map: Map<String, Value>,
    keys: &'static [&'static str; N],
) -> Result<[Option<Value>; N], ArgError> {
    let mut slots = [const { None }; N];
    for (k, v) in map {
        match keys.iter().position(|key| *key == k) {
            Some(i) => slots[i] = Some(v),
            None => return Err(ArgError::unknown_field(&k, keys)),
        }
    }
    Ok(slots)
}

/// Takes the tag of an internally tagged enum out of its object.
#[inline]
pub fn tag(map: &mut Map<String, Value>, key: &'static str) -> Result<String, ArgError> {
    tag_value(map.remove(key), key)
}

/// The tag of a tagged enum: a string, or ``missing field`` / ``invalid type``.
#[inline]
pub fn tag_value(value: Option<Value>, key: &'static str) -> Result<String, ArgError> {
    match value {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ArgError::invalid_type(&other, "a variant name").at_field(key)),
        None => Err(ArgError::missing_field(key)),
    }
}

/// The content of an adjacently tagged struct variant, decoded by `decode`; errors inside
/// name the content's key.
pub fn content<T>(
    value: Option<Value>,
    key: &'static str,
    expected: &'static str,
    decode: fn(Map<String, Value>) -> Result<T, ArgError>,
) -> Result<T, ArgError> {
    match value {
        Some(v) => object(v, expected)
            .and_then(decode)
            .map_err(|e| e.at_field(key)),
        None => Err(ArgError::missing_field(key)),
    }
}

/// An adjacently tagged unit variant has no content.
pub fn no_content(
    value: Option<&Value>,
    key: &'static str,
    expected: &'static [&'static str],
) -> Result<(), ArgError> {
    match value {
        Some(_) => Err(ArgError::unknown_field(key, expected)),
        None => Ok(()),
    }
}

/// Writes a `"description":"..",` member (a description only known once compiled).
pub fn description_member(out: &mut String, description: &str) {
    out.push_str(r#""description":"#);
    push_json_string(out, description);
    out.push(',');
}

/// A schema written in pieces (a part comes from another type, a description or a default is
/// only known once running), assembled once per process: `body` writes the text after `{` and
/// the description, into the cache `cell` the derive declares per type.
pub fn cached_schema(
    out: &mut String,
    description: Option<&str>,
    own: Option<&str>,
    cell: &'static OnceLock<String>,
    body: fn(&mut String),
) {
    let text = cell.get_or_init(|| {
        let mut text = String::with_capacity(256);
        body(&mut text);
        text
    });
    open(out, description.or(own));
    out.push_str(text);
}

/// A unit variant's name: a string, or ``invalid type``.
#[inline]
pub fn variant_name(value: Value, expected: &'static str) -> Result<String, ArgError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(ArgError::invalid_type(&other, expected)),
    }
}

/// An object's JSON from its members' (`None` when a member has none).
pub fn object_json<const N: usize>(members: [(&str, Option<Value>); N]) -> Option<Value> {
    members_json(Map::with_capacity(N), members)
}

/// An internally tagged variant's JSON: the tag, then the members.
pub fn tagged_json<const N: usize>(
    tag: &str,
    name: &str,
    members: [(&str, Option<Value>); N],
) -> Option<Value> {
    let mut map = Map::with_capacity(N + 1);
    map.insert(tag.to_owned(), Value::String(name.to_owned()));
    members_json(map, members)
}

/// An adjacently tagged variant's JSON: the tag and the content.
pub fn adjacent_json(tag: &str, name: &str, key: &str, content: Option<Value>) -> Option<Value> {
    tagged_json(tag, name, [(key, content)])
}

fn members_json<const N: usize>(
    mut map: Map<String, Value>,
    members: [(&str, Option<Value>); N],
) -> Option<Value> {
    for (key, value) in members {
        map.insert(key.to_owned(), value?);
    }
    Some(Value::Object(map))
}

/// A variant's name as a JSON string.
#[inline]
pub fn name_json(name: &str) -> Option<Value> {
    Some(Value::String(name.to_owned()))
}
