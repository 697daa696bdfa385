//! Support for `#[tool]` and `#[toolset]`.
