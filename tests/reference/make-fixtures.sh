#!/usr/bin/env bash
# Regenerates the reference tokenizations (llama.cpp through llama-cpp-python, vocab only) that the
# Rust tokenizer tests compare against:
#   tests/fixtures/tokenize-smollm2.json  tests/reference/tokenize-texts.json, SmolLM2's byte-level BPE
#   tests/fixtures/tokenize-gemma3.json   tests/reference/tokenize-texts-gemma3.json (the texts above
#                                         plus Chinese, Japanese, Korean, emoji, whitespace runs and
#                                         Gemma's special tokens), Gemma 3's SentencePiece
# Builds .deps/llamacpp first if needed (tests/reference/build-llamacpp.sh, ~4 min once).
#
#   tests/reference/make-fixtures.sh
#
# Environment:
#   LAYA_GGUF        the SmolLM2 GGUF (default: the default model that scripts/bootstrap.sh puts in
#                    ${XDG_CACHE_HOME:-~/.cache}/laya/models/)
#   LAYA_GEMMA_GGUF  the Gemma 3 GGUF (default: gemma-3-270m-q4_k_m.gguf in the same folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS=${XDG_CACHE_HOME:-$HOME/.cache}/laya/models
GGUF=${LAYA_GGUF:-$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf}
GEMMA_GGUF=${LAYA_GEMMA_GGUF:-$MODELS/gemma-3-270m-q4_k_m.gguf}

die() { printf '\033[1;31mmake-fixtures: error:\033[0m %s\n' "$*" >&2; exit 1; }
[ -f "$GGUF" ] || die "$GGUF not found (run scripts/bootstrap.sh, or set LAYA_GGUF)"
[ -f "$GEMMA_GGUF" ] || die "$GEMMA_GGUF not found (run make model, or set LAYA_GEMMA_GGUF)"

tests/reference/build-llamacpp.sh
mkdir -p tests/fixtures

fixture() { # GGUF TEXTS OUT
  .deps/llamacpp/bin/python tests/reference/mlx_reference.py tokenize --with-text \
    --model "$1" --texts-file "$2" >"$3.tmp" 2> >(grep -v 'n_ctx_per_seq' >&2)
  mv "$3.tmp" "$3"
  printf '\033[1mmake-fixtures:\033[0m wrote %s (%s texts)\n' "$3" "$(grep -c '"ids"' "$3")" >&2
}
fixture "$GGUF" tests/reference/tokenize-texts.json tests/fixtures/tokenize-smollm2.json
fixture "$GEMMA_GGUF" tests/reference/tokenize-texts-gemma3.json tests/fixtures/tokenize-gemma3.json
