//! `#[tool]` parameters of derived types.
