//! Parsing: `#[arg(..)]` and `#[serde(..)]` keys, docs, and the struct's fields or the enum's
//! variants into the [`Input`] model. Keys the schema cannot say are kept with their spans and
//! refused by `validate`.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, Fields, Generics, Ident, LitStr, Path, Token, Type};

use crate::docs::{DocLine, doc_lines};
use crate::errors::Errors;
use crate::ident::unraw;
use crate::serde_attrs::{SerdeAttrs, SerdeDefault, apply_field_rule, apply_variant_rule};

/// A `#[derive(Args)]` input, parsed.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    /// `#[arg(crate = path)]`.
    pub(crate) krate: Option<Path>,
    pub(crate) docs: Vec<DocLine>,
    pub(crate) shape: Shape<'a>,
    /// Keys written on the container, field or variant that are not said faithfully (each a
    /// compile error): the attribute (`serde` or `arg`), the key, where.
    pub(crate) refused: Vec<(&'static str, String, Span)>,
    /// `rename_all` rules that serde does not know.
    pub(crate) bad_rules: Vec<(String, Span)>,
}

pub(crate) enum Shape<'a> {
    Struct(Vec<Field<'a>>),
    /// Unit variants only, no tag: a string enum.
    Strings(Vec<Variant<'a>>),
    /// `tag = ".."` (internally tagged) or `tag` and `content` (adjacently tagged).
    Tagged {
        tag: String,
        content: Option<String>,
        variants: Vec<Variant<'a>>,
    },
    /// Variants with data and no tag (refused in `validate`).
    External(Span),
    /// Not a struct with named fields or an enum (already reported).
    Refused,
}

pub(crate) enum FieldDefault {
    /// `Default::default()`.
    Trait,
    /// `#[arg(default = expr)]`.
    Expr(Expr),
    /// `#[serde(default = "path")]`: a function.
    Path(syn::ExprPath),
    /// The container is `#[serde(default)]`: the field of `Self::default()`.
    Container,
}

pub(crate) struct Field<'a> {
    pub(crate) ident: &'a Ident,
    /// The property name.
    pub(crate) key: String,
    pub(crate) ty: &'a Type,
    pub(crate) docs: Vec<DocLine>,
    pub(crate) default: Option<FieldDefault>,
    pub(crate) skip: bool,
}

pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) name: String,
    pub(crate) docs: Vec<DocLine>,
    pub(crate) kind: VariantKind<'a>,
    pub(crate) skip: bool,
}

pub(crate) enum VariantKind<'a> {
    Unit,
    Struct(Vec<Field<'a>>),
    Newtype(&'a Type),
    /// Several unnamed fields (refused in `validate`).
    Tuple(Span),
}

/// What `#[serde(..)]` and `#[arg(..)]` said on one item, merged.
#[derive(Default)]
struct Keys {
    rename: Option<String>,
    rename_all: Option<(String, Span)>,
    rename_all_fields: Option<(String, Span)>,
    skip: bool,
    default: Option<FieldDefault>,
    tag: Option<String>,
    content: Option<String>,
    krate: Option<Path>,
}

/// `#[serde(..)]` keys a derive with its own schema and decoder follows.
const SERDE_KEYS: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "skip",
    "skip_deserializing",
    "default",
    "tag",
    "content",
    "deny_unknown_fields",
    // serialization only: nothing to do with what is accepted
    "skip_serializing",
    "skip_serializing_if",
    "serialize_with",
];

/// Where keys are written: each key means something in some places only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Struct,
    Enum,
    Variant,
    Field,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Self::Struct => "a struct",
            Self::Enum => "an enum",
            Self::Variant => "a variant",
            Self::Field => "a field",
        }
    }
}

/// Where a key applies (`None`: anywhere, or a key refused elsewhere), as places and as words.
fn home(key: &str) -> Option<(&'static [Place], &'static str)> {
    use Place::{Enum, Field, Struct, Variant};
    Some(match key {
        "default" => (&[Struct, Field], "a field, or a struct (every field)"),
        "rename" | "skip" | "skip_deserializing" => (&[Field, Variant], "a field or a variant"),
        "rename_all" => (
            &[Struct, Enum, Variant],
            "a struct, an enum or a struct variant (its fields)",
        ),
        "rename_all_fields" | "tag" | "content" => (&[Enum], "an enum"),
        "crate" | "deny_unknown_fields" => (&[Struct, Enum], "the type"),
        _ => return None,
    })
}

