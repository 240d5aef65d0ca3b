#!/usr/bin/env bash
# Regenerates tests/fixtures/tokenize-smollm2.json: the reference tokenization (llama.cpp through
# llama-cpp-python, vocab only) of tests/reference/tokenize-texts.json with the default model's
# tokenizer. Builds .deps/llamacpp first if needed (tests/reference/build-llamacpp.sh, ~4 min once).
#
# Environment:
#   LAYA_GGUF   the GGUF whose tokenizer to use (default: the default model that scripts/bootstrap.sh
#               puts in ${XDG_CACHE_HOME:-~/.cache}/laya/models/)
set -euo pipefail
cd "$(dirname "$0")/../.."
GGUF=${LAYA_GGUF:-${XDG_CACHE_HOME:-$HOME/.cache}/laya/models/SmolLM2-135M-Instruct.Q4_1.gguf}
OUT=tests/fixtures/tokenize-smollm2.json

die() { printf '\033[1;31mmake-fixtures: error:\033[0m %s\n' "$*" >&2; exit 1; }
[ -f "$GGUF" ] || die "$GGUF not found (run scripts/bootstrap.sh, or set LAYA_GGUF)"

tests/reference/build-llamacpp.sh
mkdir -p tests/fixtures
.deps/llamacpp/bin/python tests/reference/mlx_reference.py tokenize --with-text \
  --model "$GGUF" --texts-file tests/reference/tokenize-texts.json >"$OUT.tmp" 2> >(grep -v 'n_ctx_per_seq' >&2)
mv "$OUT.tmp" "$OUT"
printf '\033[1mmake-fixtures:\033[0m wrote %s (%s texts)\n' "$OUT" "$(grep -c '"ids"' "$OUT")" >&2
