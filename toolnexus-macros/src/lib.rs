//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation.

use proc_macro::TokenStream;

mod suspend;

/// Builds a `toolnexus::Suspension`; see `toolnexus::suspend!`.
#[proc_macro]
pub fn suspend(input: TokenStream) -> TokenStream {
    suspend::suspend(input.into()).into()
}

/// Asks and continues; see `toolnexus::ask!`.
#[proc_macro]
pub fn ask(input: TokenStream) -> TokenStream {
    suspend::ask(input.into()).into()
}

/// Asserts a suspension; see `toolnexus::assert_pending!`.
#[proc_macro]
pub fn assert_pending(input: TokenStream) -> TokenStream {
    suspend::assert_pending(input.into()).into()
}

/// Derives `toolnexus::Form` (struct) or `toolnexus::FormField` (enum); see `toolnexus::Form`.
#[proc_macro_derive(Form, attributes(serde))]
pub fn derive_form(input: TokenStream) -> TokenStream {
    suspend::derive_form(input.into()).into()
}
