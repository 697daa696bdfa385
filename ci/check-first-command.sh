#!/usr/bin/env bash
# The README's first command, `cargo run -p toolnexus-examples --example agent`, builds the core
# alone (issue 38: it compiled 147 crates while the example needs 54): the examples package
# with no feature on (each other example asks for its own with --features) may pull in at most
# MAX_CRATES packages, itself and build-time ones (proc macros, build scripts) counted.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_CRATES=70
first="$(sed -n 's/^\(cargo run -p toolnexus-examples --example agent\) .*/\1/p' README.md | head -n 1)"
[ -n "$first" ] || { echo "README.md no longer starts with 'cargo run -p toolnexus-examples --example agent': update ci/check-first-command.sh" >&2; exit 1; }
n="$(cargo tree -p toolnexus-examples -e normal,build --prefix none --format '{p}' \
  | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | wc -l)"
echo "the README's first command builds $n packages (at most $MAX_CRATES)"
if [ "$n" -gt "$MAX_CRATES" ]; then
  cargo tree -p toolnexus-examples -e normal,build --depth 1 >&2
  echo "the README's first command builds $n packages, more than $MAX_CRATES: a feature or dependency of toolnexus-examples is on for every example" >&2
  exit 1
fi
