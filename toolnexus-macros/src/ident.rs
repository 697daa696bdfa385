//! The one place a Rust name becomes the name a user reads (a property, a tool, a variant).

use syn::Ident;
use syn::ext::IdentExt as _;

/// The name without its raw marker: `r#type` is `type`.
pub(crate) fn unraw(ident: &Ident) -> String {
    ident.unraw().to_string()
}
