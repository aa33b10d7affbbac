#!/usr/bin/env bash
# The UI protocol comparison: every scenario of tests/ui-differential/scenarios through Pydantic
# AI's own AG-UI and Vercel AI adapters (the pinned venv of scripts/ui-reference-venv.sh) and
# through toolsmith-ui's (the ui_differential example); the normalised events must be equal.
# Exits 0 only when every scenario passes on every protocol.
#
#   scripts/ui-differential.sh [--scenario NAME]
set -euo pipefail
cd "$(dirname "$0")/.."

py="$(scripts/ui-reference-venv.sh)"
cargo build -q -p toolsmith-ui --example ui_differential
runner="${CARGO_TARGET_DIR:-$PWD/target}/debug/examples/ui_differential"
python3 tests/ui-differential/compare.py --python "$py" --runner "$runner" "$@"
