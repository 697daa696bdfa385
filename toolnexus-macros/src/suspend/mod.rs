//! `suspend!`, `ask!`, `assert_pending!` and `#[derive(Form)]`: parse, validate, expand.

mod credential;
mod expand;
mod form;
mod parse;

use proc_macro2::TokenStream;

use expand::Which;
use parse::{AskInput, AssertInput, SuspendInput};

pub(crate) fn suspend(input: TokenStream) -> TokenStream {
    parse::parse::<SuspendInput>(input)
        .and_then(|SuspendInput(spec)| {
            expand::validate(&spec, Which::Suspend)?;
            Ok(expand::suspend(&spec))
        })
        .unwrap_or_else(syn::Error::into_compile_error)
}

pub(crate) fn ask(input: TokenStream) -> TokenStream {
    parse::parse::<AskInput>(input)
        .and_then(|AskInput { ctx, spec }| {
            expand::validate(&spec, Which::Ask)?;
            Ok(expand::ask(&ctx, &spec))
        })
        .unwrap_or_else(syn::Error::into_compile_error)
}

pub(crate) fn assert_pending(input: TokenStream) -> TokenStream {
    parse::parse::<AssertInput>(input)
        .and_then(|AssertInput { result, spec }| {
            expand::validate(&spec, Which::AssertPending)?;
            Ok(expand::assert_pending(&result, &spec))
        })
        .unwrap_or_else(syn::Error::into_compile_error)
}

pub(crate) fn derive_form(input: TokenStream) -> TokenStream {
    syn::parse2::<syn::DeriveInput>(input)
        .and_then(|input| form::derive(&input))
        .unwrap_or_else(syn::Error::into_compile_error)
}

pub(crate) fn credential_words() -> TokenStream {
    credential::words_literal()
}

pub(crate) fn credential_cases() -> TokenStream {
    credential::cases_literal()
}
