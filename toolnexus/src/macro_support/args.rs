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
//! The file is longer than the crate's usual ~600 lines on purpose: its larger half is one
//! `ArgType` impl per std type the derive composes (each a schema fragment and a decoder), and
//! splitting them from the trait they implement would only scatter one table.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::BuildHasher;
use std::marker::PhantomData;
pub use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Unexpected};
use serde_json::{Map, Value};

use super::tool::{Args, SchemaBuilder, StructSchema};

/// A JSON object's members.
pub type JsonMap = Map<String, Value>;
use crate::limits::{excerpt, shorten};
use crate::result::ToolResult;

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
// the error

/// A value that does not decode: serde's message, and where in the value it is.
pub struct ArgError(Box<ErrorInner>);

struct ErrorInner {
    /// Innermost first.
    path: Vec<Segment>,
    message: String,
}

enum Segment {
    /// A field's key (static: no allocation for the path of an error) or a map's key.
    Key(Cow<'static, str>),
    Index(usize),
}

impl ArgError {
    fn new(message: impl fmt::Display) -> Self {
        Self(Box::new(ErrorInner {
            path: Vec::new(),
            message: message.to_string(),
        }))
    }

    fn serde(e: &serde_json::Error) -> Self {
        Self::new(e)
    }

    /// The error, one key further out.
    #[must_use]
    pub fn at_key(mut self, key: &str) -> Self {
        self.0.path.push(Segment::Key(Cow::Owned(key.to_owned())));
        self
    }

    /// The error, one field further out (a key known at compile time).
    #[must_use]
    pub fn at_field(mut self, key: &'static str) -> Self {
        self.0.path.push(Segment::Key(Cow::Borrowed(key)));
        self
    }

    #[must_use]
    fn at_map_key(mut self, key: String) -> Self {
        self.0.path.push(Segment::Key(Cow::Owned(key)));
        self
    }

    #[must_use]
    fn at_index(mut self, index: usize) -> Self {
        self.0.path.push(Segment::Index(index));
        self
    }

    /// ``unknown field `key`, expected ..`` (serde's `deny_unknown_fields` wording).
    pub fn unknown_field(key: &str, expected: &'static [&'static str]) -> Self {
        Self::serde(&de::Error::unknown_field(key, expected))
    }

    /// ``missing field `key` ``.
    pub fn missing_field(key: &'static str) -> Self {
        Self::serde(&de::Error::missing_field(key))
    }

    /// ``unknown variant `tag`, expected ..``.
    pub fn unknown_variant(tag: &str, expected: &'static [&'static str]) -> Self {
        Self::serde(&de::Error::unknown_variant(tag, expected))
    }

    /// ``invalid type: <what the value is>, expected <expected>``.
    pub fn invalid_type(value: &Value, expected: &'static str) -> Self {
        Self::serde(&de::Error::invalid_type(unexpected(value), &expected))
    }

    /// Where the error is (`amount`, `items[2].name`; empty at the root).
    pub fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.0.path.iter().rev() {
            match seg {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Index(i) => {
                    use fmt::Write as _;
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }

    /// What is wrong, in serde's words.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            f.write_str(&self.0.message)
        } else {
            write!(f, "{}: {}", excerpt(&path), self.0.message)
        }
    }
}

impl fmt::Debug for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ArgError").field(&self.to_string()).finish()
    }
}

/// What a value is, in serde's terms (serde_json spells a `Unit` as `null`).
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Unexpected::Unsigned(u)
            } else if let Some(i) = n.as_i64() {
                Unexpected::Signed(i)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
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

// ---------------------------------------------------------------------------------------------
// std types

/// Scalars: their schema is the one `#[tool]` writes for them, decoding is serde's.
macro_rules! scalar {
    ($($ty:ty [$read:ident] => $schema:expr, $nullable:expr;)*) => {$(
        impl ArgType for $ty {
            fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
                open(out, description);
                out.push_str($schema);
            }

            fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
                open(out, description);
                out.push_str($nullable);
            }

            #[inline]
            fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
                $read(value)
            }

            fn __toolnexus_json(&self) -> Option<Value> {
                Json::json(self)
            }
        }
    )*};
}

/// Decoding by serde's own `Deserialize` (its errors, its range checks).
#[inline(never)]
fn by_serde<T: DeserializeOwned>(value: Value) -> Result<T, ArgError> {
    T::deserialize(value).map_err(|e| ArgError::serde(&e))
}

/// `bool`: read directly, serde's error otherwise.
#[inline]
fn boolean(value: Value) -> Result<bool, ArgError> {
    match value {
        Value::Bool(b) => Ok(b),
        other => by_serde(other),
    }
}

/// `f64`: any number, as serde reads it; serde's error otherwise.
#[inline]
fn double(value: Value) -> Result<f64, ArgError> {
    if let Value::Number(n) = &value
        && let Some(f) = n.as_f64()
    {
        return Ok(f);
    }
    by_serde(value)
}

