//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation (so the entry points
//! here carry only a pointer to it).

use proc_macro::TokenStream;

mod suspend;
mod tool;

/// Turns a function into a tool; documented on `toolnexus::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::tool(args.into(), input.into()).into()
}

/// Binds the `#[tool]` methods of an impl block to one shared instance; documented on
/// `toolnexus::toolset`.
#[proc_macro_attribute]
pub fn toolset(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::toolset(args.into(), input.into()).into()
}

/// Builds a suspension; documented on `toolnexus::suspend`.
#[doc(hidden)]
#[proc_macro]
pub fn suspend(input: TokenStream) -> TokenStream {
    suspend::suspend(input.into()).into()
}

/// Asks and continues with the typed answer; documented on `toolnexus::ask`.
#[doc(hidden)]
#[proc_macro]
pub fn ask(input: TokenStream) -> TokenStream {
    suspend::ask(input.into()).into()
}

/// Asserts a suspension; documented on `toolnexus::assert_pending`.
#[doc(hidden)]
#[proc_macro]
pub fn assert_pending(input: TokenStream) -> TokenStream {
    suspend::assert_pending(input.into()).into()
}

/// Derives an answer form; documented on `toolnexus::Form`.
#[doc(hidden)]
#[proc_macro_derive(Form, attributes(serde))]
pub fn derive_form(input: TokenStream) -> TokenStream {
    suspend::derive_form(input.into()).into()
}

/// The credential words of the trust boundary as a `&[&str]` literal, for the runtime's
/// `toolnexus::boundary` (this crate owns the list; not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_words(_input: TokenStream) -> TokenStream {
    suspend::credential_words().into()
}

/// The shared cases of the credential rule as a `&[(&str, bool)]` literal (`true`: refused),
/// for the runtime's tests (not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_cases(_input: TokenStream) -> TokenStream {
    suspend::credential_cases().into()
}
