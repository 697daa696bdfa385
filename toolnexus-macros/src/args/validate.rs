//! What `#[derive(Args)]` can say faithfully: no generics, no key whose meaning the schema
//! cannot carry (each refused key named, with the way out: `serde::Deserialize` and
//! `schemars::JsonSchema`), tagged enums whose variants the tag can choose, distinct names.
//! Every problem is recorded.

use std::collections::HashSet;

use syn::Type;
use syn::spanned::Spanned;

use super::parse::{Field, Input, Shape, Variant, VariantKind};
use crate::errors::Errors;

const INSTEAD: &str = "derive `serde::Deserialize` and `schemars::JsonSchema` instead";

pub(crate) fn check(input: &Input<'_>, errors: &mut Errors) {
    if let Some(param) = input.generics.params.first() {
        errors.push(syn::Error::new(
            param.span(),
            format!(
                "`#[derive(Args)]` does not support generic parameters: its schema is written once, at compile time; {INSTEAD}"
            ),
        ));
    }
    for (attr, key, span) in &input.refused {
        errors.push(syn::Error::new(*span, refused(attr, key)));
    }
    for (rule, span) in &input.bad_rules {
        let known: Vec<String> = crate::serde_attrs::RULES
            .iter()
            .map(|r| format!("\"{r}\""))
            .collect();
        errors.push(syn::Error::new(
            *span,
            format!(
                "unknown `rename_all` rule \"{rule}\"; expected one of {}",
                known.join(", ")
            ),
        ));
    }
    match &input.shape {
        Shape::Struct(fields) => check_fields(fields, None, errors),
        Shape::Strings(variants) => {
            check_names(variants, errors);
            if variants.iter().all(|v| v.skip) {
                errors.push(syn::Error::new(
                    input.ident.span(),
                    "`#[derive(Args)]` on an enum without variants accepts no value; give it a variant",
                ));
            }
        }
        Shape::Tagged {
            tag,
            content,
            variants,
        } => {
            check_names(variants, errors);
            for v in variants.iter().filter(|v| !v.skip) {
                match (&v.kind, content) {
                    (VariantKind::Unit, _) => {}
                    (VariantKind::Struct(fields), None) => {
                        check_fields(fields, Some(tag), errors);
                    }
                    (VariantKind::Struct(fields), Some(_)) => check_fields(fields, None, errors),
                    (VariantKind::Newtype(ty), Some(_)) => check_type(ty, errors),
                    (VariantKind::Newtype(ty), None) => errors.push(syn::Error::new(
                        ty.span(),
                        format!(
                            "`#[derive(Args)]` cannot merge the tag into a newtype variant's type (internally tagged); write the fields in the variant (`{} {{ .. }}`), add `content = \"..\"` to the tag, or {INSTEAD}",
                            v.ident
                        ),
                    )),
                    (VariantKind::Tuple(span), _) => errors.push(syn::Error::new(
                        *span,
                        format!(
                            "`#[derive(Args)]` takes unit, struct and newtype variants, not tuple variants; name the fields, or {INSTEAD}"
                        ),
                    )),
                }
            }
            if content.as_deref() == Some(tag.as_str()) {
                errors.push(syn::Error::new(
                    input.ident.span(),
                    format!("the tag and the content use the same property name `{tag}`"),
                ));
            }
        }
        // an untagged enum was refused by its key already
        Shape::External(_) if input.refused.iter().any(|(_, key, _)| key == "untagged") => {}
        Shape::External(span) => errors.push(syn::Error::new(
            *span,
            format!(
                "`#[derive(Args)]` on an enum with data needs a tag, which its schema says with `oneOf` and `const`: `#[serde(tag = \"type\")]` (internally tagged) or `#[serde(tag = \"t\", content = \"c\")]` (adjacently tagged); for an externally tagged enum {INSTEAD}"
            ),
        )),
        Shape::Refused => {}
    }
}

fn refused(attr: &str, key: &str) -> String {
    let why = match key {
        "flatten" => {
            "it merges another type's properties into this object, which a closed schema cannot say"
        }
        "untagged" => {
            "an untagged enum is chosen by trying each variant in turn, which a schema cannot say faithfully"
        }
        "deserialize_with" | "with" => "a custom deserializer accepts whatever its code accepts",
        "alias" => "a second name for a property is not in the schema",
        "from" | "try_from" | "remote" => "the value is decoded as another type",
        "transparent" => "the value is decoded as its one field",
        "other" => "an unknown tag would be accepted",
        "tag" => "a tag on a struct is a property the struct does not have",
        _ => "`#[derive(Args)]` does not follow it",
    };
    format!("`#[derive(Args)]` cannot say `#[{attr}({key})]` in its schema: {why}; {INSTEAD}")
}

fn check_names(variants: &[Variant<'_>], errors: &mut Errors) {
    let mut seen = HashSet::new();
    for v in variants.iter().filter(|v| !v.skip) {
        if !seen.insert(v.name.as_str()) {
            errors.push(syn::Error::new(
                v.ident.span(),
                format!("two variants use the name `{}`", v.name),
            ));
        }
    }
}

fn check_fields(fields: &[Field<'_>], tag: Option<&str>, errors: &mut Errors) {
    let mut seen = HashSet::new();
    for f in fields.iter().filter(|f| !f.skip) {
        if Some(f.key.as_str()) == tag {
            errors.push(syn::Error::new(
                f.ident.span(),
                format!("field `{}` has the name of the enum's tag", f.key),
            ));
        } else if !seen.insert(f.key.as_str()) {
            errors.push(syn::Error::new(
                f.ident.span(),
                format!("two fields use the property name `{}`", f.key),
            ));
        }
        check_type(f.ty, errors);
    }
}

/// Refuses what is visibly not an argument type; everything else must implement the runtime's
/// `ArgType` (checked by the compiler, spanned on the type).
fn check_type(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(_) => errors.push(syn::Error::new(
            ty.span(),
            "an argument type holds owned data: use `String` for `&str`, `Vec<T>` for `&[T]`",
        )),
        Type::ImplTrait(_) | Type::TraitObject(_) | Type::Infer(_) => errors.push(syn::Error::new(
            ty.span(),
            "`#[derive(Args)]` needs a concrete field type to decode into, not `dyn Trait`, `impl Trait` or `_`",
        )),
        _ => {}
    }
}
