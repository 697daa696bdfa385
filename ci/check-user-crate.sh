#!/usr/bin/env bash
# The user-crate checks of issue 24, run by .ci/run:
#  1. ci/user-crate, a crate outside the workspace that depends on toolnexus with every feature:
#     its everyday lines must compile without a warning and its tests (a snapshot of its own
#     serde_json's key order among them) must pass; `String + &String` is built on its own;
#  2. every ```rust block of the README and of the crate docs (toolnexus/src/lib.rs,
#     toolnexus/docs/guide.md), pasted into a fresh crate whose [dependencies] are exactly the
#     README's Install lines (the toolnexus line by path, with every feature), must build
#     without a warning;
#  3. ci/user-crate again after a fresh resolve (`cargo update` in a copy of it: the newest
#     versions a new user's first build picks, not the workspace's lock) with
#     RUSTFLAGS="-D warnings": a dependency that deprecates what toolnexus calls fails here
#     (rustls 0.23.48 deprecated `crypto::ring::default_provider`, which the lock's 0.23.46 did
#     not, so a user's `-D warnings` build broke while CI stayed green).
# 1 and 2 share the repository's target directory and lockfile, so only the crates themselves and
# the all-features build of toolnexus compile.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
CRATE="$REPO/ci/user-crate"
FEATURES='"http", "sqlite", "postgres", "inbox", "mcp", "notify-webhook", "notify-email"'

# fails when cargo printed a warning (about the crate's own code, or toolnexus's)
no_warnings() {
  if grep -E '^warning(\[[A-Za-z0-9_-]+\])?: ' "$1" | grep -vqE 'generated [0-9]+ warnings?'; then
    cat "$1"
    echo "$2: warnings in code a user pastes (see above)" >&2
    exit 1
  fi
}

echo "-- ci/user-crate: the everyday lines and the serde_json snapshot"
cp "$REPO/Cargo.lock" "$CRATE/Cargo.lock"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --manifest-path "$CRATE/Cargo.toml" 2>&1 | tee "$log"
no_warnings "$log" "ci/user-crate"

echo "-- ci/user-crate: String + &String"
if cargo tree --manifest-path "$CRATE/Cargo.toml" -e normal -i decancer >/dev/null 2>&1; then
  # known leak (issue 24): decancer implements `Add<Translation> for String`; the line must
  # fail exactly so while decancer is in the build, and builds the moment it is gone
  if cargo build --manifest-path "$CRATE/Cargo.toml" --features string-add --example string_add >"$log" 2>&1; then
    echo "decancer is in the build, yet String + &String compiles: update this check" >&2
    exit 1
  fi
  grep -q 'E0277' "$log" || { cat "$log"; exit 1; }
  echo "KNOWN LEAK (issue 24): decancer's Add<Translation> for String makes String + &String an E0277 in every user's crate; this line passes once decancer is gone"
else
  cargo build --manifest-path "$CRATE/Cargo.toml" --features string-add --example string_add 2>&1 | tee "$log"
  no_warnings "$log" "examples/string_add.rs"
fi

echo "-- README and crate-doc snippets in a crate with the Install section's manifest"
SNIPPETS="$CARGO_TARGET_DIR/readme-snippets"
rm -rf "$SNIPPETS"
mkdir -p "$SNIPPETS/src" "$SNIPPETS/examples"
python3 - "$REPO" "$SNIPPETS" "$FEATURES" <<'PY'
import pathlib, re, sys

repo, out, features = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
readme = (repo / "README.md").read_text()

# the Install section's manifest, the only change: the toolnexus line by path, every feature
install = readme.split("## Install", 1)[1]
toml = re.search(r"```toml\n(.*?)```", install, re.S).group(1)
git = '{ git = "https://github.com/toolnexus/toolnexus-rs" }'
if git not in toml:
    sys.exit("the Install section has no `toolnexus = " + git + "` line")
toml = toml.replace(git, '{ path = "%s", features = [%s] }' % (repo / "toolnexus", features), 1)
(out / "Cargo.toml").write_text(
    '[package]\nname = "readme-snippets"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
    "[workspace]\n\n"
    # the workspace's dev profile, so the dependencies it built are reused (no effect on errors)
    + '[profile.dev.package."*"]\ndebug = "line-tables-only"\n\n'
    + toml
)
(out / "src" / "lib.rs").write_text("")

def blocks(text):
    """(info string, code) of each fenced block."""
    return re.findall(r"^```([^\n]*)\n(.*?)^```", text, re.S | re.M)

def rustdoc(code):
    """A doctest as rustdoc compiles it: `# ` lines shown, `fn main` added when missing. A
    hidden feature gate (`# #[cfg(feature = "http")]`, for `cargo test` without that feature)
    goes: this crate has every feature."""
    lines = []
    for line in code.splitlines():
        if re.fullmatch(r'# #\[cfg\(feature = "[a-z_-]+"\)\]', line):
            continue
        if line == "#" or line.startswith("# "):
            line = line[2:]
        lines.append(line)
    code = "\n".join(lines) + "\n"
    if "fn main" not in code:
        code = "#![allow(dead_code)]\nfn main() {\n" + code + "}\n"
    return code

n = 0
def emit(name, code):
    global n
    n += 1
    (out / "examples" / f"{name}_{n:02}.rs").write_text(code)

for info, code in blocks(readme):
    if info.startswith("rust") and "ignore" not in info:
        emit("readme", code)
lib = (repo / "toolnexus" / "src" / "lib.rs").read_text()
crate_docs = "\n".join(l[4:] if l.startswith("//! ") else l[3:] for l in lib.splitlines() if l.startswith("//!"))
crate_docs += "\n" + (repo / "toolnexus" / "docs" / "guide.md").read_text()
for info, code in blocks(crate_docs):
    if (info == "" or info.startswith("rust")) and "ignore" not in info and "text" not in info:
        emit("crate_docs", rustdoc(code))
print(f"{n} snippets")
PY
cp "$REPO/Cargo.lock" "$SNIPPETS/Cargo.lock"
cargo build --manifest-path "$SNIPPETS/Cargo.toml" --examples 2>&1 | tee "$log"
no_warnings "$log" "README/crate-doc snippets"

echo "-- ci/user-crate after a fresh resolve (cargo update), RUSTFLAGS=\"-D warnings\""
# a copy (the repository's files stay as they are), its own target directory (other
# RUSTFLAGS would rebuild the shared one's dependencies)
FRESH="$CARGO_TARGET_DIR/user-crate-fresh"
rm -rf "$FRESH"
mkdir -p "$FRESH"
cp -R "$CRATE/src" "$CRATE/tests" "$CRATE/examples" "$FRESH/"
sed "s|path = \"../../toolnexus\"|path = \"$REPO/toolnexus\"|" "$CRATE/Cargo.toml" >"$FRESH/Cargo.toml"
grep -q "path = \"$REPO/toolnexus\"" "$FRESH/Cargo.toml" || { echo "ci/user-crate: no toolnexus path line to rewrite" >&2; exit 1; }
cargo update --manifest-path "$FRESH/Cargo.toml"
grep -A1 -E '^name = "(rustls|reqwest|rmcp|axum|rusqlite|tokio-postgres)"$' "$FRESH/Cargo.lock" | grep -v '^--' | paste - - || true
RUSTFLAGS="-D warnings" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/fresh-resolve" \
  cargo test --manifest-path "$FRESH/Cargo.toml" --no-run 2>&1 | tee "$log"
no_warnings "$log" "ci/user-crate after a fresh resolve"
