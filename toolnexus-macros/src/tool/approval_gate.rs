//! The approval gate a `#[tool(approval = "..")]` generates: the prompt formatted from the raw
//! arguments, the gate that runs before the body (editable or not, governed or not), and
//! `fn approval_edits`.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::{ParamKind, Piece, ToolFn};
use crate::ident::unraw;

/// Whether the tool states `editable` (or `editable = true`).
fn is_editable(tool: &ToolFn) -> bool {
    tool.attr.editable.is_some_and(|h| h.value)
}

/// `fn approval_edits` for an `editable` tool (else the trait's default, `false`).
pub(super) fn approval_edits(tool: &ToolFn) -> TokenStream {
    if is_editable(tool) {
        quote! {
            fn approval_edits(&self) -> bool {
                true
            }
        }
    } else {
        TokenStream::new()
    }
}

/// For `approval = ".."`: the prompt, formatted from the raw arguments before they are
/// decoded, and the gate that runs after decoding and before the body.
pub(super) fn approval(tool: &ToolFn, rt: &TokenStream) -> (TokenStream, TokenStream) {
    let Some(approval) = &tool.attr.approval else {
        return (TokenStream::new(), TokenStream::new());
    };
    let pieces = approval.pieces.iter().map(|piece| match piece {
        Piece::Text(t) => quote!(#rt::PromptPiece::Text(#t)),
        Piece::Param(name) => {
            // validated: the name is a plain parameter's; its property key may be renamed
            let key = tool
                .params
                .iter()
                .find_map(|p| match &p.kind {
                    ParamKind::Plain(pl) if unraw(&pl.ident) == *name => Some(pl.key.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| name.clone());
            quote!(#rt::PromptPiece::Arg(#key))
        }
    });
    let govern = super::govern::governed(tool, rt);
    if is_editable(tool) {
        let call = quote!(#rt::approval_gate_editable(__toolnexus_ctx, __toolnexus_prompt,
            __toolnexus_proposed, <Self as #rt::Tool>::input_schema(self)));
        let governed_editable = tool.attr.governed.wrap(rt, call);
        // the proposed arguments go into the request (only when it is made: the first call)
        let prompt = quote! {
            let __toolnexus_prompt = #rt::approval_prompt(&__toolnexus_args, &[#(#pieces),*]);
            let __toolnexus_proposed = #rt::proposed_args(__toolnexus_ctx, &__toolnexus_args);
        };
        let gate = quote! {
            let __toolnexus_approved = match #governed_editable {
                #rt::Ok(ctx) => ctx,
                #rt::Err(result) => return #govern,
            };
            let __toolnexus_ctx = &__toolnexus_approved;
        };
        return (prompt, gate);
    }
    let plain = tool.attr.governed.wrap(
        rt,
        quote!(#rt::approval_gate(__toolnexus_ctx, __toolnexus_prompt)),
    );
    let prompt = quote! {
        let __toolnexus_prompt = #rt::approval_prompt(&__toolnexus_args, &[#(#pieces),*]);
    };
    let gate = quote! {
        let __toolnexus_approved = match #plain {
            #rt::Ok(ctx) => ctx,
            #rt::Err(result) => return #govern,
        };
        let __toolnexus_ctx = &__toolnexus_approved;
    };
    (prompt, gate)
}
