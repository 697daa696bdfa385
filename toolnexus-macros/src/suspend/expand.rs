//! Code generation for `suspend!`, `ask!` and `assert_pending!` (cannot fail: everything is
//! checked in `validate` first). `rt` is the runtime's `__private` module.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::parse::{Kind, Spec};

fn kind_tokens(kind: &Kind) -> TokenStream {
    let value = kind.value();
    let span = kind.span();
    quote_spanned!(span=> #value)
}

/// The expression resolving `schema = T` to `Result<Value, SuspendError>`.
fn schema_expr(ty: &Type, rt: &TokenStream) -> TokenStream {
    let span = ty.span();
    let call = quote_spanned! {span=>
        (&&#rt::SchemaProbe::<#ty>::new()).pick().answer_schema()
    };
    quote! {
        {
            #[allow(unused_imports)]
            use #rt::{PickForm as _, PickJsonSchema as _};
            #call
        }
    }
}

/// Appends `.method(value)` (or `.method(&(value))` when `by_ref`), spanned on the value so a
/// type error lands on the user's expression.
fn push_call(chain: &mut TokenStream, method: &str, value: &syn::Expr, by_ref: bool) {
    let method = syn::Ident::new(method, proc_macro2::Span::call_site());
    let span = value.span();
    chain.extend(if by_ref {
        quote_spanned!(span=> .#method(&(#value)))
    } else {
        quote_spanned!(span=> .#method(#value))
    });
}

/// `suspend!`: an expression of type `toolnexus::Suspension`.
pub(crate) fn suspend(spec: &Spec, rt: &TokenStream) -> TokenStream {
    let kind = spec.kind.as_ref().map(kind_tokens);
    let mut chain = quote!(#rt::SuspendBuilder::new(#kind));
    if let Some(prompt) = &spec.prompt {
        let span = prompt.span();
        chain.extend(quote_spanned!(span=> .prompt(#prompt)));
    }
    if let Some(o) = &spec.url {
        push_call(&mut chain, "url", &o.value, false);
    }
    if let Some(o) = &spec.data {
        push_call(&mut chain, "data", &o.value, true);
    }
    if let Some(o) = &spec.schema {
        let schema = schema_expr(&o.value, rt);
        chain.extend(quote!(.schema(#schema)));
    }
    if let Some(o) = &spec.expires_in {
        push_call(&mut chain, "expires_in", &o.value, false);
    }
    if let Some(o) = &spec.id {
        push_call(&mut chain, "id", &o.value, false);
    }
    quote!(#chain.build())
}

/// `ask!`: the typed answer, or an early `return` of the suspension.
pub(crate) fn ask(ctx: &syn::Expr, spec: &Spec, rt: &TokenStream) -> TokenStream {
    let build = suspend(spec, rt);
    let ty = spec
        .schema
        .as_ref()
        .map_or_else(|| quote!(_), |o| o.value.to_token_stream());
    quote! {
        match #rt::ask::<#ty, _>(&(#ctx), || #build) {
            ::core::result::Result::Ok(__toolnexus_answer) => __toolnexus_answer,
            ::core::result::Result::Err(__toolnexus_suspension) => {
                return #rt::AskReturn::from_suspension(__toolnexus_suspension);
            }
        }
    }
}

/// `assert_pending!`: the checked `&Request`.
pub(crate) fn assert_pending(result: &syn::Expr, spec: &Spec, rt: &TokenStream) -> TokenStream {
    let mut chain = quote!(#rt::PendingExpectation::new());
    if let Some(kind) = &spec.kind {
        let k = kind_tokens(kind);
        chain.extend(quote!(.kind(#k)));
    }
    if let Some(prompt) = &spec.prompt {
        chain.extend(quote_spanned!(prompt.span()=> .prompt(#prompt)));
    }
    if let Some(o) = &spec.url {
        push_call(&mut chain, "url", &o.value, false);
    }
    if let Some(o) = &spec.id {
        push_call(&mut chain, "id", &o.value, false);
    }
    if let Some(o) = &spec.data {
        push_call(&mut chain, "data", &o.value, true);
    }
    if let Some(o) = &spec.schema {
        let schema = schema_expr(&o.value, rt);
        chain.extend(quote!(.schema(#schema)));
    }
    quote! {
        #rt::assert_pending(&(#result), &#chain)
    }
}
