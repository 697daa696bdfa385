//! Parsing: attribute arguments, doc comments and parameters into the [`ToolFn`] model. Local
//! mistakes (a bad key, a pattern parameter, a `&mut` parameter) are reported here; checks
//! that need the whole function live in `validate`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, Lit, LitStr, Pat, Path, ReturnType, Signature, Token,
    Type,
};

use crate::docs::{DocLine, doc_lines};
use crate::errors::Errors;
use crate::ident::unraw;

use super::types::{find_impl_trait, is_bare_context, is_context_path, owned_of};

/// `#[tool(name = "..", description = "..", crate = path, read_only, destructive, idempotent,
/// open_world, approval = "..", editable, approvals = N, not_by_requester)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<Expr>,
    pub(crate) krate: Option<Path>,
    pub(crate) read_only: Option<Hint>,
    pub(crate) destructive: Option<Hint>,
    pub(crate) idempotent: Option<Hint>,
    pub(crate) open_world: Option<Hint>,
    pub(crate) approval: Option<Approval>,
    /// `editable`: a person approving a call may change its arguments.
    pub(crate) editable: Option<Hint>,
    /// `approvals = N`: how many distinct people must approve a call.
    pub(crate) approvals: Option<syn::LitInt>,
    /// `not_by_requester`: the run's own principal may not approve its calls.
    pub(crate) not_by_requester: Option<Hint>,
    /// `approvers`, `expires_in`, `escalate(..)`: who may answer the approval, its deadline and
    /// its escalation.
    pub(crate) governed: super::governed::Governed,
}

/// An annotation key (`read_only`, or `read_only = false`): where it was written and its value.
#[derive(Clone, Copy)]
pub(crate) struct Hint {
    pub(crate) span: Span,
    pub(crate) value: bool,
}

/// `approval = "Delete {path}?"`: the literal and its pieces.
pub(crate) struct Approval {
    pub(crate) lit: LitStr,
    pub(crate) pieces: Vec<Piece>,
}

/// One piece of an approval prompt.
pub(crate) enum Piece {
    Text(String),
    /// `{name}`: a parameter's name.
    Param(String),
}

impl ToolAttr {
    /// The slot of an annotation key (`open_world` for any key that is not one of the others).
    fn hint_mut(&mut self, key: &str) -> &mut Option<Hint> {
        match key {
            "read_only" => &mut self.read_only,
            "destructive" => &mut self.destructive,
            "idempotent" => &mut self.idempotent,
            "editable" => &mut self.editable,
            "not_by_requester" => &mut self.not_by_requester,
            _ => &mut self.open_world,
        }
    }
}

/// An annotation key's value: a flag (`read_only`) or `read_only = true|false`.
fn hint(meta: &syn::meta::ParseNestedMeta<'_>, key: &str) -> syn::Result<Hint> {
    let value = if meta.input.peek(Token![=]) {
        let lit: syn::LitBool = meta.value()?.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected `{key}` alone, or `{key} = true` / `{key} = false`"),
            )
        })?;
        lit.value
    } else {
        true
    };
    Ok(Hint {
        span: meta.path.span(),
        value,
    })
}

/// The keys of `#[tool(..)]`, in the order its errors list them.
const TOOL_KEYS: [&str; 14] = [
    "name",
    "description",
    "crate",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "approval",
    "editable",
    "approvals",
    "not_by_requester",
    "approvers",
    "expires_in",
    "escalate",
];

/// The annotation keys, in the order the docs list them.
const HINT_KEYS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

/// Splits an approval prompt into text and `{parameter}` pieces (`{{` and `}}` are braces).
fn approval_pieces(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                lit.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                lit.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) if c != '{' => name.push(c),
                        _ => {
                            return Err(format!(
                                "unclosed `{{{name}` in `approval`; write `{{name}}` for a parameter, or `{{{{` for a brace"
                            ));
                        }
                    }
                }
                let plain = !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !plain {
                    return Err(format!(
                        "`{{{name}}}` in `approval` is not a parameter name; placeholders are plain parameter names such as `{{path}}` (no format specs)"
                    ));
                }
                if !lit.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut lit)));
                }
                pieces.push(Piece::Param(name));
            }
            '}' => {
                return Err("unmatched `}` in `approval`; write `}}` for a brace".to_owned());
            }
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Text(lit));
    }
    Ok(pieces)
}

