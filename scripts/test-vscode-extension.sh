#!/usr/bin/env bash
# The real-editor test of Laya's VS Code extension. Installs what it needs once (idempotent):
#   - Debian: chromium, fonts-wqy-microhei (Chinese glyphs for the screenshots), ripgrep,
#     libkrb5-dev libxkbfile-dev libsecret-1-dev (code-server's build);
#   - npm: code-server 4.100.3 (VS Code 1.100.3) and playwright-core, into .deps/vscode-test/;
# builds the .vsix (scripts/build-vscode-extension.sh), installs it into a fresh code-server,
# starts code-server on a temporary workspace with laya.path set to target/release/laya, and runs
# tests/editors/vscode/run.js in headless chromium: ghost text accepted with Tab, and a squiggle
# whose quick fix corrects the word. Screenshots go to target/vscode-test-artifacts/.
# Needs Node 20+, the built server (make build) and its default model. Exits non-zero on failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps/vscode-test"
artifacts="$root/target/vscode-test-artifacts"
laya="$root/target/release/laya"
CODE_SERVER_VERSION=4.100.3
PLAYWRIGHT_VERSION=1.65.1
# code-server 4.100.3's VS Code pins @vscode/ripgrep 1.15.11, whose postinstall downloads
# ripgrep v13.0.0-10 from GitHub unless this tarball is already in its cache folder.
RIPGREP_NPM_VERSION=1.15.11
RIPGREP_TAG=v13.0.0-10
start=$SECONDS

fail() {
    echo "test-vscode-extension: FAILED: $*" >&2
    exit 1
}

# --- what the test needs --------------------------------------------------------------------
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
[ "$node_major" -ge 20 ] || fail "Node 20 or newer is needed (found: $(node --version 2>/dev/null || echo none)); code-server 4.100 runs on Node 20"
[ -x "$laya" ] || fail "$laya is missing: run \`make build\` first"

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v rg >/dev/null || need_apt+=(ripgrep)
for p in fonts-wqy-microhei libkrb5-dev libxkbfile-dev libsecret-1-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
done
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "== apt-get install ${need_apt[*]}"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need_apt[@]}" >/dev/null ||
        { $sudo apt-get update >/dev/null && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need_apt[@]}" >/dev/null; } ||
        fail "could not install ${need_apt[*]} with apt-get"
fi

