//! What `parse` asks of a parameter's type: the owned type a borrowed parameter decodes into,
//! an `impl Trait` inside it, and whether it is the tool's `Context`.

use syn::spanned::Spanned;
use syn::{GenericArgument, Path, PathArguments, Type};

/// The owned type decoded for a `&T` parameter: `String` for `&str`, `Vec<T>` for `&[T]`.
pub(super) fn owned_of(elem: &Type) -> Type {
    match elem {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
            syn::parse_quote_spanned!(elem.span()=> ::std::string::String)
        }
        Type::Slice(s) => {
            let inner = &s.elem;
            syn::parse_quote_spanned!(elem.span()=> ::std::vec::Vec<#inner>)
        }
        other => other.clone(),
    }
}

/// The first `impl Trait` anywhere in `ty` (behind references, in tuples, slices, arrays and
/// generic arguments).
pub(super) fn find_impl_trait(ty: &Type) -> Option<&Type> {
    match ty {
        Type::ImplTrait(_) => Some(ty),
        Type::Reference(r) => find_impl_trait(&r.elem),
        Type::Paren(p) => find_impl_trait(&p.elem),
        Type::Group(g) => find_impl_trait(&g.elem),
        Type::Slice(s) => find_impl_trait(&s.elem),
        Type::Array(a) => find_impl_trait(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_impl_trait),
        Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                GenericArgument::Type(t) => find_impl_trait(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// `toolnexus::Context`, `::toolnexus::Context` or `<krate>::Context`, optionally behind `&`.
pub(super) fn is_context_path(ty: &Type, krate: Option<&Path>) -> bool {
    let ty = match ty {
        Type::Reference(r) => &*r.elem,
        other => other,
    };
    let Type::Path(p) = ty else { return false };
    if p.qself.is_some() {
        return false;
    }
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    if segs == ["toolnexus", "Context"] {
        return true;
    }
    if let Some(k) = krate {
        let mut want: Vec<String> = k.segments.iter().map(|s| s.ident.to_string()).collect();
        want.push("Context".to_owned());
        return segs == want;
    }
    false
}

/// `&Context`: surely meant as the context, but not recognisable as it.
pub(super) fn is_bare_context(ty: &Type) -> bool {
    if let Type::Reference(r) = ty
        && let Type::Path(p) = &*r.elem
    {
        return p.qself.is_none() && p.path.is_ident("Context");
    }
    false
}
