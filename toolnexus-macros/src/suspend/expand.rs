//! Code generation for `suspend!`, `ask!` and `assert_pending!` (cannot fail: everything is
//! checked in [`validate`] first).

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::parse::{Kind, Spec};

/// Which macro a spec belongs to, for messages.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    Suspend,
    Ask,
    AssertPending,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Suspend => "suspend!",
            Which::Ask => "ask!",
            Which::AssertPending => "assert_pending!",
        }
    }
}

/// The checks that need the whole spec; every problem is reported, combined.
pub(crate) fn validate(spec: &Spec, which: Which) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let name = which.name();
    let ctx = if matches!(which, Which::Ask) {
        "ctx, "
    } else {
        ""
    };
    match which {
        Which::Suspend | Which::Ask => {
            if let Some(kind) = &spec.kind {
                let is_authorization = matches!(kind, Kind::Known(i) if i == "authorization");
                if is_authorization && spec.url.is_none() {
                    errors.push(syn::Error::new(
                        kind.span(),
                        format!(
                            "`authorization` needs `url = ..`, where the human goes to log in, e.g. `{name}({ctx}authorization, url = login_url)`"
                        ),
                    ));
                }
                if !is_authorization && spec.prompt.is_none() {
                    let shown = match kind {
                        Kind::Known(i) => i.to_string(),
                        Kind::Custom(l) => format!("{:?}", l.value()),
                    };
                    errors.push(syn::Error::new(
                        kind.span(),
                        format!(
                            "`{name}` needs a prompt after the kind, e.g. `{name}({ctx}{shown} \"Which city?\")`; only `authorization` has a default prompt"
                        ),
                    ));
                }
            }
        }
        Which::AssertPending => {
            if let Some(opt) = &spec.expires_in {
                errors.push(syn::Error::new(
                    opt.name.span(),
                    "`assert_pending!` cannot check `expires_in` (it depends on the clock): compare the returned request's `expires_at` instead",
                ));
            }
        }
    }
    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            for e in errors {
                first.combine(e);
            }
            Err(first)
        }
    }
}

fn kind_tokens(kind: &Kind) -> TokenStream {
    let value = kind.value();
    let span = kind.span();
    quote_spanned!(span=> #value)
}

/// The expression resolving `schema = T` to `Result<Value, SuspendError>`.
pub(crate) fn schema_expr(ty: &Type) -> TokenStream {
    let span = ty.span();
    let call = quote_spanned! {span=>
        (&&::toolnexus::__private::SchemaProbe::<#ty>::new()).pick().answer_schema()
    };
    quote! {
        {
            #[allow(unused_imports)]
            use ::toolnexus::__private::{PickForm as _, PickJsonSchema as _};
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
pub(crate) fn suspend(spec: &Spec) -> TokenStream {
    let kind = spec.kind.as_ref().map(kind_tokens);
    let mut chain = quote!(::toolnexus::__private::SuspendBuilder::new(#kind));
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
        let schema = schema_expr(&o.value);
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
pub(crate) fn ask(ctx: &syn::Expr, spec: &Spec) -> TokenStream {
    let build = suspend(spec);
    let ty = spec
        .schema
        .as_ref()
        .map_or_else(|| quote!(_), |o| o.value.to_token_stream());
    quote! {
        match ::toolnexus::__private::ask::<#ty, _>(&(#ctx), || #build) {
            ::core::result::Result::Ok(__toolnexus_answer) => __toolnexus_answer,
            ::core::result::Result::Err(__toolnexus_suspension) => {
                return ::toolnexus::__private::AskReturn::from_suspension(__toolnexus_suspension);
            }
        }
    }
}

/// `assert_pending!`: the checked `&Request`.
pub(crate) fn assert_pending(result: &syn::Expr, spec: &Spec) -> TokenStream {
    let mut chain = quote!(::toolnexus::__private::PendingExpectation::new());
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
        let schema = schema_expr(&o.value);
        chain.extend(quote!(.schema(#schema)));
    }
    quote! {
        ::toolnexus::__private::assert_pending(&(#result), &#chain)
    }
}