/// Unsigned integers: an integer in range read directly; anything else (a float that is an
/// integer, an error in serde's words) through serde.
#[inline]
fn unsigned<T: TryFrom<u64> + DeserializeOwned>(value: Value) -> Result<T, ArgError> {
    if let Value::Number(n) = &value
        && let Some(u) = n.as_u64()
        && let Ok(v) = T::try_from(u)
    {
        return Ok(v);
    }
    by_serde(integral(value))
}

/// Signed integers, as [`unsigned`].
#[inline]
fn signed<T: TryFrom<i64> + DeserializeOwned>(value: Value) -> Result<T, ArgError> {
    if let Value::Number(n) = &value
        && let Some(i) = n.as_i64()
        && let Ok(v) = T::try_from(i)
    {
        return Ok(v);
    }
    by_serde(integral(value))
}

/// A scalar's JSON (what `serde_json` makes of it); `None` for a float that is not finite.
trait Json {
    fn json(&self) -> Option<Value>;
}

macro_rules! json_int {
    ($($ty:ty)*) => {$(
        impl Json for $ty {
            fn json(&self) -> Option<Value> {
                serde_json::to_value(self).ok()
            }
        }
    )*};
}

json_int!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);

impl Json for bool {
    fn json(&self) -> Option<Value> {
        Some(Value::Bool(*self))
    }
}

impl Json for char {
    fn json(&self) -> Option<Value> {
        Some(Value::String(self.to_string()))
    }
}

impl Json for f32 {
    /// The shortest decimal that reads back as the same `f32` (`0.1`, not `0.10000000149..`).
    fn json(&self) -> Option<Value> {
        let shortest: f64 = self.to_string().parse().ok()?;
        serde_json::Number::from_f64(shortest).map(Value::Number)
    }
}

impl Json for f64 {
    fn json(&self) -> Option<Value> {
        serde_json::Number::from_f64(*self).map(Value::Number)
    }
}

/// A float without a fractional part as the integer it is (JSON Schema's `integer` accepts
/// `2.0`, and so does the decoder); any other value as it is. serde reads an integer as a float
/// already.
#[inline]
fn integral(value: Value) -> Value {
    if let Value::Number(n) = &value
        && let Some(f) = n.as_f64()
        && n.is_f64()
        && f.fract() == 0.0
    {
        // in range of i64 or u64: exactly representable bounds, checked before the cast
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
            return Value::from(f as i64);
        } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
            return Value::from(f as u64);
        }
    }
    value
}

scalar! {
    bool [boolean] => r#""type":"boolean"}"#, r#""type":["boolean","null"]}"#;
    char [by_serde] => r#""type":"string","minLength":1,"maxLength":1}"#,
        r#""type":["string","null"],"minLength":1,"maxLength":1}"#;
    f32 [by_serde] => r#""type":"number","format":"float"}"#, r#""type":["number","null"],"format":"float"}"#;
    f64 [double] => r#""type":"number","format":"double"}"#,
        r#""type":["number","null"],"format":"double"}"#;
    i8 [signed] => r#""type":"integer","format":"int8","minimum":-128,"maximum":127}"#,
        r#""type":["integer","null"],"format":"int8","minimum":-128,"maximum":127}"#;
    i16 [signed] => r#""type":"integer","format":"int16","minimum":-32768,"maximum":32767}"#,
        r#""type":["integer","null"],"format":"int16","minimum":-32768,"maximum":32767}"#;
    i32 [signed] => r#""type":"integer","format":"int32","minimum":-2147483648,"maximum":2147483647}"#,
        r#""type":["integer","null"],"format":"int32","minimum":-2147483648,"maximum":2147483647}"#;
    i64 [signed] => r#""type":"integer","format":"int64"}"#, r#""type":["integer","null"],"format":"int64"}"#;
    i128 [signed] => r#""type":"integer","format":"int128"}"#,
        r#""type":["integer","null"],"format":"int128"}"#;
    isize [signed] => r#""type":"integer","format":"int"}"#, r#""type":["integer","null"],"format":"int"}"#;
    u8 [unsigned] => r#""type":"integer","format":"uint8","minimum":0,"maximum":255}"#,
        r#""type":["integer","null"],"format":"uint8","minimum":0,"maximum":255}"#;
    u16 [unsigned] => r#""type":"integer","format":"uint16","minimum":0,"maximum":65535}"#,
        r#""type":["integer","null"],"format":"uint16","minimum":0,"maximum":65535}"#;
    u32 [unsigned] => r#""type":"integer","format":"uint32","minimum":0,"maximum":4294967295}"#,
        r#""type":["integer","null"],"format":"uint32","minimum":0,"maximum":4294967295}"#;
    u64 [unsigned] => r#""type":"integer","format":"uint64","minimum":0}"#,
        r#""type":["integer","null"],"format":"uint64","minimum":0}"#;
    u128 [unsigned] => r#""type":"integer","format":"uint128","minimum":0}"#,
        r#""type":["integer","null"],"format":"uint128","minimum":0}"#;
    usize [unsigned] => r#""type":"integer","format":"uint","minimum":0}"#,
        r#""type":["integer","null"],"format":"uint","minimum":0}"#;
}

