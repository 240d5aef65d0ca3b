#!/usr/bin/env bash
# Builds Laya's VS Code extension: npm ci (skipped when node_modules already matches
# package-lock.json), type-check, unit tests, esbuild bundle, and a .vsix made by @vscode/vsce.
# Prints the .vsix's path (extension-vscode/laya-<version>.vsix) on stdout; the rest goes to stderr.
# Needs Node 20+ and npm (npm's registry for the first run).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext="$root/extension-vscode"
cd "$ext"

{
    node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
    if [ "$node_major" -lt 20 ]; then
        echo "build-vscode-extension: Node 20 or newer is needed (found: $(node --version 2>/dev/null || echo none))" >&2
        exit 1
    fi

    # npm ci only when the lock file changed since the last one (it deletes node_modules first).
    stamp="node_modules/.laya-lock.sha256"
    want="$(sha256sum package-lock.json | cut -d' ' -f1)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "== npm ci" >&2
        npm ci --no-audit --no-fund >&2
        echo "$want" >"$stamp"
    fi

    echo "== type-check, unit tests, bundle" >&2
    npx --no-install tsc --noEmit -p . >&2
    npm test --silent >/dev/null || { npm test >&2; exit 1; }
    node esbuild.mjs --production >&2

    version="$(node -p 'require("./package.json").version')"
    out="laya-$version.vsix"
    echo "== packaging $out" >&2
    # vscode:prepublish bundles again, minified; dependencies are in the bundle, not node_modules.
    npx --no-install vsce package --no-dependencies --skip-license \
        --out "$out" >&2
    # Check that the .vsix has what the extension needs to run and nothing from node_modules.
    listing="$(python3 - "$out" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
print("\n".join(names))
PY
)"
    for need in extension/package.json extension/dist/extension.js extension/readme.md extension/changelog.md; do
        if ! grep -qix "$need" <<<"$listing"; then
            echo "build-vscode-extension: $out lacks $need" >&2
            exit 1
        fi
    done
    if grep -q '^extension/node_modules/' <<<"$listing"; then
        echo "build-vscode-extension: $out carries node_modules (it should be bundled)" >&2
        exit 1
    fi
}
echo "$ext/$out"
