#!/usr/bin/env bash
# The README's test command, `cargo test --workspace`, must stay within 250 s of CPU cold (issue
# 38; measured with a fresh cargo home and target directory, no compiler cache). A timed check
# would be flaky, so this one counts what drives that figure:
# - the packages the command compiles (every dev-dependency counts: a heavy one, like the JSON
#   Schema validator that pulled in 37 crates, is most of a test binary's cost), at most MAX_CRATES;
# - the test binaries it compiles and links (each one links the whole graph: add a test as a
#   module of an existing binary, `tests/<area>/main.rs`, not as a new file under tests/), at most
#   MAX_TEST_TARGETS.
# Raising either limit: measure the command cold first (README "Tests" says how) and keep the
# figure under 250 s.
# 223 since fantoccini 0.21 (0.22's webdriver pulled ICU4X's segmenter, 14 packages); 14 test
# binaries since toolnexus's tool/suspend/contract became one (`api`) and the tests' helper
# processes one binary (`helpers`, not counted here: bins have `test = false`, but each is
# linked all the same).
# 216 since the email notifier (lettre and its SMTP stack) left the test command (feature
# `email` of the tests crate, run by .ci/run); 11 test binaries since `args` and `prop` became
# modules of `agent_loop` and `durable` one of `store`.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_CRATES=216
MAX_TEST_TARGETS=11
grep -q '^cargo test --workspace ' README.md || { echo "README.md no longer has 'cargo test --workspace' as its test command: update ci/check-test-command.sh" >&2; exit 1; }
n="$(cargo tree --workspace -e normal,build,dev --prefix none --format '{p}' \
  | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | wc -l)"
echo "the README's test command compiles $n packages (at most $MAX_CRATES)"
# test harnesses: every lib, bin and test target with `test = true` and no required feature
# (the workspace's default features turn none on)
targets="$(cargo metadata --no-deps --format-version 1 \
  | jq -r '.packages[] | .name as $p | .targets[]
      | select(.test and ((.["required-features"] // []) | length == 0))
      | "\($p) \(.kind | join(",")) \(.name)"')"
t="$(wc -l <<<"$targets")"
echo "it compiles and links $t test binaries (at most $MAX_TEST_TARGETS)"
fail=0
if [ "$n" -gt "$MAX_CRATES" ]; then
  cargo tree --workspace -e normal,build,dev --depth 1 >&2
  echo "the test command compiles $n packages, more than $MAX_CRATES: a new dependency or feature (above) costs CPU on every cold run" >&2
  fail=1
fi
if [ "$t" -gt "$MAX_TEST_TARGETS" ]; then
  echo "$targets" >&2
  echo "the test command links $t test binaries, more than $MAX_TEST_TARGETS: add tests as modules of an existing binary (or set test = false on a lib/bin target without tests)" >&2
  fail=1
fi
exit "$fail"
