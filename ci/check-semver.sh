#!/usr/bin/env bash
# API compatibility with the last release (issue 38): cargo-semver-checks compares toolnexus's
# public API (features http, sqlite, postgres, inbox) with the one at the last release's git
# revision, and fails on a break the release does not announce.
#
# A break is announced by both:
#  1. the workspace version in Cargo.toml says it: cargo-semver-checks reads the version bump
#     from the baseline's version to this one (0.x: a minor bump allows a break, a patch bump
#     does not; 1.x and later: a major bump), and fails on any change the bump does not allow;
#  2. CHANGELOG.md has a section for that version (`## [X.Y.Z]`), with a `### Breaking`
#     part whenever the bump allows a break.
# Also checked: toolnexus's `=` pin of toolnexus-macros (and the macros crate's of itself)
# is the workspace version, so the two are released together.
#
# The last release is ci/semver-baseline: `<git revision> <its version>`. After a release,
# write its revision and version there.
#
# cargo-semver-checks is installed with `cargo install --locked` when absent (cold: about
# 560 s of CPU, 5 min on two idle cores); SEMVER_CHECKS_VERSION pins it.
set -euo pipefail
cd "$(dirname "$0")/.."
SEMVER_CHECKS_VERSION="${SEMVER_CHECKS_VERSION:-0.51.0}"
FEATURES="http,sqlite,postgres,inbox"

read -r BASELINE_REV BASELINE_VERSION <ci/semver-baseline
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$version" ] || { echo "no [workspace.package] version in Cargo.toml" >&2; exit 1; }
echo "version $version; last release $BASELINE_VERSION at ${BASELINE_REV:0:12}"

# the pins
for dep in toolnexus toolnexus-macros; do
  pin="$(sed -n "s/^$dep = { path = \"$dep\", version = \"=\\(.*\\)\" }$/\\1/p" Cargo.toml)"
  if [ "$pin" != "$version" ]; then
    echo "Cargo.toml: the workspace dependency $dep is pinned to '=$pin', not the workspace version =$version" >&2
    exit 1
  fi
done

# which bump this is: major, minor, patch or none (0.x: a minor bump is a breaking one)
IFS=. read -r b_major b_minor b_patch <<<"$BASELINE_VERSION"
IFS=. read -r major minor patch <<<"${version%%-*}"
if [ "$major" -gt "$b_major" ]; then bump=major
elif [ "$major" -lt "$b_major" ]; then bump=backwards
elif [ "$minor" -gt "$b_minor" ]; then bump=minor
elif [ "$minor" -lt "$b_minor" ]; then bump=backwards
elif [ "$patch" -gt "$b_patch" ]; then bump=patch
elif [ "$patch" -lt "$b_patch" ]; then bump=backwards
else bump=none
fi
if [ "$bump" = backwards ]; then
  echo "the version $version is older than the last release's $BASELINE_VERSION" >&2
  exit 1
fi
breaking_allowed=no
if [ "$bump" = major ] || { [ "$major" = 0 ] && [ "$bump" = minor ]; }; then
  breaking_allowed=yes
fi

# the CHANGELOG's section for a new version
if [ "$bump" != none ]; then
  [ -f CHANGELOG.md ] || { echo "there is no CHANGELOG.md: the version was bumped from $BASELINE_VERSION to $version without saying what changed" >&2; exit 1; }
  section="$(awk -v v="$version" '
    $0 ~ "^## \\[" v "\\]" { on = 1; print; next }
    on && /^## / { exit }
    on { print }' CHANGELOG.md)"
  if [ -z "$section" ]; then
    echo "CHANGELOG.md has no '## [$version]' section: the version was bumped from $BASELINE_VERSION without saying what changed" >&2
    exit 1
  fi
  if [ "$breaking_allowed" = yes ] && ! grep -q '^### Breaking' <<<"$section"; then
    echo "CHANGELOG.md: the [$version] section has no '### Breaking' part, yet $BASELINE_VERSION -> $version is a breaking bump: list each break with the line a user changes" >&2
    exit 1
  fi
fi

if ! cargo semver-checks --version 2>/dev/null | grep -qx "cargo-semver-checks $SEMVER_CHECKS_VERSION"; then
  echo "installing cargo-semver-checks $SEMVER_CHECKS_VERSION"
  cargo install --locked cargo-semver-checks --version "$SEMVER_CHECKS_VERSION"
fi

# the macros crate is a proc-macro crate: its API is the macros' input, which the UI tests
# and toolnexus's own API cover; its version is checked above (the pin)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# a bumped version: cargo-semver-checks reads the release type from it (0.1 -> 0.2 allows a
# break, as cargo's rules say); an unchanged one is checked as a patch release (the
# strictest: nothing breaks, and this is what the next release would be without a bump)
release_type=()
if [ "$bump" = none ]; then
  release_type=(--release-type patch)
fi
if cargo semver-checks check-release -p toolnexus --baseline-rev "$BASELINE_REV" \
  "${release_type[@]}" \
  --only-explicit-features --features "$FEATURES" 2>&1 | tee "$log"; then
  echo "API check: $BASELINE_VERSION -> $version ($bump bump) is compatible with the last release"
else
  if [ "$bump" = none ] || [ "$breaking_allowed" = no ]; then
    echo "UNANNOUNCED API BREAK: toolnexus $version breaks the API of the last release ($BASELINE_VERSION at ${BASELINE_REV:0:12}; see above)." >&2
    echo "Announce it: bump the workspace version (0.x: the minor; and the '=' pins), and add a '## [X.Y.Z]' section with a '### Breaking' part to CHANGELOG.md naming the line each user changes." >&2
  fi
  exit 1
fi