/// A key written where it means nothing: an error on the key.
fn check_place(attr: &str, key: &str, place: Place, span: Span, errors: &mut Errors) {
    // a tag on a struct is refused with its own reason (`validate`); serde's `rename` of a
    // container names the type in serde's own messages, nothing the schema says
    let container = matches!(place, Place::Struct | Place::Enum);
    if attr == "serde" && (key == "tag" && place == Place::Struct || key == "rename" && container) {
        return;
    }
    if let Some((places, words)) = home(key)
        && !places.contains(&place)
    {
        errors.push(syn::Error::new(
            span,
            format!(
                "`#[{attr}({key})]` does not apply to {}; it goes on {words}",
                place.name()
            ),
        ));
    }
}

fn read_keys(
    attrs: &[Attribute],
    place: Place,
    refused: &mut Vec<(&'static str, String, Span)>,
    errors: &mut Errors,
) -> Keys {
    let serde = SerdeAttrs::parse(attrs, errors);
    for (key, span) in &serde.keys {
        if SERDE_KEYS.contains(&key.as_str()) {
            check_place("serde", key, place, *span, errors);
        } else {
            refused.push(("serde", key.clone(), *span));
        }
    }
    let span_of = |k: &str| {
        serde
            .keys
            .iter()
            .find(|(key, _)| key == k)
            .map_or_else(Span::call_site, |(_, s)| *s)
    };
    let mut out = Keys {
        rename: serde.rename.clone(),
        rename_all: serde.rename_all.clone().map(|r| (r, span_of("rename_all"))),
        rename_all_fields: serde
            .rename_all_fields
            .clone()
            .map(|r| (r, span_of("rename_all_fields"))),
        skip: serde.skip,
        default: serde.default.map(|d| match d {
            SerdeDefault::Trait => FieldDefault::Trait,
            SerdeDefault::Path(p) => FieldDefault::Path(p),
        }),
        tag: serde.tag.as_ref().map(LitStr::value),
        content: serde.content.as_ref().map(LitStr::value),
        krate: None,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            check_place("arg", &key, place, meta.path.span(), errors);
            match key.as_str() {
                "default" => {
                    out.default = Some(if meta.input.peek(Token![=]) {
                        FieldDefault::Expr(meta.value()?.parse()?)
                    } else {
                        FieldDefault::Trait
                    });
                }
                "rename" => {
                    let l: LitStr = meta.value()?.parse()?;
                    out.rename = Some(l.value());
                }
                "rename_all" => {
                    let l: LitStr = meta.value()?.parse()?;
                    out.rename_all = Some((l.value(), l.span()));
                }
                "skip" => out.skip = true,
                "tag" => out.tag = Some(meta.value()?.parse::<LitStr>()?.value()),
                "content" => out.content = Some(meta.value()?.parse::<LitStr>()?.value()),
                "crate" => out.krate = Some(crate::runtime::parse_crate_path(meta.value()?)?),
                _ => {
                    return Err(meta.error(format!(
                        "unknown `#[arg]` key `{key}`; expected `default`, `rename`, `rename_all`, `skip`, `tag`, `content` or `crate`"
                    )));
                }
            }
            Ok(())
        });
        errors.ok(result);
    }
    out
}

const NAMED_FIELDS: &str = "`#[derive(Args)]` needs a struct with named fields (each field is a property) or an enum; for other shapes derive `serde::Deserialize` and `schemars::JsonSchema` instead";