impl ArgType for String {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        open(out, description);
        out.push_str(r#""type":"string"}"#);
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        open(out, description);
        out.push_str(r#""type":["string","null"]}"#);
    }

    #[inline]
    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(ArgError::invalid_type(&other, "a string")),
        }
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        Some(Value::String(self.clone()))
    }
}

impl<T: ArgType> ArgType for Option<T> {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        T::__toolnexus_nullable(out, description);
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        T::__toolnexus_nullable(out, description);
    }

    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Null => Ok(None),
            v => T::__toolnexus_decode(v).map(Some),
        }
    }

    fn __toolnexus_absent() -> Option<Self> {
        Some(None)
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        match self {
            None => Some(Value::Null),
            Some(v) => v.__toolnexus_json(),
        }
    }
}

impl<T: ArgType> ArgType for Box<T> {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        T::__toolnexus_schema(out, description);
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        T::__toolnexus_nullable(out, description);
    }

    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        T::__toolnexus_decode(value).map(Box::new)
    }

    fn __toolnexus_absent() -> Option<Self> {
        T::__toolnexus_absent().map(Box::new)
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        (**self).__toolnexus_json()
    }
}

impl<T: ArgType> ArgType for Vec<T> {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        open(out, description);
        out.push_str(r#""type":"array","items":"#);
        T::__toolnexus_schema(out, None);
        out.push('}');
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        open(out, description);
        out.push_str(r#""type":["array","null"],"items":"#);
        T::__toolnexus_schema(out, None);
        out.push('}');
    }

    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| T::__toolnexus_decode(v).map_err(|e| e.at_index(i)))
                .collect(),
            other => Err(ArgError::invalid_type(&other, "a sequence")),
        }
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        self.iter()
            .map(ArgType::__toolnexus_json)
            .collect::<Option<Vec<Value>>>()
            .map(Value::Array)
    }
}

fn map_schema<T: ArgType>(out: &mut String, description: Option<&str>, ty: &str) {
    open(out, description);
    out.push_str(ty);
    out.push_str(r#","additionalProperties":"#);
    T::__toolnexus_schema(out, None);
    out.push('}');
}

fn map_decode<T: ArgType, M: FromIterator<(String, T)>>(value: Value) -> Result<M, ArgError> {
    object(value, "a map")?
        .into_iter()
        .map(|(k, v)| match T::__toolnexus_decode(v) {
            Ok(v) => Ok((k, v)),
            Err(e) => Err(e.at_map_key(k)),
        })
        .collect()
}

/// A map's JSON, its keys sorted (a `HashMap`'s order differs from process to process).
fn map_json<'a, T: ArgType + 'a>(
    entries: impl Iterator<Item = (&'a String, &'a T)>,
) -> Option<Value> {
    let mut entries: Vec<(&String, &T)> = entries.collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
        .into_iter()
        .map(|(k, v)| Some((k.clone(), v.__toolnexus_json()?)))
        .collect::<Option<Map<String, Value>>>()
        .map(Value::Object)
}

impl<T: ArgType, S: BuildHasher + Default> ArgType for HashMap<String, T, S> {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        map_schema::<T>(out, description, r#""type":"object""#);
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        map_schema::<T>(out, description, r#""type":["object","null"]"#);
    }

    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        map_decode(value)
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        map_json(self.iter())
    }
}

impl<T: ArgType> ArgType for BTreeMap<String, T> {
    fn __toolnexus_schema(out: &mut String, description: Option<&str>) {
        map_schema::<T>(out, description, r#""type":"object""#);
    }

    fn __toolnexus_nullable(out: &mut String, description: Option<&str>) {
        map_schema::<T>(out, description, r#""type":["object","null"]"#);
    }

    fn __toolnexus_decode(value: Value) -> Result<Self, ArgError> {
        map_decode(value)
    }

    fn __toolnexus_json(&self) -> Option<Value> {
        map_json(self.iter())
    }
}

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
        super::tool::arg::<T>(tool, key, value)
    }

    /// Decodes a present parameter with serde.
    pub fn decode_value(self, tool: &str, key: &str, value: Value) -> Result<T, ToolResult>
    where
        T: ArgDecode,
    {
        super::tool::arg_value::<T>(tool, key, value)
    }

    /// The schema of an `#[args]` parameter.
    pub fn struct_schema(&self) -> StructSchema
    where
        T: schemars::JsonSchema,
    {
        super::tool::struct_schema::<T>()
    }

    /// Decodes an `#[args]` parameter.
    pub fn struct_args(self, tool: &str, args: Args, schema: &StructSchema) -> Result<T, ToolResult>
    where
        T: DeserializeOwned,
    {
        super::tool::struct_args::<T>(tool, args, schema)
    }
}
