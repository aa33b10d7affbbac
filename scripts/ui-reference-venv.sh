#!/usr/bin/env bash
# Creates the Python venv of the UI protocol comparison (tests/ui-differential): the real Pydantic AI
# at the version of ../shared/conformance/reference/requirements.txt, with the extra its UI adapters
# need (`ag-ui`: ag-ui-protocol and starlette; the Vercel AI adapter needs starlette too), every
# other dependency pinned by tests/differential/constraints.txt, and prints its python's path on
# stdout. Nothing is done when the venv is there with the same pins (a stamp file records them).
#
#   py="$(scripts/ui-reference-venv.sh)"
#   "$py" tests/ui-differential/reference.py tests/ui-differential/scenarios/text.json ag_ui
#
# The folder is $TOOLSMITH_UI_REFERENCE_VENV if set, else .venv-ui-reference in the checkout
# (git-ignored). Progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${TOOLSMITH_SHARED_CONFORMANCE:-$root/../shared/conformance}"
requirements="$shared/reference/requirements.txt"
constraints="$root/tests/differential/constraints.txt"
ui_pins="$root/tests/ui-differential/requirements.txt"
venv="${TOOLSMITH_UI_REFERENCE_VENV:-$root/.venv-ui-reference}"
python="${PYTHON:-python3}"

log() { echo "ui-reference-venv: $*" >&2; }

if [ ! -f "$requirements" ]; then
  log "no $requirements (the shared conformance folder goes beside the checkout)"
  exit 1
fi
version="$(sed -n 's/^pydantic-ai-slim==//p' "$requirements")"
[ -n "$version" ] || { log "no pydantic-ai-slim pin in $requirements"; exit 1; }
stamp="$("$python" --version 2>&1) | $version | $(cat "$constraints" "$ui_pins" | grep -v '^#' | sort | tr '\n' ' ')"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$stamp" ]; then
  log "already installed in $venv"
else
  log "installing into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "pydantic-ai-slim[ag-ui]==$version" -r "$ui_pins" -c "$constraints" >&2
  "$venv/bin/python" -c 'import pydantic_ai.ui.ag_ui, pydantic_ai.ui.vercel_ai' >&2
  echo "$stamp" > "$venv/.installed"
  log "installed $("$venv/bin/pip" show pydantic-ai-slim 2>/dev/null | sed -n 's/^Version: /pydantic-ai-slim /p')"
fi
echo "$venv/bin/python"
