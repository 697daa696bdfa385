#!/usr/bin/env bash
# The third-party OpenAI-compatible mock servers the provider tests run against: `llmock` and
# `fakellm` from PyPI, pinned, in a virtual environment under the build directory, created when
# absent. tests/tests/provider/third_party.rs looks for target/python-mocks/venv/bin/{llmock,fakellm}
# (or $TOOLNEXUS_PYTHON_MOCKS) and starts each server itself on 127.0.0.1.
#
# usage: scripts/python-mocks.sh      prints the venv's bin directory on its last line
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$REPO/target/python-mocks/venv"
LLMOCK_VERSION="0.2.2"
FAKELLM_VERSION="0.3.5"

installed() {
  [ -x "$VENV/bin/llmock" ] && [ -x "$VENV/bin/fakellm" ] &&
    "$VENV/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('llmock') != '$LLMOCK_VERSION' or version('fakellm') != '$FAKELLM_VERSION')" 2>/dev/null
}

if ! installed; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "llmock==$LLMOCK_VERSION" "fakellm==$FAKELLM_VERSION"
  installed || { echo "python-mocks.sh: llmock/fakellm did not install into $VENV" >&2; exit 1; }
fi
echo "$VENV/bin"
