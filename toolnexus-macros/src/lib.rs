//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation.

mod tool;

/// Turns a function into a tool; documented on `toolnexus::tool`.
#[proc_macro_attribute]
pub fn tool(
    args: proc_macro::TokenStream,
    input: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    tool::tool(args.into(), input.into()).into()
}

/// Binds the `#[tool]` methods of an impl block to one shared instance; documented on `toolnexus::toolset`.
#[proc_macro_attribute]
pub fn toolset(
    args: proc_macro::TokenStream,
    input: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    tool::toolset(args.into(), input.into()).into()
}
