#!/usr/bin/env bash
# Compile time of `#[tool]` and `#[derive(toolnexus::Args)]`: generates crates in a temporary
# directory, each with the same N async functions, and times `cargo check` of each, the crates
# interleaved run by run so all see the same machine load.
#
# Plain parameters (a doc comment and three documented parameters: a `String`, an
# `Option<u32>` and a `bool`):
#   - `with_tool`:    every function marked `#[toolnexus::tool]`;
#   - `plain_serde`:  every function taking a `#[derive(serde::Deserialize)]` argument struct,
#                     no tool macro (the baseline of both comparisons).
# One user type per function (three documented fields: `String`, `u32`, `Option<bool>`):
#   - `args_derive`:    `#[derive(toolnexus::Args)]` on the type, `#[toolnexus::tool]` on the
#                       function taking it as its one parameter;
#   - `serde_schemars`: `#[derive(serde::Deserialize, schemars::JsonSchema)]`, no tool macro;
#   - `tool_schemars`:  the same type, and `#[toolnexus::tool]` on the function (the way
#                       before the derive).
# The user-type baseline is `plain_serde_type`: the type's `#[derive(serde::Deserialize)]`,
# no tool macro (what `plain_serde` is, with the type's fields).
#
# Two measures, each RUNS times: after a touch of the crate's source (incremental), and a full
# re-check (`cargo clean -p` of the crate first). Each check's wall time and its CPU time (user
# + system of cargo and rustc, from `/usr/bin/time`; on a shared machine the steadier of the
# two). Reports medians, differences per function and ratios to the baseline.
#
# usage: scripts/compile-time.sh [N=100] [RUNS=5]
# With USER_TYPES_ONLY=1, only the user-type crates (`args_derive`, `plain_serde_type`,
# `serde_schemars`, `tool_schemars`).
# Offline: dependencies resolve from the local registry cache with this repository's lockfile.
set -euo pipefail

N="${1:-100}"
RUNS="${2:-5}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

ALL_CRATES=(with_tool plain_serde args_derive plain_serde_type serde_schemars tool_schemars)
if [ "${USER_TYPES_ONLY:-0}" = 1 ]; then
  CRATES=(args_derive plain_serde_type serde_schemars tool_schemars)
else
  CRATES=("${ALL_CRATES[@]}")
fi

members=$(printf '"%s", ' "${ALL_CRATES[@]}")
cat > "$WORK/Cargo.toml" <<TOML
[workspace]
resolver = "3"
members = [${members%, }]

[workspace.dependencies]
toolnexus = { path = "$REPO/toolnexus" }
serde = { version = "1", features = ["derive"] }
schemars = "1"
TOML
cp "$REPO/Cargo.lock" "$WORK/Cargo.lock"

# the macros need nothing in the user's manifest but toolnexus (no serde, serde_json or
# schemars); the baselines need serde (and schemars) for their derives
for crate in "${ALL_CRATES[@]}"; do
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
for crate in plain_serde plain_serde_type serde_schemars tool_schemars; do
  echo "serde.workspace = true" >> "$WORK/$crate/Cargo.toml"
done
for crate in serde_schemars tool_schemars; do
  echo "schemars.workspace = true" >> "$WORK/$crate/Cargo.toml"
done

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

# one user type per function: `$1` the derives, `$2` the attribute on the function
user_types() {
  local derives="$1" attr="$2"
  echo "//! $N functions, each taking one user type."
  for i in $(seq 1 "$N"); do
    cat <<RS

/// A query for record $i.
#[derive($derives)]
pub struct Query$i {
    /// What to look for.
    pub text: String,
    /// At most this many results.
    pub limit: u32,
    /// Whether to match exactly.
    pub exact: Option<bool>,
}

/// Look up record $i by a query.
$attr
pub async fn lookup_$i(
    /// The query.
    query: Query$i,
) -> String {
    let Query$i { text, limit, exact } = query;
    format!("{text} {limit} {} $i", exact.unwrap_or(false))
}
RS
  done
}
user_types "toolnexus::Args" "#[toolnexus::tool]" > "$WORK/args_derive/src/lib.rs"
user_types "serde::Deserialize" "" | sed 's|^    /// The query.$||' > "$WORK/plain_serde_type/src/lib.rs"
user_types "serde::Deserialize, schemars::JsonSchema" "" | sed 's|^    /// The query.$||' \
  > "$WORK/serde_schemars/src/lib.rs"
