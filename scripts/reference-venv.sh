#!/usr/bin/env bash
# Creates the reference runner's Python venv (the real Pydantic AI of
# ../shared/conformance/reference/requirements.txt, with every dependency pinned by
# tests/differential/constraints.txt) and prints its python's path on stdout. It does nothing when
# the venv is there with the same pins (a stamp file records them).
#
#   py="$(scripts/reference-venv.sh)"
#   "$py" ../shared/conformance/reference/run_pydantic_ai.py SCENARIO.json
#   "$py" crates/toolsmith-bench/reference/extra_workloads.py --json   # the bench's extra workloads
#
# The folder is $TOOLSMITH_REFERENCE_VENV if set, else .venv-reference in the checkout (git-ignored).
# Progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${TOOLSMITH_SHARED_CONFORMANCE:-$root/../shared/conformance}"
requirements="$shared/reference/requirements.txt"
constraints="$root/tests/differential/constraints.txt"
venv="${TOOLSMITH_REFERENCE_VENV:-$root/.venv-reference}"
python="${PYTHON:-python3}"

log() { echo "reference-venv: $*" >&2; }

if [ ! -f "$requirements" ]; then
  log "no $requirements (the shared conformance folder goes beside the checkout)"
  exit 1
fi
stamp="$("$python" --version 2>&1) | $(cat "$requirements" "$constraints" | grep -v '^#' | sort | tr '\n' ' ')"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$stamp" ]; then
  log "already installed in $venv"
else
  log "installing into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" -c "$constraints" >&2
  "$venv/bin/python" -c 'import pydantic_ai' >&2
  echo "$stamp" > "$venv/.installed"
  log "installed $("$venv/bin/pip" show pydantic-ai-slim 2>/dev/null | sed -n 's/^Version: /pydantic-ai-slim /p')"
fi
echo "$venv/bin/python"
