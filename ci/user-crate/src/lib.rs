//! A crate of a toolnexus user: one tool, so the crate really uses toolnexus (a dependency
//! nothing names is never loaded, and its impls would not be seen).

use toolnexus::{Toolkit, tool};

/// Greet someone.
#[tool]
pub fn greet(
    /// Who.
    name: String,
) -> String {
    format!("hello {name}")
}

/// The toolkit of this crate.
///
/// # Panics
///
/// Never: the tool's name is valid.
pub fn toolkit() -> Toolkit {
    Toolkit::builder().tool(Greet).build().unwrap()
}
