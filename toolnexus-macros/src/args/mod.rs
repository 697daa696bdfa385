//! `#[derive(Args)]`: a type's JSON schema, its decoder from a JSON value and its encoder (a
//! default shown in a schema), written at compile time. Like the other derives: `parse` builds
//! the model and keeps what it cannot say (a key written where it means nothing is an error on
//! the key), `validate` refuses it (naming the attribute), `expand` generates code and cannot
//! fail (the schema text in `schema`, tagged enums in `tagged`). On an error the impl is still
//! emitted as a stub, so uses of the type give no second error.

mod expand;
mod parse;
mod schema;
mod tagged;
mod validate;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = Errors::default();
    let model = parse::input(&input, &mut errors);
    validate::check(&model, &mut errors);
    if errors.is_empty() {
        expand::derive(&model)
    } else {
        let stub = expand::stub(&model);
        let err = errors.into_compile_error();
        quote::quote!(#stub #err)
    }
}
