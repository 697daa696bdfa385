//! The field rules `#[derive(Form)]` and `#[derive(Args)]` share: the `#[serde(..)]` keys that
//! decide which names a value has (`rename`, `rename_all`, `skip`, `default`, the tags of an
//! enum), and serde's `rename_all` rules. Each derive then decides which of the keys it accepts:
//! a form reads what its `Deserialize` agrees with and leaves the rest to serde; `Args`, whose
//! schema and decoder are its own, refuses every key it cannot say faithfully.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, LitStr, Meta, Token};

use crate::errors::Errors;

/// `default` as serde spells it: alone (`Default::default()`) or `default = "path"` (a
/// function).
pub(crate) enum SerdeDefault {
    Trait,
    Path(syn::ExprPath),
}

/// The `#[serde(..)]` keys of one item (container, field or variant).
#[derive(Default)]
pub(crate) struct SerdeAttrs {
    pub(crate) rename: Option<String>,
    pub(crate) rename_all: Option<String>,
    pub(crate) rename_all_fields: Option<String>,
    pub(crate) skip: bool,
    pub(crate) default: Option<SerdeDefault>,
    /// `#[serde(flatten)]`, where it is written.
    pub(crate) flatten: Option<Span>,
    pub(crate) tag: Option<LitStr>,
    pub(crate) content: Option<LitStr>,
    /// Every key written, with where (for a derive that accepts only some).
    pub(crate) keys: Vec<(String, Span)>,
}

impl SerdeAttrs {
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Self {
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
                out.keys.push((key.clone(), meta.span()));
                match (key.as_str(), &meta) {
                    ("rename", m) => out.rename = deserialize_name(m).or(out.rename),
                    ("rename_all", m) => out.rename_all = deserialize_name(m).or(out.rename_all),
                    ("rename_all_fields", m) => {
                        out.rename_all_fields = deserialize_name(m).or(out.rename_all_fields);
                    }
                    ("skip" | "skip_deserializing", _) => out.skip = true,
                    ("default", Meta::NameValue(nv)) => {
                        out.default = Some(match lit_str(&nv.value) {
                            Some(s) => match s.parse() {
                                Ok(path) => SerdeDefault::Path(path),
                                Err(e) => {
                                    errors.push(e);
                                    SerdeDefault::Trait
                                }
                            },
                            None => SerdeDefault::Trait,
                        });
                    }
                    ("default", _) => out.default = Some(SerdeDefault::Trait),
                    ("flatten", m) => out.flatten = Some(m.span()),
                    ("tag", Meta::NameValue(nv)) => out.tag = lit_str(&nv.value),
                    ("content", Meta::NameValue(nv)) => out.content = lit_str(&nv.value),
                    _ => {}
                }
            }
        }
        out
    }
}

fn lit_str(e: &Expr) -> Option<LitStr> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `= "x"` or `(deserialize = "x")`.
fn deserialize_name(meta: &Meta) -> Option<String> {
    match meta {
        Meta::NameValue(nv) => lit_str(&nv.value).map(|s| s.value()),
        Meta::List(list) => {
            let inner = list
                .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .ok()?;
            inner.iter().find_map(|m| match m {
                Meta::NameValue(nv) if nv.path.is_ident("deserialize") => {
                    lit_str(&nv.value).map(|s| s.value())
                }
                _ => None,
            })
        }
        Meta::Path(_) => None,
    }
}

/// The `rename_all` rules serde knows.
pub(crate) const RULES: [&str; 8] = [
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

/// serde's `rename_all` applied to a field (written in snake_case).
pub(crate) fn apply_field_rule(rule: Option<&str>, field: &str) -> String {
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
pub(crate) fn apply_variant_rule(rule: Option<&str>, variant: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::{apply_field_rule, apply_variant_rule};

    #[test]
    fn rules_as_serde_applies_them() {
        assert_eq!(
            apply_field_rule(Some("camelCase"), "unit_price"),
            "unitPrice"
        );
        assert_eq!(
            apply_field_rule(Some("PascalCase"), "unit_price"),
            "UnitPrice"
        );
        assert_eq!(
            apply_field_rule(Some("kebab-case"), "unit_price"),
            "unit-price"
        );
        assert_eq!(apply_field_rule(None, "unit_price"), "unit_price");
        assert_eq!(
            apply_variant_rule(Some("snake_case"), "CardPayment"),
            "card_payment"
        );
        assert_eq!(
            apply_variant_rule(Some("kebab-case"), "CardPayment"),
            "card-payment"
        );
        assert_eq!(
            apply_variant_rule(Some("lowercase"), "CardPayment"),
            "cardpayment"
        );
    }
}
