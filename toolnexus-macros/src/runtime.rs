//! [`Runtime`]: how generated code reaches the runtime crate. Every macro names the runtime
//! only through `<crate>::__private`, where `<crate>` is `::toolnexus` unless the user said
//! otherwise: `#[tool(crate = path)]`, `#[toolset(crate = path)]`, `#[form(crate = path)]`, or
//! (for `suspend!`, `ask!` and `assert_pending!`) the `$crate` that the runtime's
//! `macro_rules!` front passes, so a renamed or re-exported runtime works with no option.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};

/// The value of a `crate = ..` key: a path (`crate = my_rt`) or a string holding one
/// (`crate = "my_rt"`, serde's spelling).
pub(crate) fn parse_crate_path(value: syn::parse::ParseStream<'_>) -> syn::Result<syn::Path> {
    if value.peek(syn::LitStr) {
        value.parse::<syn::LitStr>()?.parse()
    } else {
        value.call(syn::Path::parse_mod_style)
    }
}

/// The runtime crate's path.
pub(crate) struct Runtime(TokenStream);

impl Runtime {
    /// The given path, or `::toolnexus`.
    pub(crate) fn new(krate: Option<&syn::Path>) -> Self {
        Self(krate.map_or_else(|| quote!(::toolnexus), ToTokens::to_token_stream))
    }

    /// Splits a function-like macro's input `<crate> ; <input>` as the runtime's front passes
    /// it (`$crate; ..`). Input without a top-level `;` (the proc macro called directly) is
    /// all the user's, and the runtime is `::toolnexus`. The user's own tokens never hold a
    /// top-level `;`: the grammar is a comma-separated list of expressions and types.
    pub(crate) fn split_front(input: TokenStream) -> (Self, TokenStream) {
        let tokens: Vec<TokenTree> = input.into_iter().collect();
        let semi = tokens
            .iter()
            .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'));
        match semi {
            Some(i) if i > 0 => {
                let rest = tokens[i + 1..].iter().cloned().collect();
                let krate = tokens[..i].iter().cloned().collect();
                (Self(krate), rest)
            }
            _ => (Self::new(None), tokens.into_iter().collect()),
        }
    }

    /// `<crate>::__private`, the only module generated code names.
    pub(crate) fn private(&self) -> TokenStream {
        let krate = &self.0;
        quote!(#krate::__private)
    }

    /// For a `const _` block: the short name generated code uses inside it, and the `use`
    /// that defines it.
    pub(crate) fn alias(&self) -> (TokenStream, TokenStream) {
        let private = self.private();
        (quote!(__toolnexus), quote!(use #private as __toolnexus;))
    }
}
