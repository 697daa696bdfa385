#!/usr/bin/env bash
# The cost of one tool (issue 24, "the default is the toolkit"): generates four crates in a
# temporary workspace, each declaring ONE tool with the same three documented parameters (a
# `String`, an `Option<u32>`, a `bool`), and times `cargo check` of each after a touch of its
# source, the crates interleaved run by run so all see the same machine load:
#   - `plain_serde`:       a `#[derive(serde::Deserialize)]` argument struct, no tool macro
#                          (the baseline);
#   - `toolnexus_default`: `#[toolnexus::tool]`, toolnexus with its default features (none);
#   - `toolnexus_http`:    the same, toolnexus with `features = ["http"]` (the old default);
#   - `rmcp_tool`:         `#[rmcp::tool]` on a function taking `Parameters<Args>`
#                          (`serde::Deserialize` + `schemars::JsonSchema`), rmcp's default
#                          features (`server`, `macros`, `base64`).
# Also prints each crate's dependency tree size: the distinct packages of
# `cargo tree -e normal,build` (what a `cargo check` compiles), the crate itself left out.
#
# usage: scripts/compile-n1.sh [RUNS=9]
# Offline: dependencies resolve from the local registry cache, starting from this repository's
# lockfile.
set -euo pipefail

RUNS="${1:-9}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

CRATES=(plain_serde toolnexus_default toolnexus_http rmcp_tool)
members=$(printf '"%s", ' "${CRATES[@]}")
cat > "$WORK/Cargo.toml" <<TOML
[workspace]
resolver = "3"
members = [${members%, }]
TOML
cp "$REPO/Cargo.lock" "$WORK/Cargo.lock"

deps_of() {
  case "$1" in
    plain_serde) echo 'serde = { version = "1", features = ["derive"] }' ;;
    toolnexus_default) echo "toolnexus = { path = \"$REPO/toolnexus\" }" ;;
    toolnexus_http) echo "toolnexus = { path = \"$REPO/toolnexus\", features = [\"http\"] }" ;;
    rmcp_tool) printf '%s\n' 'rmcp = "3.11"' 'serde = { version = "1", features = ["derive"] }' 'schemars = "1"' ;;
  esac
}

for crate in "${CRATES[@]}"; do
  mkdir -p "$WORK/$crate/src"
  {
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n' "$crate"
    deps_of "$crate"
  } > "$WORK/$crate/Cargo.toml"
done

cat > "$WORK/plain_serde/src/lib.rs" <<'RS'
//! One function taking a `#[derive(Deserialize)]` argument struct.

/// The arguments of `lookup`.
#[derive(serde::Deserialize)]
pub struct LookupArgs {
    /// What to look for.
    pub query: String,
    /// At most this many results.
    pub limit: Option<u32>,
    /// Whether to match exactly.
    pub exact: bool,
}

/// Look up a record by a query, optionally capped, optionally exact.
pub async fn lookup(args: LookupArgs) -> String {
    let LookupArgs { query, limit, exact } = args;
    format!("{query} {} {exact}", limit.unwrap_or(10))
}
RS

tool_nexus='//! One `#[toolnexus::tool]`.

/// Look up a record by a query, optionally capped, optionally exact.
#[toolnexus::tool]
pub async fn lookup(
    /// What to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    /// Whether to match exactly.
    exact: bool,
) -> String {
    format!("{query} {} {exact}", limit.unwrap_or(10))
}'
echo "$tool_nexus" > "$WORK/toolnexus_default/src/lib.rs"
echo "$tool_nexus" > "$WORK/toolnexus_http/src/lib.rs"

cat > "$WORK/rmcp_tool/src/lib.rs" <<'RS'
//! One `#[rmcp::tool]`.

use rmcp::handler::server::wrapper::Parameters;

/// The arguments of `lookup`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct LookupArgs {
    /// What to look for.
    pub query: String,
    /// At most this many results.
    pub limit: Option<u32>,
    /// Whether to match exactly.
    pub exact: bool,
}

/// Look up a record by a query, optionally capped, optionally exact.
#[rmcp::tool]
pub async fn lookup(Parameters(LookupArgs { query, limit, exact }): Parameters<LookupArgs>) -> String {
    format!("{query} {} {exact}", limit.unwrap_or(10))
}
RS

cd "$WORK"
export CARGO_TARGET_DIR="$WORK/target"
echo "== dependency trees (distinct packages of cargo tree -e normal,build, the crate left out)"
for crate in "${CRATES[@]}"; do
  n=$(cargo tree --offline -q -p "$crate" -e normal,build --prefix none \
        | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | grep -vc "^$crate v")
  printf '  %-18s %4s crates\n' "$crate" "$n"
done

echo "warming up (building dependencies once)..." >&2
for crate in "${CRATES[@]}"; do
  cargo check --offline -q -p "$crate"
done

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

declare -A times
for run in $(seq 1 "$RUNS"); do
  # interleaved, the order rotating from run to run
  for k in $(seq 0 $(( ${#CRATES[@]} - 1 ))); do
    crate="${CRATES[$(( (k + run) % ${#CRATES[@]} ))]}"
    times["$crate"]+="$(time_crate "$crate") "
  done
done

echo "== cargo check after a touch, N = 1 tool, $RUNS runs each"
declare -A med=()
for crate in "${CRATES[@]}"; do
  # shellcheck disable=SC2086
  med[$crate]=$(printf '%s\n' ${times[$crate]} | median)
  printf '  %-18s median %6s ms   runs: %s\n' "$crate" "${med[$crate]}" "${times[$crate]}"
done
for crate in toolnexus_default toolnexus_http rmcp_tool; do
  printf '  %-18s %+6d ms over plain serde\n' "$crate" $(( ${med[$crate]%.*} - ${med[plain_serde]%.*} ))
done
