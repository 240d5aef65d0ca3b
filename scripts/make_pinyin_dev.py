#!/usr/bin/env python3
"""Cuts Chinese prose into the pinyin dev set data/dev/pinyin/{tune,test}.tsv: `pinyin<TAB>hanzi`,
the clauses between punctuation that are 4-16 hanzi and nothing else, in the order of the
sources, each once; their toneless pinyin from pypinyin (its phrase dictionary reads polyphones
in context: 银行 "yin hang"). A clause goes to tune.tsv or test.tsv by the first byte of its
SHA-1 (even: tune), so adding text never moves a clause from one to the other. test.tsv is never
tuned on.

Usage: make_pinyin_dev.py --pypinyin DIR --out DIR TEXT_FILE...
"""
import argparse
import hashlib
import os
import re
import sys

CLAUSE = re.compile(r"^[\u4e00-\u9fff]{4,16}$")
# Clauses end at punctuation, white space, and any character that is not hanzi (a clause with
# Latin letters or digits in it is split there, and its pieces are kept only if long enough).
SPLIT = re.compile(r"[^\u4e00-\u9fff]+")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pypinyin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("texts", nargs="+")
    a = ap.parse_args()
    sys.path.insert(0, a.pypinyin)
    from pypinyin import Style, lazy_pinyin  # noqa: E402

    seen, parts = set(), {"tune": [], "test": []}
    for path in a.texts:
        text = open(path, encoding="utf-8").read()
        # Code blocks of the reStructuredText sources are examples, not prose: drop indented
        # lines after a "::" or ".. code-block::" and doctest lines.
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith((">>>", "...", "$ "))]
        for piece in SPLIT.split("\n".join(lines)):
            if not CLAUSE.match(piece) or piece in seen:
                continue
            seen.add(piece)
            syl = lazy_pinyin(piece, style=Style.NORMAL)
            if len(syl) != len(piece) or not all(re.match(r"^[a-z]+$", s) for s in syl):
                continue
            part = "tune" if hashlib.sha1(piece.encode()).digest()[0] % 2 == 0 else "test"
            parts[part].append(f"{' '.join(syl)}\t{piece}")
    os.makedirs(a.out, exist_ok=True)
    for part, rows in parts.items():
        with open(os.path.join(a.out, f"{part}.tsv"), "w", encoding="utf-8") as f:
            f.write("".join(r + "\n" for r in rows))
        print(f"{part}: {len(rows)} clauses", file=sys.stderr)


if __name__ == "__main__":
    main()
