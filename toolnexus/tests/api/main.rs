//! The runtime's public API in one test binary (linking a test binary is most of its cost on a
//! small machine, issue 38), one module per concept: tools (`tool::`: `#[tool]`, `#[toolset]`,
//! `FnTool`, `Toolkit`), suspending to ask a human (`suspend::`: `suspend!`, `ask!`,
//! `#[derive(Form)]`, the test helpers) and what crosses the wire (`contract::`: the wire
//! types, the trust boundary, provider schemas, bounded cost). Run one concept with
//! `cargo test -p toolnexus --test api -- suspend::`.

#[path = "../support/mod.rs"]
mod support;

#[path = "../contract/mod.rs"]
mod contract;
#[path = "../suspend/mod.rs"]
pub mod suspend;
#[path = "../tool/mod.rs"]
pub mod tool;