#[allow(clippy::too_many_lines)] // one pass over the container, its fields or its variants
pub(crate) fn input<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Input<'a> {
    let mut refused = Vec::new();
    let mut bad_rules = Vec::new();
    let container_place = match input.data {
        Data::Enum(_) => Place::Enum,
        _ => Place::Struct,
    };
    let container = read_keys(&input.attrs, container_place, &mut refused, errors);
    let mut check_rule = |rule: &Option<(String, Span)>| {
        if let Some((r, span)) = rule
            && !crate::serde_attrs::RULES.contains(&r.as_str())
        {
            bad_rules.push((r.clone(), *span));
        }
    };
    check_rule(&container.rename_all);
    check_rule(&container.rename_all_fields);
    let shape = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) if container.tag.is_some() => {
                refused.push(("serde", "tag".to_owned(), input.ident.span()));
                Shape::Struct(fields(
                    named.named.iter(),
                    None,
                    false,
                    &mut refused,
                    errors,
                ))
            }
            Fields::Named(named) => Shape::Struct(fields(
                named.named.iter(),
                container.rename_all.as_ref().map(|r| r.0.as_str()),
                container.default.is_some(),
                &mut refused,
                errors,
            )),
            other => {
                errors.push(syn::Error::new(
                    if matches!(other, Fields::Unit) {
                        input.ident.span()
                    } else {
                        other.span()
                    },
                    NAMED_FIELDS,
                ));
                Shape::Refused
            }
        },
        Data::Enum(e) => {
            let mut variants = Vec::new();
            for v in &e.variants {
                let keys = read_keys(&v.attrs, Place::Variant, &mut refused, errors);
                check_rule(&keys.rename_all);
                let name = keys.rename.clone().unwrap_or_else(|| {
                    apply_variant_rule(
                        container.rename_all.as_ref().map(|r| r.0.as_str()),
                        &unraw(&v.ident),
                    )
                });
                let field_rule = keys
                    .rename_all
                    .as_ref()
                    .or(container.rename_all_fields.as_ref())
                    .map(|r| r.0.as_str());
                let kind = match &v.fields {
                    Fields::Unit => VariantKind::Unit,
                    Fields::Named(named) => VariantKind::Struct(fields(
                        named.named.iter(),
                        field_rule,
                        false,
                        &mut refused,
                        errors,
                    )),
                    Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                        let f = &u.unnamed[0];
                        // the one field's own keys (a `#[serde(with)]`, say)
                        read_keys(&f.attrs, Place::Field, &mut refused, errors);
                        VariantKind::Newtype(&f.ty)
                    }
                    Fields::Unnamed(u) => VariantKind::Tuple(u.span()),
                };
                variants.push(Variant {
                    ident: &v.ident,
                    name,
                    docs: doc_lines(&v.attrs),
                    kind,
                    skip: keys.skip,
                });
            }
            match (&container.tag, &container.content) {
                (Some(tag), content) => Shape::Tagged {
                    tag: tag.clone(),
                    content: content.clone(),
                    variants,
                },
                (None, _) => match variants
                    .iter()
                    .find(|v| !v.skip && !matches!(v.kind, VariantKind::Unit))
                {
                    Some(v) => Shape::External(v.ident.span()),
                    None => Shape::Strings(variants),
                },
            }
        }
        Data::Union(u) => {
            errors.push(syn::Error::new(u.union_token.span(), NAMED_FIELDS));
            Shape::Refused
        }
    };
    Input {
        ident: &input.ident,
        generics: &input.generics,
        krate: container.krate,
        docs: doc_lines(&input.attrs),
        shape,
        refused,
        bad_rules,
    }
}

fn fields<'a>(
    fields: impl Iterator<Item = &'a syn::Field>,
    rule: Option<&str>,
    container_default: bool,
    refused: &mut Vec<(&'static str, String, Span)>,
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    for field in fields {
        let Some(ident) = &field.ident else { continue };
        let keys = read_keys(&field.attrs, Place::Field, refused, errors);
        let key = keys
            .rename
            .clone()
            .unwrap_or_else(|| apply_field_rule(rule, &unraw(ident)));
        let default = keys
            .default
            .or_else(|| container_default.then_some(FieldDefault::Container));
        out.push(Field {
            ident,
            key,
            ty: &field.ty,
            docs: doc_lines(&field.attrs),
            default,
            skip: keys.skip,
        });
    }
    out
}
