//! MCP (CONTRACT section 8; the `mcp` feature), one module per direction: a toolkit served
//! over MCP to rmcp's own client (`serve`), MCP servers consumed through a toolkit (`consume`),
//! and both against peers written with the official MCP Python SDK (`python`).
//!
//! The `python` tests need the venv of `scripts/python-env.sh`: without it they print a notice
//! and pass, except under `CI=true`, where they fail.

mod consume;
mod content;
mod edit;
mod forms;
mod handler;
mod notices;
mod parked;
mod python;
mod replay;
mod rounds;
mod serve;
mod serve_edges;
mod tasks;
mod votes;

// last: what this binary skipped (its tests that need a missing component pass without running)
toolnexus_tests::skip_summary!();
