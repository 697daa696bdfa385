//! Parsing: the `#[form(..)]` options, the serde attributes the form must agree with, and the
//! struct's fields or the enum's variants, into the [`Form`] model.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, Fields, Generics, Ident, Lit, Meta, Token, Type};

use crate::docs::{Description, doc_lines, doc_text};
use crate::errors::Errors;
use crate::ident::unraw;

/// A `#[derive(Form)]` input, parsed.
pub(crate) struct Form<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    /// `#[form(crate = path)]`.
    pub(crate) krate: Option<syn::Path>,
    pub(crate) shape: Shape<'a>,
}

/// What the derive makes.
pub(crate) enum Shape<'a> {
    /// An answer form: `impl Form`.
    Struct(Vec<Field<'a>>),
    /// A string choice: `impl FormField`.
    Enum(Vec<Variant<'a>>),
    /// A shape that is neither (already reported); the stub is an `impl Form`.
    Refused,
}

/// One field of a form struct.
pub(crate) struct Field<'a> {
    pub(crate) ident: &'a Ident,
    /// The Rust name, without `r#`.
    pub(crate) rust_name: String,
    /// The property name (after serde's renames).
    pub(crate) name: String,
    pub(crate) ty: &'a Type,
    pub(crate) description: Option<Description>,
    pub(crate) has_default: bool,
    /// `#[serde(flatten)]`, where it is written.
    pub(crate) flatten: Option<Span>,
}

/// One variant of a string choice.
pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) fields: &'a Fields,
    /// The string value (after serde's renames).
    pub(crate) name: String,
}

const NAMED_FIELDS: &str =
    "`#[derive(Form)]` needs named fields: each field becomes a field of the form";

pub(crate) fn form<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Form<'a> {
    let krate = form_attr(&input.attrs, errors);
    let container = SerdeAttrs::parse(&input.attrs, errors);
    let shape = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Shape::Struct(fields(&container, named.named.iter(), errors)),
            Fields::Unnamed(f) => {
                errors.push(syn::Error::new(f.span(), NAMED_FIELDS));
                Shape::Refused
            }
            Fields::Unit => {
                errors.push(syn::Error::new(input.ident.span(), NAMED_FIELDS));
                Shape::Refused
            }
        },
        Data::Enum(e) => Shape::Enum(variants(&container, e.variants.iter(), errors)),
        Data::Union(u) => {
            errors.push(syn::Error::new(
                u.union_token.span(),
                "`#[derive(Form)]` supports structs with named fields and enums of unit variants, not unions",
            ));
            Shape::Refused
        }
    };
    Form {
        ident: &input.ident,
        generics: &input.generics,
        krate,
        shape,
    }
}

/// `#[form(crate = path)]`: where the runtime is, when it is not `::toolnexus`.
fn form_attr(attrs: &[Attribute], errors: &mut Errors) -> Option<syn::Path> {
    let mut krate = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let value = meta.value()?;
                let path = crate::runtime::parse_crate_path(value)?;
                if krate.is_some() {
                    errors.push(syn::Error::new(
                        meta.path.span(),
                        "duplicate `#[form]` key `crate`",
                    ));
                } else {
                    krate = Some(path);
                }
                Ok(())
            } else {
                Err(meta.error("unknown `#[form]` key; expected `crate`"))
            }
        });
        errors.ok(result);
    }
    krate
}

fn fields<'a>(
    container: &SerdeAttrs,
    fields: impl Iterator<Item = &'a syn::Field>,
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    for field in fields {
        let Some(ident) = &field.ident else { continue };
        let attrs = SerdeAttrs::parse(&field.attrs, errors);
        if attrs.skip {
            continue;
        }
        let rust_name = unraw(ident);
        let name = attrs
            .rename
            .clone()
            .unwrap_or_else(|| apply_field_rule(container.rename_all.as_deref(), &rust_name));
        out.push(Field {
            ident,
            rust_name,
            name,
            ty: &field.ty,
            description: doc_text(&doc_lines(&field.attrs)),
            has_default: attrs.default,
            flatten: attrs.flatten,
        });
    }
    out
}

fn variants<'a>(
    container: &SerdeAttrs,
    variants: impl Iterator<Item = &'a syn::Variant>,
    errors: &mut Errors,
) -> Vec<Variant<'a>> {
    let mut out = Vec::new();
    for variant in variants {
        let attrs = SerdeAttrs::parse(&variant.attrs, errors);
        if attrs.skip && variant.fields.is_empty() {
            continue;
        }
        let name = attrs.rename.clone().unwrap_or_else(|| {
            apply_variant_rule(container.rename_all.as_deref(), &unraw(&variant.ident))
        });
        out.push(Variant {
            ident: &variant.ident,
            fields: &variant.fields,
            name,
        });
    }
    out
}

/// The serde attributes the form must agree with (what `Deserialize` accepts).
#[derive(Default)]
struct SerdeAttrs {
    rename: Option<String>,
    rename_all: Option<String>,
    skip: bool,
    default: bool,
    flatten: Option<Span>,
}

impl SerdeAttrs {
    fn parse(attrs: &[Attribute], errors: &mut Errors) -> Self {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let Some(metas) =
                errors.ok(attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated))
            else {
                continue;
            };
            for meta in metas {
                let path = meta.path();
                let key = path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                match (key.as_str(), &meta) {
                    ("rename", m) => out.rename = deserialize_name(m).or(out.rename),
                    ("rename_all", m) => out.rename_all = deserialize_name(m).or(out.rename_all),
                    ("skip" | "skip_deserializing", _) => out.skip = true,
                    ("default", _) => out.default = true,
                    ("flatten", m) => out.flatten = Some(m.span()),
                    _ => {}
                }
            }
        }
        out
    }
}

/// `= "x"` or `(deserialize = "x")`.
fn deserialize_name(meta: &Meta) -> Option<String> {
    let lit_str = |e: &Expr| match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        _ => None,
    };
    match meta {
        Meta::NameValue(nv) => lit_str(&nv.value),
        Meta::List(list) => {
            let inner = list
                .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .ok()?;
            inner.iter().find_map(|m| match m {
                Meta::NameValue(nv) if nv.path.is_ident("deserialize") => lit_str(&nv.value),
                _ => None,
            })
        }
        Meta::Path(_) => None,
    }
}

/// serde's `rename_all` applied to a field (written in snake_case).
fn apply_field_rule(rule: Option<&str>, field: &str) -> String {
    match rule {
        Some("UPPERCASE" | "SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("PascalCase") => pascal(field),
        Some("camelCase") => {
            let p = pascal(field);
            let mut chars = p.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_ascii_lowercase().to_string() + chars.as_str()
            })
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.to_ascii_uppercase().replace('_', "-"),
        _ => field.to_owned(),
    }
}

fn pascal(field: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// serde's `rename_all` applied to a variant (written in PascalCase).
fn apply_variant_rule(rule: Option<&str>, variant: &str) -> String {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    match rule {
        Some("lowercase") => variant.to_ascii_lowercase(),
        Some("UPPERCASE") => variant.to_ascii_uppercase(),
        Some("camelCase") => {
            let mut chars = variant.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_ascii_lowercase().to_string() + chars.as_str()
            })
        }
        Some("snake_case") => snake(),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => snake().to_ascii_uppercase().replace('_', "-"),
        _ => variant.to_owned(),
    }
}
