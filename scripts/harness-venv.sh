#!/usr/bin/env bash
# Creates the harness runner's Python venv (pydantic-ai-harness 0.62 and the pydantic-ai-slim it
# requires, tests/harness/requirements.txt, every dependency pinned by tests/harness/constraints.txt)
# and prints its python's path on stdout. It does nothing when the venv is there with the same pins
# (a stamp file records them).
#
#   py="$(scripts/harness-venv.sh)"
#   "$py" tests/harness/run_harness.py tests/harness/scenarios/SCENARIO.json
#
# The folder is $TOOLSMITH_HARNESS_VENV if set, else .venv-harness in the checkout (git-ignored).
# Progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/tests/harness/requirements.txt"
constraints="$root/tests/harness/constraints.txt"
venv="${TOOLSMITH_HARNESS_VENV:-$root/.venv-harness}"
python="${PYTHON:-python3}"

log() { echo "harness-venv: $*" >&2; }

stamp="$("$python" --version 2>&1) | $(cat "$requirements" "$constraints" | grep -v '^#' | sort | tr '\n' ' ')"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$stamp" ]; then
  log "already installed in $venv"
else
  log "installing into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" -c "$constraints" >&2
  "$venv/bin/python" -c 'import pydantic_ai_harness' >&2
  echo "$stamp" > "$venv/.installed"
  log "installed $("$venv/bin/pip" show pydantic-ai-harness 2>/dev/null | sed -n 's/^Version: /pydantic-ai-harness /p')"
fi
echo "$venv/bin/python"
