//! Interop with the family's upstream Rust crate (`toolnexus` 0.23 from crates.io): the tests
//! in `tests/interop.rs` drive our MCP server with it as the client. Run them through
//! `ci/check-upstream-interop.sh` (it builds our server first). No code of its own.
