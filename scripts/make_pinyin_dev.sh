#!/usr/bin/env bash
# Rebuilds the committed pinyin dev set data/dev/pinyin/{tune,test}.tsv (see data/README.md) from
# the Chinese prose of two MIT-licensed PyPI packages: pypinyin 0.55.0's sdist (README.rst,
# CHANGELOG.rst) and jieba 0.42.1's sdist (PKG-INFO, its long description), sha256 pinned. Needs
# scripts/pinyin.sh to have run (the pypinyin it unpacked makes the clauses' pinyin).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DL=.deps/pinyin/dl
SRC=.deps/pinyin/src
PYPINYIN_SDIST=pypinyin-0.55.0.tar.gz
PYPINYIN_SDIST_SHA256=b5711b3a0c6f76e67408ec6b2e3c4987a3a806b7c528076e7c7b86fcf0eaa66b
JIEBA_SDIST=jieba-0.42.1.tar.gz
JIEBA_SHA256=055ca12f62674fafed09427f176506079bc135638a14e23e25be909131928db2
die() { printf 'make_pinyin_dev: error: %s\n' "$*" >&2; exit 1; }
# check_sha256 FILE SHA256
. scripts/sha256.sh
scripts/pinyin.sh
mkdir -p "$DL" "$SRC/dev"
[ -f "$DL/$PYPINYIN_SDIST" ] || "$PY" -m pip download --quiet --no-deps --no-binary=:all: pypinyin==0.55.0 -d "$DL" ||
  die "could not download the pypinyin 0.55.0 sdist from PyPI"
check_sha256 "$DL/$PYPINYIN_SDIST" "$PYPINYIN_SDIST_SHA256"
check_sha256 "$DL/$JIEBA_SDIST" "$JIEBA_SHA256"
tar -xzf "$DL/$PYPINYIN_SDIST" -C "$SRC/dev" pypinyin-0.55.0/README.rst pypinyin-0.55.0/CHANGELOG.rst
tar -xzf "$DL/$JIEBA_SDIST" -C "$SRC/dev" jieba-0.42.1/PKG-INFO
"$PY" scripts/make_pinyin_dev.py --pypinyin "$SRC/pypinyin-0.55.0" --out data/dev/pinyin \
  "$SRC/dev/pypinyin-0.55.0/README.rst" "$SRC/dev/pypinyin-0.55.0/CHANGELOG.rst" "$SRC/dev/jieba-0.42.1/PKG-INFO"
