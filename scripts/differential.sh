#!/usr/bin/env bash
# Differential fuzzing of the conformance runner against the reference runner (real Pydantic AI).
#
#   scripts/differential.sh --seed S --count N [--keep DIR] [-j JOBS] [--shrink K] [--shrink-dir DIR]
#   scripts/differential.sh --shrink-file SCENARIO.json [--shrink-dir DIR]
#
# Builds the release conformance binary, makes sure the reference venv exists
# (scripts/reference-venv.sh), then runs tests/differential/fuzz.py with the arguments: it prints the
# differences, closes with `N passed, M failed` and exits 1 when a scenario failed. See
# tests/differential/README.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py="$(scripts/reference-venv.sh)"
if [ -z "${CONFORMANCE_RUNNER:-}" ]; then
  cargo build -q --release -p conformance
  export CONFORMANCE_RUNNER="${CARGO_TARGET_DIR:-$root/target}/release/conformance"
fi
exec "$py" tests/differential/fuzz.py "$@"
