#!/usr/bin/env bash
# Compile time of `#[tool]`: generates two crates in a temporary directory, each with the same
# N async functions (a doc comment and three documented parameters: a `String`, an
# `Option<u32>` and a `bool`):
#   - `with_tool`:  every function marked `#[toolnexus::tool]`;
#   - `plain_serde`: every function taking a `#[derive(serde::Deserialize)]` argument struct,
#                    no tool macro (the baseline).
# Then it touches each crate's source and times `cargo check` RUNS times, and reports the
# median wall time of both and the difference per function.
#
# usage: scripts/compile-time.sh [N=100] [RUNS=7]
# Offline: dependencies resolve from the local registry cache with this repository's lockfile.
set -euo pipefail

N="${1:-100}"
RUNS="${2:-7}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/Cargo.toml" <<TOML
[workspace]
resolver = "3"
members = ["with_tool", "plain_serde"]

[workspace.dependencies]
toolnexus = { path = "$REPO/toolnexus" }
serde = { version = "1", features = ["derive"] }
TOML
cp "$REPO/Cargo.lock" "$WORK/Cargo.lock"

# `with_tool` depends on toolnexus alone (the macro needs no serde, serde_json or schemars in
# the user's manifest); the baseline needs serde for its derive
for crate in with_tool plain_serde; do
  mkdir -p "$WORK/$crate/src"
  cat > "$WORK/$crate/Cargo.toml" <<TOML
[package]
name = "$crate"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolnexus.workspace = true
TOML
done
echo "serde.workspace = true" >> "$WORK/plain_serde/Cargo.toml"

{
  echo "//! $N functions, each a \`#[tool]\`."
  for i in $(seq 1 "$N"); do
    cat <<RS

/// Look up record $i by a query, optionally capped, optionally exact.
#[toolnexus::tool]
pub async fn lookup_$i(
    /// What to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    /// Whether to match exactly.
    exact: bool,
) -> String {
    format!("{query} {} {exact} $i", limit.unwrap_or(10))
}
RS
  done
} > "$WORK/with_tool/src/lib.rs"

{
  echo "//! $N functions, each taking a \`#[derive(Deserialize)]\` argument struct."
  for i in $(seq 1 "$N"); do
    cat <<RS

/// The arguments of \`lookup_$i\`.
#[derive(serde::Deserialize)]
pub struct Lookup${i}Args {
    /// What to look for.
    pub query: String,
    /// At most this many results.
    pub limit: Option<u32>,
    /// Whether to match exactly.
    pub exact: bool,
}

/// Look up record $i by a query, optionally capped, optionally exact.
pub async fn lookup_$i(args: Lookup${i}Args) -> String {
    let Lookup${i}Args { query, limit, exact } = args;
    format!("{query} {} {exact} $i", limit.unwrap_or(10))
}
RS
  done
} > "$WORK/plain_serde/src/lib.rs"

cd "$WORK"
export CARGO_TARGET_DIR="$WORK/target"
echo "warming up (building dependencies once)..." >&2
cargo check --offline -q -p with_tool -p plain_serde

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# one timed `cargo check` of a crate after touching its source, in milliseconds
time_crate() {
  local crate="$1" start end
  touch "$crate/src/lib.rs"
  start=$(date +%s%N)
  cargo check --offline -q -p "$crate"
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

# interleave the two crates' runs so both see the same machine load
tool_times=()
serde_times=()
for _ in $(seq 1 "$RUNS"); do
  tool_times+=("$(time_crate with_tool)")
  serde_times+=("$(time_crate plain_serde)")
done

tool_median=$(printf '%s\n' "${tool_times[@]}" | median)
serde_median=$(printf '%s\n' "${serde_times[@]}" | median)
echo "runs (ms) with_tool:   ${tool_times[*]}"
echo "runs (ms) plain_serde: ${serde_times[*]}"
echo "median cargo check, $N #[tool] functions:           ${tool_median} ms"
echo "median cargo check, $N plain serde argument structs: ${serde_median} ms"
awk -v t="$tool_median" -v s="$serde_median" -v n="$N" \
  'BEGIN { printf "difference per function: %+.2f ms (target: at most +1.0 ms)\n", (t - s) / n }'
