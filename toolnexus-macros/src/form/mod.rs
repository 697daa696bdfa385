//! `#[derive(Form)]`: a flat answer form (struct) or a string choice (enum of unit variants),
//! checked at compile time. Like `#[tool]`: `parse` builds the model and reports local
//! mistakes, `validate` checks what a form may hold, `expand` generates code and cannot fail.
//! Every error is reported, combined, next to a stub impl (so a failed form gives no second
//! error where it is used as `schema = T`).

mod credential;
mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = Errors::default();
    let form = parse::form(&input, &mut errors);
    validate::check(&form, &mut errors);
    if errors.is_empty() {
        expand::form(&form)
    } else {
        let stub = expand::stub(&form);
        let err = errors.into_compile_error();
        quote::quote!(#stub #err)
    }
}

pub(crate) fn credential_words() -> TokenStream {
    credential::words_literal()
}

pub(crate) fn credential_name_words() -> TokenStream {
    credential::name_words_literal()
}

pub(crate) fn credential_cases() -> TokenStream {
    credential::cases_literal()
}

pub(crate) fn credential_rule() -> TokenStream {
    credential::rule_module()
}
