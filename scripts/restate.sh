#!/usr/bin/env bash
# The Restate server and CLI for the durable agents (crates/toolsmith-restate): installed from the
# npm registry at a pinned version into .restate/ (git-ignored), started on 127.0.0.1 with a fresh
# temporary data directory, and stopped.
#
#   scripts/restate.sh install                 # install only (does nothing when already there)
#   scripts/restate.sh start                   # install if needed, start, wait until healthy
#   scripts/restate.sh register http://127.0.0.1:9080   # register a service deployment
#   scripts/restate.sh stop                    # stop the server, delete its data directory
#   scripts/restate.sh paths                   # print RESTATE_SERVER_BIN=... and RESTATE_CLI_BIN=...
#
# Ports (all on 127.0.0.1): RESTATE_INGRESS_PORT (8080), RESTATE_ADMIN_PORT (9070),
# RESTATE_NODE_PORT (5122). RESTATE_HOME moves the folder (default: .restate in the checkout); the
# running server's pid, data directory and log are in $RESTATE_HOME/run; RESTATE_NPM_DIR moves the
# installed packages (default: $RESTATE_HOME/npm).
set -euo pipefail

VERSION="1.7.12"

root="$(cd "$(dirname "$0")/.." && pwd)"
home="${RESTATE_HOME:-$root/.restate}"
ingress_port="${RESTATE_INGRESS_PORT:-8080}"
admin_port="${RESTATE_ADMIN_PORT:-9070}"
node_port="${RESTATE_NODE_PORT:-5122}"
npm_dir="${RESTATE_NPM_DIR:-$home/npm}"
server_bin="$npm_dir/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server"
cli_bin="$npm_dir/node_modules/@restatedev/restate-linux-x64/bin/restate"
run_dir="$home/run"

log() { echo "restate.sh: $*" >&2; }

install() {
  mkdir -p "$(dirname "$npm_dir")"
  # One installer at a time (tests start servers in parallel).
  exec 9>"$npm_dir.lock"
  flock 9
  if [ -x "$server_bin" ] && [ -x "$cli_bin" ] && [ "$(cat "$npm_dir/.installed" 2>/dev/null)" = "$VERSION" ]; then
    exec 9>&-
    return
  fi
  if ! command -v npm >/dev/null 2>&1; then
    log "npm is not installed: install node and npm first"
    exit 1
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) log "this script installs the linux-x64 binaries; on $(uname -s)-$(uname -m) install Restate $VERSION yourself"; exit 1 ;;
  esac
  log "installing Restate $VERSION (server and CLI) into $npm_dir"
  mkdir -p "$npm_dir"
  rm -f "$npm_dir/.installed"
  cat > "$npm_dir/package.json" <<EOF
{
  "name": "toolsmith-restate-server",
  "private": true,
  "description": "The Restate server and CLI for toolsmith's durable agents (written by scripts/restate.sh)",
  "dependencies": {
    "@restatedev/restate-server": "$VERSION",
    "@restatedev/restate": "$VERSION"
  }
}
EOF
  (cd "$npm_dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
  [ -x "$server_bin" ] && [ -x "$cli_bin" ] || { log "the npm packages did not bring the binaries"; exit 1; }
  echo "$VERSION" > "$npm_dir/.installed"
  # Release the lock (and do not hand it to the server this script may start next).
  exec 9>&-
}

running_pid() {
  local pid
  pid="$(cat "$run_dir/pid" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

start() {
  install
  if [ -n "$(running_pid)" ]; then
    log "already running (pid $(running_pid)); stop it first"
    exit 1
  fi
  mkdir -p "$run_dir"
  local data
  data="$(mktemp -d "${TMPDIR:-/tmp}/restate-data.XXXXXX")"
  echo "$data" > "$run_dir/data"
  RESTATE_INGRESS__BIND_ADDRESS="127.0.0.1:$ingress_port" \
  RESTATE_ADMIN__BIND_ADDRESS="127.0.0.1:$admin_port" \
  RESTATE_BIND_ADDRESS="127.0.0.1:$node_port" \
  RESTATE_ADVERTISED_ADDRESS="http://127.0.0.1:$node_port" \
    nohup "$server_bin" --no-logo --base-dir "$data" --listen-mode tcp --node-name toolsmith \
      --default-num-partitions 2 > "$run_dir/server.log" 2>&1 &
  echo $! > "$run_dir/pid"
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$admin_port/health" >/dev/null 2>&1 \
      && curl -fsS "http://127.0.0.1:$ingress_port/restate/health" >/dev/null 2>&1; then
      log "started (pid $(cat "$run_dir/pid")): ingress http://127.0.0.1:$ingress_port, admin http://127.0.0.1:$admin_port"
      return
    fi
    if [ -z "$(running_pid)" ]; then
      log "the server exited; its log:"
      tail -20 "$run_dir/server.log" >&2
      rm -rf "$data"
      rm -f "$run_dir/pid" "$run_dir/data"
      exit 1
    fi
    sleep 0.5
  done
  log "the server did not become healthy in 60 s; its log is $run_dir/server.log"
  exit 1
}

register() {
  local url="${1:?usage: scripts/restate.sh register <deployment url>}"
  install
  # The service may still be building (`cargo run ... &`): wait for it to listen, up to 15 minutes.
  local waited=0
  until [ "$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_code}' "$url/health" 2>/dev/null || true)" != "000" ]; do
    if [ "$waited" = 0 ]; then log "waiting for the service at $url"; fi
    waited=$((waited + 1))
    if [ "$waited" -gt 1800 ]; then log "nothing listens at $url"; exit 1; fi
    sleep 0.5
  done
  RESTATE_ADMIN_URL="http://127.0.0.1:$admin_port" "$cli_bin" --yes deployments register --force "$url" < /dev/null >&2
}

stop() {
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    log "stopped (pid $pid)"
  fi
  if [ -f "$run_dir/data" ]; then
    rm -rf "$(cat "$run_dir/data")"
  fi
  rm -f "$run_dir/pid" "$run_dir/data"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  register) shift; register "$@" ;;
  stop) stop ;;
  paths) install; echo "RESTATE_SERVER_BIN=$server_bin"; echo "RESTATE_CLI_BIN=$cli_bin" ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
