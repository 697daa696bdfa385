//! Checks that need the whole function: its signature shape, the tool name, the description,
//! how many context and `#[args]` parameters it has. Every problem is recorded; nothing here
//! stops at the first one.

use syn::spanned::Spanned;
use syn::{GenericParam, Signature};

use super::parse::{ParamKind, Piece, ToolFn};
use crate::errors::Errors;
use crate::ident::unraw;

/// Where a `#[tool]` function is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A free function (`#[tool]` alone).
    Free,
    /// A method of an `impl` block marked `#[toolset]`.
    Toolset,
}

const MAX_NAME_LEN: usize = 64;

pub(crate) fn check(tool: &ToolFn, sig: &Signature, place: Place, errors: &mut Errors) {
    signature(sig, errors);
    receiver(tool, place, errors);
    params(tool, errors);
    name(tool, errors);
    description(tool, errors);
    annotations(tool, errors);
    approval(tool, errors);
    super::govern::governance(tool, errors);
    tool.attr
        .governed
        .check(tool.attr.approval.is_some(), errors);
}

/// Annotations that contradict each other: a read-only tool destroys nothing.
fn annotations(tool: &ToolFn, errors: &mut Errors) {
    if let (Some(read_only), Some(destructive)) = (tool.attr.read_only, tool.attr.destructive)
        && read_only.value
        && destructive.value
    {
        errors.push(syn::Error::new(
            destructive.span,
            "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing; remove one",
        ));
    }
}

/// Every `{name}` of `approval = ".."` is a parameter of the function.
fn approval(tool: &ToolFn, errors: &mut Errors) {
    let Some(approval) = &tool.attr.approval else {
        return;
    };
    let names: Vec<String> = tool
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Plain(plain) => Some(unraw(&plain.ident)),
            _ => None,
        })
        .collect();
    for piece in &approval.pieces {
        let Piece::Param(name) = piece else { continue };
        if names.contains(name) {
            continue;
        }
        let known = if names.is_empty() {
            "this tool has no named parameters".to_owned()
        } else {
            let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("the parameters are {}", quoted.join(", "))
        };
        errors.push(syn::Error::new(
            approval.lit.span(),
            format!("`{{{name}}}` in `approval` is not a parameter of this tool; {known}"),
        ));
    }
}

fn signature(sig: &Signature, errors: &mut Errors) {
    for p in &sig.generics.params {
        let what = match p {
            GenericParam::Lifetime(_) => "lifetime",
            GenericParam::Type(_) => "type",
            GenericParam::Const(_) => "const",
        };
        errors.push(syn::Error::new_spanned(
            p,
            format!(
                "`#[tool]` functions cannot have generic parameters (this one is a {what} parameter): a tool has one concrete schema; use concrete types"
            ),
        ));
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.push(syn::Error::new_spanned(
            w,
            "`#[tool]` functions cannot have a `where` clause: a tool has one concrete schema",
        ));
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.push(syn::Error::new(
            u.span(),
            "`#[tool]` functions cannot be `unsafe`: a model's call cannot uphold safety conditions",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new(
            v.span(),
            "`#[tool]` functions cannot be variadic",
        ));
    }
}

fn receiver(tool: &ToolFn, place: Place, errors: &mut Errors) {
    let Some(r) = &tool.receiver else { return };
    match place {
        Place::Free => errors.push(syn::Error::new_spanned(
            &r.tokens,
            "a `#[tool]` method taking `self` must be in an `impl` block marked `#[toolset]`, which binds its tools to one shared instance (`Arc<Self>`)",
        )),
        Place::Toolset if !r.shared_ref => errors.push(syn::Error::new_spanned(
            &r.tokens,
            "`#[toolset]` tools take `&self`: the instance is shared (`Arc<Self>`) between calls; use interior mutability for state that changes",
        )),
        Place::Toolset => {}
    }
}

fn params(tool: &ToolFn, errors: &mut Errors) {
    let mut context_seen = false;
    let mut args_seen = false;
    let mut plain_seen = false;
    for p in &tool.params {
        match &p.kind {
            ParamKind::Context { .. } => {
                if context_seen {
                    errors.push(syn::Error::new(
                        p.span,
                        "a `#[tool]` function takes at most one context parameter; remove this one",
                    ));
                }
                context_seen = true;
            }
            ParamKind::Args => {
                if args_seen {
                    errors.push(syn::Error::new(
                        p.span,
                        "a `#[tool]` function takes at most one `#[args]` parameter",
                    ));
                }
                args_seen = true;
            }
            ParamKind::Plain(_) => plain_seen = true,
        }
    }
    if args_seen && plain_seen {
        for p in &tool.params {
            if let ParamKind::Plain(plain) = &p.kind {
                errors.push(syn::Error::new(
                    plain.ident.span(),
                    "a `#[tool]` function with an `#[args]` parameter takes no other arguments (besides the context): move this one into the arguments struct",
                ));
            }
        }
    }
    let mut keys: Vec<&str> = Vec::new();
    for p in &tool.params {
        if let ParamKind::Plain(plain) = &p.kind {
            if keys.contains(&plain.key.as_str()) {
                errors.push(syn::Error::new(
                    plain.ident.span(),
                    format!("two parameters use the property name `{}`", plain.key),
                ));
            }
            keys.push(&plain.key);
        }
    }
}

/// The name a tool gets: `name = ".."`, else the function's name.
pub(crate) fn tool_name(tool: &ToolFn) -> String {
    match &tool.attr.name {
        Some(l) => l.value(),
        None => unraw(&tool.ident),
    }
}

fn name(tool: &ToolFn, errors: &mut Errors) {
    let name = tool_name(tool);
    let span = tool
        .attr
        .name
        .as_ref()
        .map_or_else(|| tool.ident.span(), syn::LitStr::span);
    let len = name.chars().count();
    if len == 0 {
        errors.push(syn::Error::new(
            span,
            "a tool name needs 1 to 64 characters of `[A-Za-z0-9_-]`",
        ));
    } else if len > MAX_NAME_LEN {
        errors.push(syn::Error::new(
            span,
            format!(
                "tool name `{name}` is {len} characters long; providers accept at most {MAX_NAME_LEN}: set a shorter one with `#[tool(name = \"..\")]`"
            ),
        ));
    }
    if let Some((i, c)) = name
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        errors.push(syn::Error::new(
            span,
            format!(
                "invalid tool name `{name}`: character {c:?} at index {i} is not one of `[A-Za-z0-9_-]`"
            ),
        ));
    }
}

fn description(tool: &ToolFn, errors: &mut Errors) {
    if let Some(d) = &tool.attr.description {
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = d
            && s.value().trim().is_empty()
        {
            errors.push(syn::Error::new(
                s.span(),
                "the tool's `description` is empty; models choose tools by their descriptions: say what it does",
            ));
        }
        return;
    }
    if crate::docs::doc_text(&tool.docs).is_none() {
        errors.push(syn::Error::new(
            tool.ident.span(),
            format!(
                "tool `{}` has no description: add a `///` doc comment or `#[tool(description = \"...\")]`; models choose tools by their descriptions",
                tool_name(tool)
            ),
        ));
    }
}
