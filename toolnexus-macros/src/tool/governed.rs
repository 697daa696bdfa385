//! `#[tool(approval = "..", approvers = "finance", expires_in = "1h", escalate(approvers =
//! "cfo", after = "1h"))]`: who may answer a tool's approval, its deadline, and where it goes
//! when the deadline passes. Parsed and checked here (a mistake is an error at its token);
//! `expand` hands them to the runtime's `governed` with the approval request.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;
use syn::spanned::Spanned;

use crate::errors::Errors;

/// The governance keys of `#[tool(..)]`.
#[derive(Default)]
pub(crate) struct Governed {
    /// `approvers = ".."`: the group that may answer.
    pub(crate) approvers: Option<LitStr>,
    /// `expires_in = ".."`: the deadline, in seconds.
    pub(crate) expires_in: Option<(Span, u64)>,
    /// `escalate(approvers = "..", after = "..")`, in order: the group and the seconds.
    pub(crate) escalate: Vec<(LitStr, u64)>,
    /// Where the first governance key was written (for "needs `approval`").
    pub(crate) first: Option<Span>,
}

/// A duration literal: a whole number and a unit, `s`, `m`, `h` or `d` (`90s`, `15m`, `1h`,
/// `2d`), more than zero.
fn seconds(lit: &LitStr, key: &str) -> syn::Result<u64> {
    let text = lit.value();
    let text = text.trim();
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        _ => 0,
    };
    let n: Option<u64> = text
        .get(..text.len().saturating_sub(1))
        .and_then(|n| n.parse().ok());
    match n.and_then(|n| n.checked_mul(unit)) {
        Some(secs) if secs > 0 => Ok(secs),
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "`{key}` is a duration such as \"90s\", \"15m\", \"1h\" or \"2d\" (a whole number over zero and a unit)"
            ),
        )),
    }
}

/// A group name: not empty, not only spaces.
fn group(lit: LitStr, key: &str) -> syn::Result<LitStr> {
    if lit.value().trim().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`{key}` names a group the host defines, such as \"finance\"; it cannot be empty"
            ),
        ));
    }
    Ok(lit)
}

impl Governed {
    /// Whether `key` is one of these keys.
    pub(crate) fn knows(key: &str) -> bool {
        matches!(key, "approvers" | "expires_in" | "escalate")
    }

    /// Whether `key` was given already (`escalate` may be given once per step).
    pub(crate) fn has(&self, key: &str) -> bool {
        match key {
            "approvers" => self.approvers.is_some(),
            "expires_in" => self.expires_in.is_some(),
            _ => false,
        }
    }

    /// Reads the value of `key` (one of [`knows`](Self::knows)).
    pub(crate) fn parse(
        &mut self,
        meta: &syn::meta::ParseNestedMeta<'_>,
        key: &str,
        duplicate: bool,
    ) -> syn::Result<()> {
        self.first.get_or_insert(meta.path.span());
        match key {
            "approvers" => {
                let lit = group(meta.value()?.parse()?, "approvers")?;
                if !duplicate {
                    self.approvers = Some(lit);
                }
            }
            "expires_in" => {
                let lit: LitStr = meta.value()?.parse()?;
                let secs = seconds(&lit, "expires_in")?;
                if !duplicate {
                    self.expires_in = Some((lit.span(), secs));
                }
            }
            _ => {
                let (mut to, mut after) = (None, None);
                let span = meta.path.span();
                meta.parse_nested_meta(|step| {
                    if step.path.is_ident("approvers") {
                        to = Some(group(step.value()?.parse()?, "approvers")?);
                    } else if step.path.is_ident("after") {
                        let lit: LitStr = step.value()?.parse()?;
                        after = Some(seconds(&lit, "after")?);
                    } else {
                        return Err(step.error(
                            "unknown `escalate(..)` key; expected `approvers = \"..\"` and `after = \"..\"`",
                        ));
                    }
                    Ok(())
                })?;
                match (to, after) {
                    (Some(to), Some(after)) => self.escalate.push((to, after)),
                    _ => {
                        return Err(syn::Error::new(
                            span,
                            "`escalate(..)` needs both `approvers = \"..\"` (where the request goes) and `after = \"..\"` (how long it waits there)",
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The checks that need the other keys: every governance key needs `approval`, and
    /// `escalate` needs `expires_in` (the deadline it replaces).
    pub(crate) fn check(&self, has_approval: bool, errors: &mut Errors) {
        if let Some(span) = self.first
            && !has_approval
        {
            errors.push(syn::Error::new(
                span,
                "`approvers`, `expires_in` and `escalate` govern a tool's approval: add `approval = \"..\"`",
            ));
        }
        if let (Some((first, _)), None) = (self.escalate.first(), self.expires_in) {
            errors.push(syn::Error::new(
                first.span(),
                "`escalate(..)` replaces the approval's deadline: add `expires_in = \"..\"`",
            ));
        }
    }

    /// Whether any key was given.
    fn any(&self) -> bool {
        self.first.is_some()
    }

    /// Wraps `gate` (an expression: the approval gate's `Result`) so a request it makes
    /// carries the group, the deadline and the escalation.
    pub(crate) fn wrap(&self, rt: &TokenStream, gate: TokenStream) -> TokenStream {
        if !self.any() {
            return gate;
        }
        let approvers = self.approvers.as_ref().map_or_else(
            || quote!(::core::option::Option::None),
            |lit| quote!(::core::option::Option::Some(#lit)),
        );
        let expires_in = self.expires_in.map_or_else(
            || quote!(::core::option::Option::None),
            |(_, secs)| quote!(::core::option::Option::Some(#secs)),
        );
        let steps = self
            .escalate
            .iter()
            .map(|(to, after)| quote!((#to, #after)));
        quote! {
            #rt::governed(#gate, #approvers, #expires_in, &[#(#steps),*])
        }
    }
}
