//! What a form may hold: no generics, no nesting (`#[serde(flatten)]`, lists, maps, tuples,
//! references, free-form JSON), no credential field, and string choices without data. Every
//! problem is recorded; a field reports its first one.

use syn::Type;
use syn::spanned::Spanned;

use super::credential::is_credential_field;
use super::parse::{Form, Shape};
use crate::errors::Errors;

const FLAT: &str = "answer forms hold flat primitives only (string, number, integer, boolean, string enum), the shape MCP elicitation uses";

pub(crate) fn check(form: &Form<'_>, errors: &mut Errors) {
    if let Some(param) = form.generics.params.first() {
        errors.push(syn::Error::new(
            param.span(),
            "`#[derive(Form)]` does not support generic parameters: an answer form is a concrete struct of flat fields",
        ));
    }
    match &form.shape {
        Shape::Struct(fields) => {
            for field in fields {
                if let Some(span) = field.flatten {
                    errors.push(syn::Error::new(
                        span,
                        format!("`#[serde(flatten)]` nests another struct in the form; {FLAT}"),
                    ));
                } else if let Some(label) = field
                    .label
                    .as_ref()
                    .filter(|l| is_credential_field(&l.value()))
                {
                    errors.push(syn::Error::new(
                        label.span(),
                        format!(
                            "the label {:?} asks for a credential; secrets must never pass through answer data: send the human to log in with an `authorization` request and a `url` instead (`suspend!(authorization, url = ..)`)",
                            label.value()
                        ),
                    ));
                } else if let Some(bad) = [&field.rust_name, &field.name]
                    .into_iter()
                    .find(|n| is_credential_field(n))
                {
                    errors.push(syn::Error::new(
                        field.ident.span(),
                        format!(
                            "form field `{bad}` collects a credential; secrets must never pass through answer data: send the human to log in with an `authorization` request and a `url` instead (`suspend!(authorization, url = ..)`)"
                        ),
                    ));
                } else {
                    errors.ok(check_flat(field.ty));
                }
            }
        }
        Shape::Enum(variants) => {
            for variant in variants.iter().filter(|v| !v.fields.is_empty()) {
                errors.push(syn::Error::new(
                    variant.fields.span(),
                    format!(
                        "`#[derive(Form)]` on an enum makes a string choice: variant `{}` must have no fields; {FLAT}",
                        variant.ident
                    ),
                ));
            }
        }
        Shape::Refused => {}
    }
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
                // a multi-select: the options of a `#[derive(Form)]` enum (`FormChoice`,
                // checked by the compiler); a list of anything visibly not a choice is refused
                "Vec" => match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => {
                        for arg in &args.args {
                            if let syn::GenericArgument::Type(inner) = arg
                                && !names_a_choice(inner)
                            {
                                return refuse(
                                    "a list (`Vec`) is a form field only as a multi-select of a `#[derive(Form)]` enum's options (`Vec<Choice>`)",
                                );
                            }
                        }
                        Ok(())
                    }
                    _ => Ok(()),
                },
                "VecDeque" | "LinkedList" | "HashSet" | "BTreeSet" | "IndexSet" => {
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

/// Whether `ty` may be a `#[derive(Form)]` enum: a plain path that names no primitive, list,
/// map or wrapper.
fn names_a_choice(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    !matches!(
        last.ident.to_string().as_str(),
        "String"
            | "str"
            | "char"
            | "Cow"
            | "Box"
            | "bool"
            | "f32"
            | "f64"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "Option"
            | "Vec"
            | "VecDeque"
            | "LinkedList"
            | "HashSet"
            | "BTreeSet"
            | "IndexSet"
            | "HashMap"
            | "BTreeMap"
            | "IndexMap"
            | "Map"
            | "Value"
    )
}