cs_dir="$deps/code-server"
code_server="$cs_dir/node_modules/.bin/code-server"
cs_ok() {
    [ -x "$code_server" ] &&
        [ "$(node -p "require('$cs_dir/node_modules/code-server/package.json').version" 2>/dev/null)" = "$CODE_SERVER_VERSION" ] &&
        [ -x "$cs_dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] &&
        [ -d "$cs_dir/node_modules/argon2/lib/binding" ]
}
if ! cs_ok; then
    echo "== installing code-server $CODE_SERVER_VERSION from npm (a few minutes, once)"
    mkdir -p "$cs_dir" "$deps/tmp"
    # Debian's rg where @vscode/ripgrep's postinstall looks before going to GitHub.
    rg_cache="$deps/tmp/vscode-ripgrep-cache-$RIPGREP_NPM_VERSION"
    rg_tar="$rg_cache/ripgrep-$RIPGREP_TAG-x86_64-unknown-linux-musl.tar.gz"
    if [ ! -f "$rg_tar" ]; then
        mkdir -p "$rg_cache" "$deps/tmp/rg"
        cp "$(command -v rg)" "$deps/tmp/rg/rg"
        tar czf "$rg_tar" -C "$deps/tmp/rg" rg
        rm -rf "$deps/tmp/rg"
    fi
    [ -f "$cs_dir/package.json" ] || echo '{"name": "laya-vscode-test-code-server", "private": true}' >"$cs_dir/package.json"
    (
        cd "$cs_dir"
        export TMPDIR="$deps/tmp" npm_config_unsafe_perm=true npm_config_yes=true
        npm install --no-audit --no-fund --save-exact "code-server@$CODE_SERVER_VERSION" >"$deps/npm-install.log" 2>&1 ||
            { tail -20 "$deps/npm-install.log" >&2; exit 1; }
        # npm 11 may skip install scripts it has not approved: run them.
        if [ ! -x node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg ] || [ ! -d node_modules/argon2/lib/binding ]; then
            npm rebuild code-server argon2 --foreground-scripts >>"$deps/npm-install.log" 2>&1 ||
                { tail -20 "$deps/npm-install.log" >&2; exit 1; }
        fi
    ) || fail "installing code-server $CODE_SERVER_VERSION (log: $deps/npm-install.log)"
    cs_ok || fail "code-server $CODE_SERVER_VERSION is not complete after installing it (log: $deps/npm-install.log)"
fi

pw_dir="$deps/playwright"
if [ "$(node -p "require('$pw_dir/node_modules/playwright-core/package.json').version" 2>/dev/null)" != "$PLAYWRIGHT_VERSION" ]; then
    echo "== installing playwright-core $PLAYWRIGHT_VERSION from npm"
    mkdir -p "$pw_dir"
    [ -f "$pw_dir/package.json" ] || echo '{"name": "laya-vscode-test-playwright", "private": true}' >"$pw_dir/package.json"
    (cd "$pw_dir" && npm install --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null) ||
        fail "installing playwright-core $PLAYWRIGHT_VERSION"
fi
echo "== node $(node --version), code-server $CODE_SERVER_VERSION, $(/usr/bin/chromium --version 2>/dev/null | head -1), playwright-core $PLAYWRIGHT_VERSION ($((SECONDS - start)) s)"

# --- the extension --------------------------------------------------------------------------
echo "== building the extension"
vsix="$("$root/scripts/build-vscode-extension.sh" 2>"$deps/build.log")" || { cat "$deps/build.log" >&2; fail "building the extension"; }
echo "   $vsix"

# --- a fresh code-server ----------------------------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/laya-vscode-test.XXXXXX")"
data="$tmp/user-data"
exts="$tmp/extensions"
ws="$tmp/workspace"
mkdir -p "$data/User" "$exts" "$ws" "$artifacts"
rm -rf "$artifacts"/*.png "$artifacts/failure.html" "$artifacts/logs"
cs_pid=""
cleanup() {
    local rc=$?
    if [ -n "$cs_pid" ]; then
        # code-server runs in its own process group (setsid): its extension host and laya serve too.
        kill -TERM -- "-$cs_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 -- "-$cs_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL -- "-$cs_pid" 2>/dev/null || true
    fi
    if [ "$rc" -ne 0 ]; then
        # Keep code-server's logs (the extension host's and the Laya output channel among them).
        rm -rf "$artifacts/logs"
        cp -r "$data/logs" "$artifacts/logs" 2>/dev/null || true
        cp "$tmp/code-server.log" "$artifacts/logs/" 2>/dev/null || true
        echo "test-vscode-extension: logs in $artifacts/logs" >&2
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '# Notes\n\n' >"$ws/notes.md"
printf '# 笔记\n\n' >"$ws/zh.md"
python3 - "$data/User/settings.json" "$laya" <<'PY'
import json, sys
settings = {
    "laya.path": sys.argv[2],
    "editor.inlineSuggest.enabled": True,
    "laya.trace.server": "verbose",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "security.workspace.trust.enabled": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "files.autoSave": "off",
    "editor.minimap.enabled": False,
    "chat.commandCenter.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
}
with open(sys.argv[1], "w") as f:
    json.dump(settings, f, indent=2)
PY

cs_args=(--user-data-dir "$data" --extensions-dir "$exts" --config "$tmp/config.yaml")
echo "== installing the .vsix into code-server"
"$code_server" "${cs_args[@]}" --install-extension "$vsix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "code-server --install-extension $vsix"; }
ls "$exts" | grep -q '^laya-dev.laya-' || { cat "$tmp/install.log" >&2; fail "the extension is not in $exts after --install-extension"; }

# laya serve's default user dictionary is under $XDG_CONFIG_HOME: the test adds "libary" to it,
# which must not land in the real one (a later run would find the word known).
export XDG_CONFIG_HOME="$tmp/config"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
echo "== starting code-server on 127.0.0.1:$port"
setsid "$code_server" "${cs_args[@]}" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override "$ws" \
    >"$tmp/code-server.log" 2>&1 &
cs_pid=$!
for i in $(seq 1 120); do
    if node -e 'require("http").get(process.argv[1], (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on("error", () => process.exit(1))' \
        "http://127.0.0.1:$port/healthz"; then
        break
    fi
    kill -0 "$cs_pid" 2>/dev/null || { cat "$tmp/code-server.log" >&2; fail "code-server exited"; }
    [ "$i" -lt 120 ] || { cat "$tmp/code-server.log" >&2; fail "code-server did not answer on port $port within 60 s"; }
    sleep 0.5
done

# --- the browser ------------------------------------------------------------------------------
echo "== driving VS Code in headless chromium"
LAYA_PLAYWRIGHT_CORE="$pw_dir/node_modules/playwright-core" \
LAYA_VSCODE_URL="http://127.0.0.1:$port/?folder=$ws" \
LAYA_VSCODE_WORKSPACE="$ws" \
LAYA_VSCODE_ARTIFACTS="$artifacts" \
LAYA_VSCODE_SETTINGS="$data/User/settings.json" \
LAYA_CHROMIUM=/usr/bin/chromium \
    node "$root/tests/editors/vscode/run.js" || fail "see above (screenshots in $artifacts)"
echo "== all verified in $((SECONDS - start)) s"
