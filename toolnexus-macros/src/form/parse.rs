//! Parsing: the `#[form(..)]` options, the serde attributes the form must agree with, and the
//! struct's fields or the enum's variants, into the [`Form`] model.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Generics, Ident, Type};

use crate::docs::{Description, doc_lines, doc_text};
use crate::errors::Errors;
use crate::ident::unraw;
use crate::serde_attrs::{SerdeAttrs, apply_field_rule, apply_variant_rule};

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
    /// `#[form(label = "..")]`: what a page shows as the field's label (the schema's `title`).
    pub(crate) label: Option<syn::LitStr>,
    /// `#[form(default = <literal>)]`: the value the form offers (the schema's `default`).
    pub(crate) default: Option<syn::Lit>,
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
    /// `#[form(title = "..")]`: what a page shows for the option.
    pub(crate) title: Option<syn::LitStr>,
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

/// A field's `#[form(label = "..", default = ..)]`.
fn field_form_attr(
    attrs: &[Attribute],
    errors: &mut Errors,
) -> (Option<syn::LitStr>, Option<syn::Lit>) {
    let mut label: Option<syn::LitStr> = None;
    let mut default: Option<syn::Lit> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("label") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if label.is_some() {
                    errors.push(syn::Error::new(
                        meta.path.span(),
                        "duplicate `#[form]` key `label`",
                    ));
                } else if lit.value().trim().is_empty() {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "`label` is empty; write the words a person reads next to the field",
                    ));
                } else {
                    label = Some(lit);
                }
                Ok(())
            } else if meta.path.is_ident("default") {
                let lit: syn::Lit = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`default` takes a literal: a string, a number, `true` or `false`",
                    )
                })?;
                if !matches!(
                    lit,
                    syn::Lit::Str(_) | syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_)
                ) {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "`default` takes a literal: a string, a number, `true` or `false`",
                    ));
                } else if default.is_some() {
                    errors.push(syn::Error::new(
                        meta.path.span(),
                        "duplicate `#[form]` key `default`",
                    ));
                } else {
                    default = Some(lit);
                }
                Ok(())
            } else {
                Err(meta.error(
                    "unknown `#[form]` key on a field; expected `label = \"..\"` or `default = ..`",
                ))
            }
        });
        errors.ok(result);
    }
    (label, default)
}

/// A variant's `#[form(title = "..")]`.
fn variant_form_attr(attrs: &[Attribute], errors: &mut Errors) -> Option<syn::LitStr> {
    let mut title: Option<syn::LitStr> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("title") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if title.is_some() {
                    errors.push(syn::Error::new(
                        meta.path.span(),
                        "duplicate `#[form]` key `title`",
                    ));
                } else if lit.value().trim().is_empty() {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "`title` is empty; write the words a person reads for the option",
                    ));
                } else {
                    title = Some(lit);
                }
                Ok(())
            } else {
                Err(meta.error("unknown `#[form]` key on a variant; expected `title = \"..\"`"))
            }
        });
        errors.ok(result);
    }
    title
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
        let (label, default) = field_form_attr(&field.attrs, errors);
        out.push(Field {
            ident,
            rust_name,
            name,
            ty: &field.ty,
            description: doc_text(&doc_lines(&field.attrs)),
            label,
            default,
            has_default: attrs.default.is_some(),
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
            title: variant_form_attr(&variant.attrs, errors),
        });
    }
    out
}
