//! `approvals = N` and `not_by_requester` (governed approvals, CONTRACT section 2): the
//! literal parsed, the keys checked against the tool (they need `approval = ".."`, and N is
//! at least 1), and the gate's suspension made to carry them.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::ToolFn;
use crate::errors::Errors;

/// The value of `approvals = N`: an integer literal (its range is checked in [`governance`]).
pub(super) fn approvals_lit(value: syn::parse::ParseStream<'_>) -> syn::Result<syn::LitInt> {
    value.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `approvals = N`, how many distinct people must approve (an integer, at least 1)",
        )
    })
}

/// `approvals = N` and `not_by_requester` govern an approval: they need `approval = ".."`,
/// and `N` is at least 1.
pub(super) fn governance(tool: &ToolFn, errors: &mut Errors) {
    if let Some(lit) = &tool.attr.approvals {
        if tool.attr.approval.is_none() {
            errors.push(syn::Error::new(
                lit.span(),
                "`approvals` says how many people approve a call, but this tool asks for no approval; add `approval = \"..\"`",
            ));
        }
        match lit.base10_parse::<u32>() {
            Ok(0) => errors.push(syn::Error::new(
                lit.span(),
                "`approvals = 0` would run the call without anyone's approval; write at least 1 (or remove `approval`)",
            )),
            Ok(_) => {}
            Err(_) => errors.push(syn::Error::new(
                lit.span(),
                "`approvals` must be a whole number of people between 1 and 4294967295",
            )),
        }
    }
    if let Some(hint) = tool.attr.not_by_requester
        && hint.value
        && tool.attr.approval.is_none()
    {
        errors.push(syn::Error::new(
            hint.span,
            "`not_by_requester` refuses the requester's own approval, but this tool asks for no approval; add `approval = \"..\"`",
        ));
    }
}

/// The suspension a gate returns, with `approvals = N` and `not_by_requester` written into
/// its request (`result` as is for a tool that states neither).
pub(super) fn governed(tool: &ToolFn, rt: &TokenStream) -> TokenStream {
    let approvals = tool
        .attr
        .approvals
        .as_ref()
        .and_then(|lit| lit.base10_parse::<u32>().ok())
        .unwrap_or(1);
    let not_by_requester = tool.attr.not_by_requester.is_some_and(|h| h.value);
    if approvals <= 1 && !not_by_requester {
        return quote!(result);
    }
    quote!(#rt::govern_approval(result, #approvals, #not_by_requester))
}