/// Parses the arguments of `#[tool(..)]` (also used for `#[toolset(..)]`, which only knows
/// `crate`).
pub(crate) fn tool_attr(tokens: TokenStream, which: &str, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let allowed: &[&str] = if which == "toolset" {
        &["crate"]
    } else {
        &TOOL_KEYS
    };
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map_or_else(
            || meta.path.to_token_stream().to_string().replace(' ', ""),
            ToString::to_string,
        );
        if !allowed.contains(&key.as_str()) {
            return unknown_key(&meta, &key, which, allowed, errors);
        }
        let duplicate = match key.as_str() {
            "name" => attr.name.is_some(),
            "description" => attr.description.is_some(),
            "approval" => attr.approval.is_some(),
            "approvals" => attr.approvals.is_some(),
            "crate" => attr.krate.is_some(),
            governed if super::governed::Governed::knows(governed) => attr.governed.has(governed),
            hint => attr.hint_mut(hint).is_some(),
        };
        if duplicate {
            errors.push(syn::Error::new(
                meta.path.span(),
                format!("duplicate `#[{which}]` key `{key}`"),
            ));
        }
        if super::governed::Governed::knows(&key) {
            if let Err(e) = attr.governed.parse(&meta, &key, duplicate) {
                errors.push(e);
            }
            return Ok(());
        }
        if HINT_KEYS.contains(&key.as_str()) || key == "editable" || key == "not_by_requester" {
            let hint = hint(&meta, &key)?;
            if !duplicate {
                *attr.hint_mut(&key) = Some(hint);
            }
            return Ok(());
        }
        let value = meta.value()?;
        match key.as_str() {
            "name" => {
                let lit: LitStr = value.parse()?;
                if !duplicate {
                    attr.name = Some(lit);
                }
            }
            "approvals" => {
                let lit = super::govern::approvals_lit(value)?;
                if !duplicate {
                    attr.approvals = Some(lit);
                }
            }
            "approval" => {
                let lit: LitStr = value.parse()?;
                match approval_pieces(&lit.value()) {
                    Ok(pieces) if !duplicate => attr.approval = Some(Approval { lit, pieces }),
                    Ok(_) => {}
                    Err(message) => errors.push(syn::Error::new(lit.span(), message)),
                }
            }
            "description" => {
                let expr: Expr = value.parse()?;
                match &expr {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(_), ..
                    })
                    | Expr::Macro(_) => {}
                    other => errors.push(syn::Error::new(
                        other.span(),
                        "expected a string literal or a macro call such as `include_str!(\"..\")`",
                    )),
                }
                if !duplicate {
                    attr.description = Some(expr);
                }
            }
            _ => {
                let path = crate::runtime::parse_crate_path(value)?;
                if !duplicate {
                    attr.krate = Some(path);
                }
            }
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    attr
}

/// An unknown key of `#[which(..)]`: its error, and its value skipped so the next key is
/// still read.
fn unknown_key(
    meta: &syn::meta::ParseNestedMeta<'_>,
    key: &str,
    which: &str,
    allowed: &[&str],
    errors: &mut Errors,
) -> syn::Result<()> {
    errors.push(syn::Error::new(
        meta.path.span(),
        format!(
            "unknown `#[{which}]` key `{key}`; expected {}",
            expected_list(allowed)
        ),
    ));
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn expected_list(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => String::new(),
    }
}

/// A receiver (`self`, `&self`, ...): where it is and whether it is `&self`.
pub(crate) struct ReceiverInfo {
    pub(crate) tokens: TokenStream,
    pub(crate) shared_ref: bool,
}

/// How a decoded parameter reaches the function.
pub(crate) struct Plain {
    pub(crate) ident: Ident,
    /// The property name (the parameter's name, or `#[arg(rename = ..)]`).
    pub(crate) key: String,
    pub(crate) docs: Vec<DocLine>,
    pub(crate) default: Option<Expr>,
    /// The type decoded from JSON (`String` for `&str`, `T` for `&T`).
    pub(crate) stored: Type,
    /// Whether the function takes it by reference.
    pub(crate) by_ref: bool,
}

pub(crate) enum ParamKind {
    /// The call's context, by reference or by value.
    Context {
        by_ref: bool,
    },
    /// One struct holding all arguments (`#[args]`).
    Args,
    Plain(Box<Plain>),
}

pub(crate) struct Param {
    pub(crate) kind: ParamKind,
    pub(crate) ty: Type,
    /// Where a second context parameter or a stray `#[args]` is reported.
    pub(crate) span: Span,
}

/// A `#[tool]` function (or method), parsed.
pub(crate) struct ToolFn {
    pub(crate) attr: ToolAttr,
    pub(crate) ident: Ident,
    pub(crate) is_async: bool,
    pub(crate) receiver: Option<ReceiverInfo>,
    pub(crate) docs: Vec<DocLine>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: ReturnType,
}

/// Parses a signature and its attributes. `krate` is the runtime path, for recognising
/// `<krate>::Context`.
pub(crate) fn tool_fn(
    attr: ToolAttr,
    attrs: &[Attribute],
    sig: &Signature,
    errors: &mut Errors,
) -> ToolFn {
    let mut params = Vec::new();
    let mut receiver = None;
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                receiver = Some(ReceiverInfo {
                    tokens: r.to_token_stream(),
                    shared_ref: matches!(&r.kind, syn::ReceiverKind::Reference(_, _, None))
                        && r.mutability.is_none(),
                });
            }
            FnArg::Typed(pt) => {
                if let Some(p) = param(&pt.attrs, &pt.pat, &pt.ty, attr.krate.as_ref(), errors) {
                    params.push(p);
                }
            }
        }
    }
    ToolFn {
        attr,
        ident: sig.ident.clone(),
        is_async: sig.asyncness.is_some(),
        receiver,
        docs: doc_lines(attrs),
        params,
        output: sig.output.clone(),
    }
}

