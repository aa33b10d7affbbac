#!/usr/bin/env bash
# The chat_approval example in a real browser: installs Debian's Chromium (when missing) and
# playwright-core (pinned by tests/browser/package-lock.json, into tests/browser/node_modules),
# starts the example on a free port with its offline model, and drives the page over the
# DevTools protocol through the Approve path and the Deny path, over AG-UI and over the Vercel AI
# data stream (tests/browser/chat_approval.mjs). Screenshots go to $BROWSER_ARTIFACTS
# (ui-artifacts/ by default, git-ignored). Exits 0 only when all four paths pass.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "browser-test: $*" >&2; }

if ! command -v chromium >/dev/null 2>&1; then
  log "installing Debian's chromium"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium >&2
fi
log "$(chromium --version 2>/dev/null | head -n 1)"

lock=tests/browser/package-lock.json
stamp=tests/browser/node_modules/.installed
if [ ! -f "$stamp" ] || ! cmp -s "$lock" "$stamp"; then
  log "installing playwright-core"
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$lock" "$stamp"
fi

cargo build -q -p toolsmith-ui --features axum --example chat_approval
binary="${CARGO_TARGET_DIR:-$PWD/target}/debug/examples/chat_approval"
server_log=$(mktemp)
env -u TOOLSMITH_MODEL PORT=0 "$binary" >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$server_log"' EXIT
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$server_log" && break
  kill -0 "$server" 2>/dev/null || { cat "$server_log" >&2; log "the example did not start"; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$server_log" | head -n 1)
[ -n "$url" ] || { log "no address from the example"; exit 1; }
artefacts="${BROWSER_ARTIFACTS:-$PWD/ui-artifacts}"
log "page at $url, screenshots in $artefacts"
node tests/browser/chat_approval.mjs "$url" "$artefacts"
