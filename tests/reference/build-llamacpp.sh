#!/usr/bin/env bash
# Builds llama-cpp-python (pinned) from source into the venv .deps/llamacpp. It is the independent
# tokenizer reference used to regenerate tests/fixtures/tokenize-*.json (see make-fixtures.sh) and
# the llama.cpp peer of `laya bench` (bench/peers.py); the normal test run does not need it.
#
# Idempotent: a stamp file holds a hash of this script's pins and flags; a second run is a no-op.
# Takes ~4 minutes on one core (llama.cpp + ggml are compiled from the sdist). Only text models are
# used, so the multimodal library (LLAVA_BUILD) is skipped.
#
# Environment:
#   PYTHON         python to create the venv with (default python3)
#   LAYA_JOBS      parallel compile jobs (default 1, so a concurrent cargo build keeps its cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV="$ROOT/.deps/llamacpp"
PY=${PYTHON:-python3}

LLAMACPP_VERSION=0.3.16
# Native CPU flags crash here (see DESIGN.md); name the ISA explicitly instead, from what this CPU
# has: AVX-512 where it has it (the machines here differ: some have only AVX2, and a build with
# AVX-512 dies of SIGILL on those). The flags are in the stamp, so a new CPU rebuilds.
has_flag() { grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -qx "$1"; }
AVX512=OFF
if has_flag avx512f && has_flag avx512bw && has_flag avx512vl; then AVX512=ON; fi
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=$AVX512 -DLLAVA_BUILD=OFF"
# Runtime deps of llama-cpp-python 0.3.16 and the build backend, pinned.
PINS=(
  "llama-cpp-python==$LLAMACPP_VERSION"
  "typing-extensions==4.16.0"
  "numpy==2.4.6"
  "diskcache==5.6.3"
  "jinja2==3.1.6"
  "MarkupSafe==3.0.4"
)
BUILD_PINS=("scikit-build-core[pyproject]==0.11.6" "packaging==26.4" "pathspec==1.1.1" "ninja==1.13.0")

say() { printf '\033[1mbuild-llamacpp:\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31mbuild-llamacpp: error:\033[0m %s\n' "$*" >&2; exit 1; }

want=$(printf '%s\n' "$PY" "$CMAKE_FLAGS" "${PINS[@]}" "${BUILD_PINS[@]}" | sha256sum | cut -d' ' -f1)
stamp="$VENV/.laya-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$VENV/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  exit 0
fi

command -v cmake >/dev/null || die "cmake is missing (Debian: apt-get install -y cmake; or run scripts/bootstrap.sh)"
command -v g++ >/dev/null || die "g++ is missing (Debian: apt-get install -y g++)"
"$PY" -m venv --help >/dev/null 2>&1 || die "$PY cannot create venvs (Debian: apt-get install -y python3-venv)"

say "creating $VENV and building llama-cpp-python==$LLAMACPP_VERSION from source (~4 min)"
rm -rf "$VENV"
"$PY" -m venv "$VENV" || die "could not create the venv $VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
# Build backend installed first and reused (no build isolation), so its version is pinned too.
pip install --quiet "${BUILD_PINS[@]}" \
  || die "could not install the build backend (${BUILD_PINS[*]}) from PyPI"
export CMAKE_ARGS="$CMAKE_FLAGS"
export CMAKE_BUILD_PARALLEL_LEVEL=${LAYA_JOBS:-1}
export FORCE_CMAKE=1
# --no-cache-dir: pip's wheel cache is keyed by the sdist alone, so a wheel built with other
# CMAKE_ARGS (another CPU's) would be installed again without compiling.
pip install --quiet --no-cache-dir --no-build-isolation --no-binary llama-cpp-python "${PINS[@]}" \
  || die "building llama-cpp-python==$LLAMACPP_VERSION failed (CMAKE_ARGS=$CMAKE_FLAGS); rerun with 'pip install -v' to see the compiler output"
"$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)' >/dev/null \
  || die "llama-cpp-python was built but does not import"
echo "$want" >"$stamp"
say "ready: $VENV"
