//! Types whose JSON Schema the macro writes itself, at compile time: strings, `char`, `bool`,
//! integers (with their ranges), floats, and `Option`/`Vec` of those. Any other type asks its
//! `JsonSchema` implementation at run time (once per process).
//!
//! The schemas agree with what `serde` accepts for these types and follow `schemars`' shape
//! (`format` names, `["<type>", "null"]` for `Option`), with the full range of every integer
//! up to 32 bits.

use std::fmt::Write as _;

use syn::{GenericArgument, PathArguments, Type};

/// The JSON Schema of `ty` as compact JSON text, if the macro knows the type.
pub(crate) fn known(ty: &Type) -> Option<String> {
    if let Some(inner) = generic_arg(ty, &["Option"], &["std", "option", "Option"]) {
        return Some(nullable(&scalar_or_vec(inner)?));
    }
    scalar_or_vec(ty)
}

/// Whether `ty` is a known scalar or an `Option` of one: its decoding errors have no inner path.
pub(crate) fn is_scalar(ty: &Type) -> bool {
    match generic_arg(ty, &["Option"], &["std", "option", "Option"]) {
        Some(inner) => scalar(inner).is_some(),
        None => scalar(ty).is_some(),
    }
}

fn scalar_or_vec(ty: &Type) -> Option<String> {
    if let Some(inner) = generic_arg(ty, &["Vec"], &["std", "vec", "Vec"]) {
        return Some(format!(r#"{{"type":"array","items":{}}}"#, scalar(inner)?));
    }
    scalar(ty)
}

fn scalar(ty: &Type) -> Option<String> {
    let path = type_path(ty)?;
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let name = match segs.as_slice() {
        [one] => *one,
        ["std" | "alloc", "string", "String"] => "String",
        _ => return None,
    };
    let json = match name {
        "String" => r#"{"type":"string"}"#.to_owned(),
        "char" => r#"{"type":"string","minLength":1,"maxLength":1}"#.to_owned(),
        "bool" => r#"{"type":"boolean"}"#.to_owned(),
        "f32" => r#"{"type":"number","format":"float"}"#.to_owned(),
        "f64" => r#"{"type":"number","format":"double"}"#.to_owned(),
        "i8" => ranged("int8", i8::MIN.into(), i8::MAX.into()),
        "i16" => ranged("int16", i16::MIN.into(), i16::MAX.into()),
        "i32" => ranged("int32", i32::MIN.into(), i32::MAX.into()),
        "u8" => ranged("uint8", 0, u8::MAX.into()),
        "u16" => ranged("uint16", 0, u16::MAX.into()),
        "u32" => ranged("uint32", 0, u32::MAX.into()),
        "i64" => r#"{"type":"integer","format":"int64"}"#.to_owned(),
        "i128" => r#"{"type":"integer","format":"int128"}"#.to_owned(),
        "isize" => r#"{"type":"integer","format":"int"}"#.to_owned(),
        "u64" => r#"{"type":"integer","format":"uint64","minimum":0}"#.to_owned(),
        "u128" => r#"{"type":"integer","format":"uint128","minimum":0}"#.to_owned(),
        "usize" => r#"{"type":"integer","format":"uint","minimum":0}"#.to_owned(),
        _ => return None,
    };
    Some(json)
}

fn ranged(format: &str, min: i64, max: i64) -> String {
    format!(r#"{{"type":"integer","format":"{format}","minimum":{min},"maximum":{max}}}"#)
}

/// `{"type":"x",..}` becomes `{"type":["x","null"],..}`.
fn nullable(json: &str) -> String {
    // every schema above starts with `{"type":"<word>"`
    let rest = &json[r#"{"type":"#.len()..];
    let end = rest[1..].find('"').map_or(0, |i| i + 2);
    format!(r#"{{"type":[{},"null"]{}"#, &rest[..end], &rest[end..])
}

fn type_path(ty: &Type) -> Option<&syn::Path> {
    match ty {
        Type::Path(p) if p.qself.is_none() => Some(&p.path),
        Type::Group(g) => type_path(&g.elem),
        Type::Paren(p) => type_path(&p.elem),
        _ => None,
    }
}

/// The `T` of `Name<T>` when `ty` is spelled `Name<T>` or by its full path.
fn generic_arg<'a>(ty: &'a Type, short: &[&str], full: &[&str]) -> Option<&'a Type> {
    let path = type_path(ty)?;
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if segs != short && segs != full {
        return None;
    }
    if path
        .segments
        .iter()
        .rev()
        .skip(1)
        .any(|s| !s.arguments.is_none())
    {
        return None;
    }
    let PathArguments::AngleBracketed(a) = &path.segments.last()?.arguments else {
        return None;
    };
    if a.args.len() != 1 {
        return None;
    }
    match a.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// Whether `ty` is spelled `Option<..>`: such a parameter is not required.
pub(crate) fn is_option(ty: &Type) -> bool {
    generic_arg(ty, &["Option"], &["std", "option", "Option"]).is_some()
        || generic_arg(ty, &["Option"], &["core", "option", "Option"]).is_some()
}

/// Escapes `s` as a JSON string literal.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
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
    out
}

#[cfg(test)]
mod tests {
    use super::{is_scalar, json_string, known};

    fn ty(s: &str) -> syn::Type {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn known_types_and_their_schemas() {
        assert_eq!(known(&ty("String")).unwrap(), r#"{"type":"string"}"#);
        assert_eq!(
            known(&ty("Option<u8>")).unwrap(),
            r#"{"type":["integer","null"],"format":"uint8","minimum":0,"maximum":255}"#
        );
        assert_eq!(
            known(&ty("std::option::Option<Vec<bool>>")).unwrap(),
            r#"{"type":["array","null"],"items":{"type":"boolean"}}"#
        );
        assert_eq!(known(&ty("Vec<Vec<u8>>")), None);
        assert_eq!(known(&ty("Option<Option<u8>>")), None);
        assert_eq!(known(&ty("my::String")), None);
        assert_eq!(known(&ty("HashMap<String, u8>")), None);
        assert!(is_scalar(&ty("Option<f64>")));
        assert!(!is_scalar(&ty("Vec<f64>")));
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(
            json_string("a \"b\" \\ c\nd\te\u{1}"),
            r#""a \"b\" \\ c\nd\te\u0001""#
        );
    }
}
