//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation (so the entry points
//! here carry none of their own).

use proc_macro::TokenStream;

mod suspend;

#[doc(hidden)]
#[proc_macro]
pub fn suspend(input: TokenStream) -> TokenStream {
    suspend::suspend(input.into()).into()
}

#[doc(hidden)]
#[proc_macro]
pub fn ask(input: TokenStream) -> TokenStream {
    suspend::ask(input.into()).into()
}

#[doc(hidden)]
#[proc_macro]
pub fn assert_pending(input: TokenStream) -> TokenStream {
    suspend::assert_pending(input.into()).into()
}

#[doc(hidden)]
#[proc_macro_derive(Form, attributes(serde))]
pub fn derive_form(input: TokenStream) -> TokenStream {
    suspend::derive_form(input.into()).into()
}
