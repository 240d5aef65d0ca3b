#!/usr/bin/env bash
# Builds Laya's Zed extension (extension-zed/) to WebAssembly and prints the path of the .wasm.
#
#   scripts/build-zed-extension.sh [TARGET]    TARGET: wasm32-wasip1 (default) or wasm32-wasip2
#
# Idempotent: the rustup target is added only when missing, and cargo rebuilds only what changed
# (extension-zed/target). Zed does not need this to install the extension ("zed: install dev
# extension" builds it with its own cargo call, for wasm32-wasip2 since Zed 0.205); it is for
# checking the crate here (scripts/test-zed-extension.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext="$root/extension-zed"
target="${1:-wasm32-wasip1}"

libdir="$(rustc --print target-libdir --target "$target" 2>/dev/null || true)"
if [[ -z "$libdir" || ! -d "$libdir" ]]; then
    if ! command -v rustup >/dev/null; then
        echo "the Rust target $target is missing and rustup is not installed to add it" >&2
        exit 1
    fi
    echo "adding the Rust target $target (rustup target add $target)" >&2
    rustup target add "$target" >&2
fi

locked=()
[[ -f "$ext/Cargo.lock" ]] && locked=(--locked)

# cargo runs from / so that the server's .cargo/config.toml (written by `make bootstrap`, it patches
# mlx-sys) is not read: it would add a [[patch.unused]] entry to extension-zed/Cargo.lock and make
# --locked fail. --target-dir keeps the output in extension-zed/target whatever CARGO_TARGET_DIR says.
(cd / && cargo build --release "${locked[@]}" --target "$target" \
    --manifest-path "$ext/Cargo.toml" --target-dir "$ext/target" >&2)

wasm="$ext/target/$target/release/laya_zed.wasm"
if [[ ! -f "$wasm" ]]; then
    echo "cargo finished but $wasm is missing" >&2
    exit 1
fi
echo "$wasm"
