#!/usr/bin/env bash
# Builds Laya's Zed extension and checks what Zed's extension host needs from it:
#   1. builds it for wasm32-wasip1 (a core module carrying wit-bindgen's encoded world; older Zed
#      turned it into a component) and wasm32-wasip2 (the component Zed 0.205+ builds and loads);
#   2. parses both with extension-zed/tests/check_wasm.py against the WIT world of the
#      zed_extension_api version in extension-zed/Cargo.lock: every world export, imports only
#      from the world or WASI, the zed:api-version section; damaged copies must fail;
#   3. checks extension.toml (id, language server `laya`, its languages and LSP language ids);
#   4. runs the crate's unit tests on the host (command line, settings merging, error message).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext="$root/extension-zed"
start=$SECONDS

echo "== building (cargo output on stderr)"
p1="$("$root/scripts/build-zed-extension.sh" wasm32-wasip1)"
p2="$("$root/scripts/build-zed-extension.sh" wasm32-wasip2)"

echo "== checking the WebAssembly against the WIT world"
zed_api="$(cd / && cargo metadata --locked --format-version 1 --manifest-path "$ext/Cargo.toml" |
    python3 -c 'import json, os, sys
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "zed_extension_api"))')"
python3 "$ext/tests/check_wasm.py" --self-test --zed-api "$zed_api" "$p1" "$p2"

echo "== checking extension.toml"
python3 - "$ext" <<'PY'
import sys, tomllib
from pathlib import Path
ext = Path(sys.argv[1])
m = tomllib.loads((ext / "extension.toml").read_text())
cargo = tomllib.loads((ext / "Cargo.toml").read_text())
want_langs = {"Markdown": "markdown", "Plain Text": "plaintext", "Git Commit": "gitcommit"}
errors = []
for key, want in (("id", "laya"), ("schema_version", 1), ("version", cargo["package"]["version"]),
                  ("repository", "https://github.com/laya-dev/laya")):
    if m.get(key) != want:
        errors.append(f"{key} is {m.get(key)!r}, expected {want!r}")
for key in ("name", "description", "authors"):
    if not m.get(key):
        errors.append(f"{key} is missing")
server = m.get("language_servers", {}).get("laya")
if server is None:
    errors.append("no [language_servers.laya]")
else:
    if sorted(server.get("languages", [])) != sorted(want_langs):
        errors.append(f"languages are {server.get('languages')}, expected {sorted(want_langs)}")
    # Zed's default id for "Git Commit" would be "git commit"; the server knows "gitcommit".
    if server.get("language_ids") != want_langs:
        errors.append(f"language_ids are {server.get('language_ids')}, expected {want_langs}")
for e in errors:
    print(f"  ! {e}")
if errors:
    sys.exit(1)
print(f"ok extension.toml: id laya {m['version']}, server laya for {', '.join(want_langs)} "
      f"(LSP ids {', '.join(want_langs.values())})")
PY

echo "== unit tests (host)"
(cd / && cargo test --release --locked --quiet --manifest-path "$ext/Cargo.toml" --target-dir "$ext/target")

echo "== all verified in $((SECONDS - start)) s; wasm32-wasip1: $(stat -c %s "$p1") bytes, wasm32-wasip2: $(stat -c %s "$p2") bytes"
