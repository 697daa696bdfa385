#!/usr/bin/env bash
# Runs one fuzz target for a while on the stable toolchain (RUSTC_BOOTSTRAP lets cargo-fuzz
# pass the nightly-only -Z flags it needs; no sanitizer, as the address sanitizer needs the
# nightly standard library). Usage: fuzz/run-fuzz.sh <target> [seconds] [extra libFuzzer flags]
set -euo pipefail
cd "$(dirname "$0")"
target="$1"
seconds="${2:-60}"
shift $(( $# >= 2 ? 2 : 1 ))
# a scratch copy of the committed seeds: the run's finds don't dirty the repository
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "corpus/$target/." "$work/"
RUSTC_BOOTSTRAP=1 cargo fuzz run -s none "$target" "$work" -- \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@"
