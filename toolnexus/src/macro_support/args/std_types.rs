//! The `ArgType` impls of the std types the derive composes: scalars, `Option`, `Box`, `Vec`,
//! maps keyed by `String`; each a schema fragment and a decoder.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use super::{ArgError, ArgType, object, open};

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
