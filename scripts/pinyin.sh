#!/usr/bin/env bash
# Fetches the pinyin dictionary's sources (idempotently) and builds .deps/pinyin/zh.tsv with
# scripts/pinyin.py: toneless reading -> simplified hanzi word -> count. See data/README.md.
#
#   pypinyin 0.55.0 wheel (PyPI, MIT, sha256 pinned) -> readings (phrase and character dictionaries)
#   jieba 0.42.1 sdist (PyPI, MIT, sha256 pinned)    -> jieba/dict.txt (words and their counts)
#
# A second run is instant (a stamp holds the pins). Environment: PYTHON (default python3).
# `scripts/pinyin.sh --force` rebuilds even when the stamp says it is up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DIR=.deps/pinyin
DL=$DIR/dl
SRC=$DIR/src

PYPINYIN_VERSION=0.55.0
PYPINYIN_WHL=pypinyin-${PYPINYIN_VERSION}-py2.py3-none-any.whl
PYPINYIN_SHA256=d53b1e8ad2cdb815fb2cb604ed3123372f5a28c6f447571244aca36fc62a286f
JIEBA_VERSION=0.42.1
JIEBA_SDIST=jieba-${JIEBA_VERSION}.tar.gz
JIEBA_SHA256=055ca12f62674fafed09427f176506079bc135638a14e23e25be909131928db2

say() { printf 'pinyin: %s\n' "$*" >&2; }
die() { printf 'pinyin: error: %s\n' "$*" >&2; exit 1; }
# check_sha256 FILE SHA256
. scripts/sha256.sh

want=$( { echo "pypinyin $PYPINYIN_SHA256 jieba $JIEBA_SHA256"; cat scripts/pinyin.py; } | sha256sum | cut -d' ' -f1)
stamp=$DIR/.laya-stamp
if [ "${1:-}" != --force ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -s "$DIR/zh.tsv" ]; then
  exit 0
fi
mkdir -p "$DL" "$SRC"

PYPINYIN_DIR=$SRC/pypinyin-$PYPINYIN_VERSION
if [ ! -f "$PYPINYIN_DIR/pypinyin/pinyin_dict.py" ]; then
  if [ ! -f "$DL/$PYPINYIN_WHL" ]; then
    say "downloading pypinyin $PYPINYIN_VERSION from PyPI"
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --ignore-requires-python \
      "pypinyin==$PYPINYIN_VERSION" -d "$DL" || die "could not download pypinyin==$PYPINYIN_VERSION from PyPI"
  fi
  check_sha256 "$DL/$PYPINYIN_WHL" "$PYPINYIN_SHA256"
  rm -rf "$PYPINYIN_DIR"
  "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$DL/$PYPINYIN_WHL" "$PYPINYIN_DIR"
fi

JIEBA_DICT=$SRC/jieba-$JIEBA_VERSION/jieba/dict.txt
if [ ! -f "$JIEBA_DICT" ]; then
  if [ ! -f "$DL/$JIEBA_SDIST" ]; then
    say "downloading jieba $JIEBA_VERSION from PyPI (19 MB)"
    "$PY" -m pip download --quiet --no-deps --no-binary=:all: "jieba==$JIEBA_VERSION" -d "$DL" ||
      die "could not download jieba==$JIEBA_VERSION from PyPI"
  fi
  check_sha256 "$DL/$JIEBA_SDIST" "$JIEBA_SHA256"
  tar -xzf "$DL/$JIEBA_SDIST" -C "$SRC" "jieba-$JIEBA_VERSION/jieba/dict.txt" "jieba-$JIEBA_VERSION/setup.py"
fi

say "building $DIR/zh.tsv (about 30 s)"
"$PY" scripts/pinyin.py --pypinyin "$PYPINYIN_DIR" --jieba "$JIEBA_DICT" --out "$DIR/zh.tsv"
echo "$want" >"$stamp"
