#!/usr/bin/env bash
# The Python environment of the MCP interop tests: a virtual environment under the build
# directory with the official MCP Python SDK (the `mcp` package from PyPI), created when absent.
#
# usage: scripts/python-env.sh        prints the venv's python on its last line
# The tests look for target/mcp-python/bin/python (or $TOOLNEXUS_MCP_PYTHON).
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${TOOLNEXUS_MCP_VENV:-$REPO/target/mcp-python}"
MCP_VERSION="2.3.0"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import mcp, sys; from importlib.metadata import version; sys.exit(version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi

python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
"$VENV/bin/python" -c "import mcp" >/dev/null
echo "$VENV/bin/python"