/// `#[arg(..)]` on a parameter.
#[derive(Default)]
struct ArgAttr {
    default: Option<Expr>,
    rename: Option<LitStr>,
}

#[allow(clippy::too_many_lines)] // one pass over a parameter, its markers and its shape
fn param(
    attrs: &[Attribute],
    pat: &Pat,
    ty: &Type,
    krate: Option<&Path>,
    errors: &mut Errors,
) -> Option<Param> {
    let mut ctx_marker = false;
    let mut args_marker = false;
    let mut arg = ArgAttr::default();
    for a in attrs {
        let path = a.path();
        if path.is_ident("ctx") || path.is_ident("context") {
            if let Err(e) = a.meta.require_path_only() {
                errors.push(e);
            }
            ctx_marker = true;
        } else if path.is_ident("args") {
            if let Err(e) = a.meta.require_path_only() {
                errors.push(e);
            }
            args_marker = true;
        } else if path.is_ident("arg") {
            arg_attr(a, &mut arg, errors);
        }
    }
    let span = pat.span();
    if ctx_marker || is_context_path(ty, krate) {
        let by_ref = match ty {
            Type::Reference(r) => {
                if let Some(m) = r.mutability {
                    let and = r.and_token;
                    errors.push(syn::Error::new_spanned(
                        quote!(#and #m),
                        "the context parameter is shared: take `&toolnexus::Context`, not `&mut`",
                    ));
                }
                true
            }
            _ => false,
        };
        return Some(Param {
            kind: ParamKind::Context { by_ref },
            ty: ty.clone(),
            span,
        });
    }
    if args_marker {
        if let Type::Reference(r) = ty {
            errors.push(syn::Error::new(
                r.and_token.span(),
                "an `#[args]` parameter is taken by value: remove the `&`",
            ));
        }
        return Some(Param {
            kind: ParamKind::Args,
            ty: ty.clone(),
            span,
        });
    }
    let ident = match pat {
        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.clone(),
        other => {
            errors.push(syn::Error::new(
                other.span(),
                "`#[tool]` parameters must be plain names (`name: Type`): the name becomes the property; to destructure a struct of arguments, mark it `#[args]`",
            ));
            return None;
        }
    };
    let (stored, by_ref) = match ty {
        Type::Reference(r) => {
            if let Some(m) = r.mutability {
                errors.push(syn::Error::new(
                    m.span(),
                    "`#[tool]` parameters cannot be `&mut`: arguments are decoded fresh for every call; take the value or `&`",
                ));
                return None;
            }
            (owned_of(&r.elem), true)
        }
        other => (other.clone(), false),
    };
    if let Some(bad) = find_impl_trait(&stored) {
        errors.push(syn::Error::new_spanned(
            bad,
            "`#[tool]` parameters cannot be `impl Trait`: the macro needs a concrete type to decode and describe; name the type",
        ));
        return None;
    }
    if is_bare_context(ty) {
        errors.push(syn::Error::new_spanned(
            ty,
            "a context parameter must be recognisable: write `&toolnexus::Context` or mark the parameter `#[ctx]`",
        ));
        return None;
    }
    let key = match &arg.rename {
        Some(l) => l.value(),
        None => unraw(&ident),
    };
    Some(Param {
        kind: ParamKind::Plain(Box::new(Plain {
            ident,
            key,
            docs: doc_lines(attrs),
            default: arg.default,
            stored,
            by_ref,
        })),
        ty: ty.clone(),
        span,
    })
}

fn arg_attr(a: &Attribute, arg: &mut ArgAttr, errors: &mut Errors) {
    let result = a.parse_nested_meta(|meta| {
        if meta.path.is_ident("default") {
            if arg.default.is_some() {
                errors.push(syn::Error::new(
                    meta.path.span(),
                    "duplicate `#[arg]` key `default`",
                ));
            }
            let e: Expr = meta.value()?.parse()?;
            arg.default.get_or_insert(e);
        } else if meta.path.is_ident("rename") {
            if arg.rename.is_some() {
                errors.push(syn::Error::new(
                    meta.path.span(),
                    "duplicate `#[arg]` key `rename`",
                ));
            }
            let l: LitStr = meta.value()?.parse()?;
            if l.value().is_empty() {
                errors.push(syn::Error::new(
                    l.span(),
                    "`#[arg(rename)]` needs a non-empty property name",
                ));
            }
            arg.rename.get_or_insert(l);
        } else {
            let key = meta.path.to_token_stream().to_string().replace(' ', "");
            errors.push(syn::Error::new(
                meta.path.span(),
                format!("unknown `#[arg]` key `{key}`; expected `default` or `rename`"),
            ));
            if meta.input.peek(Token![=]) {
                meta.value()?.parse::<Expr>()?;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        errors.push(e);
    }
}
