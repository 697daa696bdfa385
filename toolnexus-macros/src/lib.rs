//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation (so the entry points
//! here carry only a pointer to it).
//!
//! All the macros share one discipline: `errors::Errors` collects every mistake, one
//! `docs` reader turns doc comments into descriptions, `ident::unraw` is the one place a
//! raw identifier loses its `r#`, and `runtime::Runtime` is how generated code reaches the
//! runtime. On a mistake every macro still emits its items (a `#[tool]` struct with a stub
//! `impl Tool`, a stub `impl Form`), so one mistake gives one error.
//!
//! `suspend!`, `ask!` and `assert_pending!` are invoked through `macro_rules!` fronts in the
//! runtime (`toolnexus/src/macros.rs`), which pass `$crate; ` before the user's tokens.

use proc_macro::TokenStream;

mod args;
mod docs;
mod errors;
mod form;
mod ident;
mod runtime;
mod serde_attrs;
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

/// Builds a suspension; documented on `toolnexus::suspend`. Input: `<runtime path>; <grammar>`
/// (the runtime's front passes `$crate`), or the grammar alone for `::toolnexus`.
#[doc(hidden)]
#[proc_macro]
pub fn suspend(input: TokenStream) -> TokenStream {
    suspend::suspend(input.into()).into()
}

/// Asks and continues with the typed answer; documented on `toolnexus::ask`. Input as for
/// `suspend!`.
#[doc(hidden)]
#[proc_macro]
pub fn ask(input: TokenStream) -> TokenStream {
    suspend::ask(input.into()).into()
}

/// Asserts a suspension; documented on `toolnexus::assert_pending`. Input as for `suspend!`.
#[doc(hidden)]
#[proc_macro]
pub fn assert_pending(input: TokenStream) -> TokenStream {
    suspend::assert_pending(input.into()).into()
}

/// Derives an answer form; documented on `toolnexus::Form`. `#[form(crate = path)]` names the
/// runtime when it is not `::toolnexus`.
#[doc(hidden)]
#[proc_macro_derive(Form, attributes(form, serde))]
pub fn derive_form(input: TokenStream) -> TokenStream {
    form::derive(input.into()).into()
}

/// Derives an argument type (its schema and decoder, written at compile time); documented on
/// `toolnexus::Args`. `#[arg(crate = path)]` names the runtime when it is not `::toolnexus`.
#[proc_macro_derive(Args, attributes(arg, serde))]
pub fn derive_args(input: TokenStream) -> TokenStream {
    args::derive(input.into()).into()
}

/// The credential words of the trust boundary as a `&[&str]` literal, for the runtime's
/// `toolnexus::boundary` (this crate owns the list; not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_words(_input: TokenStream) -> TokenStream {
    form::credential_words().into()
}

/// The words of the trust boundary refused in names only (`auth`, `authorization`) as a
/// `&[&str]` literal, for the runtime's `toolnexus::boundary` (not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_name_words(_input: TokenStream) -> TokenStream {
    form::credential_name_words().into()
}

/// The shared cases of the credential rule as a `&[(&str, bool)]` literal (`true`: refused),
/// for the runtime's tests (not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_cases(_input: TokenStream) -> TokenStream {
    form::credential_cases().into()
}

/// The credential rule (how a name splits into words, which word of a list it contains) as a
/// module `rule`, for the runtime's `toolnexus::boundary` (the same source as this crate's own
/// check; not public API).
#[doc(hidden)]
#[proc_macro]
pub fn __credential_rule(_input: TokenStream) -> TokenStream {
    form::credential_rule().into()
}
