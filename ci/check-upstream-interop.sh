#!/usr/bin/env bash
# Interop with the family's upstream Rust crate (issue 26): `toolnexus` 0.23 from crates.io, in
# its own crate outside the workspace (ci/upstream-interop, with its Cargo.lock), drives our MCP
# server (`mcp_peer toolnexus`) as a real MCP client over stdio: listing, a plain call, an
# approval approved and declined and an input form through its elicitation bridge, and a person
# slower than its per-call timeout (see ci/upstream-interop/tests/interop.rs).
# It shares the workspace's target dir, so the dependencies both build are compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_INCREMENTAL=0
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
export CARGO_TARGET_DIR="$target_dir"

# our server, built the way the MCP tests build it
cargo build -p toolnexus-tests --features mcp --bin mcp_peer
export TOOLNEXUS_MCP_PEER="$target_dir/debug/mcp_peer"

cargo test --locked --manifest-path ci/upstream-interop/Cargo.toml -- --test-threads 4