user_types "serde::Deserialize, schemars::JsonSchema" "#[toolnexus::tool]" \
  > "$WORK/tool_schemars/src/lib.rs"

cd "$WORK"
# CT_TARGET_DIR: a target directory kept between runs (the dependencies built once)
export CARGO_TARGET_DIR="${CT_TARGET_DIR:-$WORK/target}"
echo "warming up (building dependencies once)..." >&2
for crate in "${CRATES[@]}"; do
  cargo check --offline -q -p "$crate"
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# one timed `cargo check` of a crate: "<wall ms> <cpu ms>", after touching its source (`touch`),
# or after removing its own artifacts (`full`)
time_crate() {
  local crate="$1" mode="$2"
  if [ "$mode" = full ]; then
    cargo clean --offline -q -p "$crate"
  fi
  touch "$crate/src/lib.rs"
  /usr/bin/time -f "%e %U %S" -o "$WORK/time.txt" cargo check --offline -q -p "$crate"
  awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' "$WORK/time.txt"
}

declare -A wall cpu
for mode in touch full; do
  for run in $(seq 1 "$RUNS"); do
    # interleaved, the order rotating from run to run
    for k in $(seq 0 $(( ${#CRATES[@]} - 1 ))); do
      crate="${CRATES[$(( (k + run) % ${#CRATES[@]} ))]}"
      read -r w c < <(time_crate "$crate" "$mode")
      wall["$mode,$crate"]+="$w "
      cpu["$mode,$crate"]+="$c "
    done
  done
done

has() { [[ " ${CRATES[*]} " == *" $1 "* ]]; }
for mode in touch full; do
  echo "== cargo check, $mode ($( [ "$mode" = touch ] && echo "source touched" || echo "cargo clean -p first")), medians of $RUNS runs"
  declare -A mw=() mc=()
  for crate in "${CRATES[@]}"; do
    # shellcheck disable=SC2086
    mw[$crate]=$(printf '%s\n' ${wall["$mode,$crate"]} | median)
    # shellcheck disable=SC2086
    mc[$crate]=$(printf '%s\n' ${cpu["$mode,$crate"]} | median)
    printf '  %-17s wall %6s ms  cpu %6s ms   wall runs: %s  cpu runs: %s\n' "$crate" \
      "${mw[$crate]}" "${mc[$crate]}" "${wall["$mode,$crate"]}" "${cpu["$mode,$crate"]}"
  done
  # per function (ms) and ratio, wall and CPU, of `$1` against `$2`
  per() {
    awk -v a="${mw[$1]}" -v b="${mw[$2]}" -v c="${mc[$1]}" -v d="${mc[$2]}" -v n="$N" \
      'BEGIN { printf "wall %+.2f ms (%.2fx), cpu %+.2f ms (%.2fx)", (a - b) / n, a / b, (c - d) / n, c / d }'
  }
  if has with_tool; then
    echo "  per function: #[tool] plain params vs plain serde:          $(per with_tool plain_serde)"
  fi
  echo "  per function: #[derive(Args)] + #[tool] vs plain serde:     $(per args_derive plain_serde_type) (target: at most 0)"
  echo "  per function: serde + schemars (no tool) vs plain serde:    $(per serde_schemars plain_serde_type)"
  echo "  per function: serde + schemars + #[tool] vs plain serde:    $(per tool_schemars plain_serde_type)"
done
