//! `#[derive(Form)]`: a flat answer form (struct) or a string choice (enum of unit variants),
//! checked at compile time.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, Fields, Lit, Meta, Token, Type};

use super::credential::is_credential_field;

const FLAT: &str = "answer forms hold flat primitives only (string, number, integer, boolean, string enum), the shape MCP elicitation uses";

/// Expands the derive, or the combined errors.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    if let Some(param) = input.generics.params.first() {
        return Err(syn::Error::new(
            param.span(),
            "`#[derive(Form)]` does not support generic parameters: an answer form is a concrete struct of flat fields",
        ));
    }
    let container = SerdeAttrs::parse(&input.attrs)?;
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => derive_struct(input, &container, named.named.iter()),
            Fields::Unnamed(f) => Err(syn::Error::new(
                f.span(),
                "`#[derive(Form)]` needs named fields: each field becomes a field of the form",
            )),
            Fields::Unit => Err(syn::Error::new(
                input.ident.span(),
                "`#[derive(Form)]` needs named fields: each field becomes a field of the form",
            )),
        },
        Data::Enum(e) => derive_enum(input, &container, e.variants.iter()),
        Data::Union(u) => Err(syn::Error::new(
            u.union_token.span(),
            "`#[derive(Form)]` supports structs with named fields and enums of unit variants, not unions",
        )),
    }
}

fn derive_struct<'a>(
    input: &DeriveInput,
    container: &SerdeAttrs,
    fields: impl Iterator<Item = &'a syn::Field>,
) -> syn::Result<TokenStream> {
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let mut props = Vec::new();
    for field in fields {
        let Some(ident) = &field.ident else { continue };
        let attrs = match SerdeAttrs::parse(&field.attrs) {
            Ok(a) => a,
            Err(e) => {
                push(e);
                continue;
            }
        };
        if attrs.skip {
            continue;
        }
        if let Some(span) = attrs.flatten {
            push(syn::Error::new(
                span,
                format!("`#[serde(flatten)]` nests another struct in the form; {FLAT}"),
            ));
            continue;
        }
        let rust_name = unraw(ident);
        let name = attrs
            .rename
            .clone()
            .unwrap_or_else(|| apply_field_rule(container.rename_all.as_deref(), &rust_name));
        if let Some(bad) = [&rust_name, &name]
            .into_iter()
            .find(|n| is_credential_field(n))
        {
            push(syn::Error::new(
                ident.span(),
                format!(
                    "form field `{bad}` collects a credential; secrets must never pass through answer data: send the human to log in with an `authorization` request and a `url` instead (`suspend!(authorization, url = ..)`)"
                ),
            ));
            continue;
        }
        if let Err(e) = check_flat(&field.ty) {
            push(e);
            continue;
        }
        let ty = &field.ty;
        let description = doc_text(&field.attrs).map_or_else(
            || quote!(::core::option::Option::None),
            |d| quote!(::core::option::Option::Some(#d)),
        );
        let has_default = attrs.default;
        let call = quote_spanned! {ty.span()=>
            ::toolnexus::__private::form_property::<#ty>
        };
        props.push(quote!(#call(#name, #description, #has_default)));
    }
    if let Some(e) = errors {
        return Err(e);
    }
    let ident = &input.ident;
    Ok(quote! {
        #[automatically_derived]
        impl ::toolnexus::Form for #ident {
            fn answer_schema() -> ::toolnexus::__private::serde_json::Value {
                static __TOOLNEXUS_SCHEMA: ::std::sync::OnceLock<::toolnexus::__private::serde_json::Value> =
                    ::std::sync::OnceLock::new();
                ::core::clone::Clone::clone(__TOOLNEXUS_SCHEMA.get_or_init(|| {
                    ::toolnexus::__private::form_object(::std::vec![#(#props),*])
                }))
            }
        }
    })
}

fn derive_enum<'a>(
    input: &DeriveInput,
    container: &SerdeAttrs,
    variants: impl Iterator<Item = &'a syn::Variant>,
) -> syn::Result<TokenStream> {
    let mut errors: Option<syn::Error> = None;
    let mut values = Vec::new();
    for variant in variants {
        if !variant.fields.is_empty() {
            let e = syn::Error::new(
                variant.fields.span(),
                format!(
                    "`#[derive(Form)]` on an enum makes a string choice: variant `{}` must have no fields; {FLAT}",
                    variant.ident
                ),
            );
            match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            }
            continue;
        }
        let attrs = SerdeAttrs::parse(&variant.attrs)?;
        if attrs.skip {
            continue;
        }
        let name = attrs.rename.clone().unwrap_or_else(|| {
            apply_variant_rule(container.rename_all.as_deref(), &unraw(&variant.ident))
        });
        values.push(name);
    }
    if let Some(e) = errors {
        return Err(e);
    }
    let ident = &input.ident;
    Ok(quote! {
        #[automatically_derived]
        impl ::toolnexus::FormField for #ident {
            fn field_schema() -> ::toolnexus::__private::serde_json::Map<
                ::std::string::String,
                ::toolnexus::__private::serde_json::Value,
            > {
                ::toolnexus::__private::form_enum(&[#(#values),*])
            }
        }
    })
}

/// Refuses the field types that are visibly not flat; everything else must implement
/// `FormField` (checked by the compiler, spanned on the type).
fn check_flat(ty: &Type) -> syn::Result<()> {
    let refuse = |what: &str| Err(syn::Error::new(ty.span(), format!("{what}; {FLAT}")));
    match ty {
        Type::Array(_) | Type::Slice(_) => refuse("a list is not a form field"),
        Type::Tuple(t) if !t.elems.is_empty() => refuse("a tuple is not a form field"),
        Type::Reference(_) => {
            refuse("a reference is not a form field (answers are owned data: use `String`)")
        }
        Type::Paren(p) => check_flat(&p.elem),
        Type::Group(g) => check_flat(&g.elem),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return Ok(());
            };
            let name = last.ident.to_string();
            match name.as_str() {
                "Vec" | "VecDeque" | "LinkedList" | "HashSet" | "BTreeSet" | "IndexSet" => {
                    refuse(&format!("a list (`{name}`) is not a form field"))
                }
                "HashMap" | "BTreeMap" | "IndexMap" | "Map" => {
                    refuse(&format!("a map (`{name}`) is not a form field"))
                }
                "Value" => refuse("free-form JSON (`Value`) is not a form field"),
                "Option" | "Box" => match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => {
                        for arg in &args.args {
                            if let syn::GenericArgument::Type(inner) = arg {
                                check_flat(inner)?;
                            }
                        }
                        Ok(())
                    }
                    _ => Ok(()),
                },
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#")
        .map_or_else(|| s.clone(), str::to_owned)
}

/// The doc comment, lines trimmed, a paragraph's lines joined by a space, paragraphs by `\n\n`.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(lit) = &nv.value
            && let Lit::Str(s) = &lit.lit
        {
            lines.push(s.value().trim().to_owned());
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    let text = paragraphs.join("\n\n");
    (!text.is_empty()).then_some(text)
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
    fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let metas = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)?;
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
        Ok(out)
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
