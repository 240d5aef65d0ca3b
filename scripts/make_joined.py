#!/usr/bin/env python3
"""Writes data/dev/typos/joined.tsv: two words typed as one ("alot" -> "a lot", "eachother" ->
"each other"), every such pair of codespell's list (CC BY-SA 3.0) whose first fix is the
misspelling with one space put back, both of letters only, and whose misspelling the lexicon
does not know. Laya's error model counts letters only, so these pairs teach it nothing; they
measure the joins words alone (`laya eval typos data/dev/typos/joined.tsv --peer aspell`).
Deterministic: sorted, the same inputs give the same bytes.

Usage: scripts/make_joined.py --codespell dictionary.txt --lexicon .deps/lexicon/en.tsv --out data/dev/typos/joined.tsv
"""
import argparse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codespell", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    known = {line.split("\t", 1)[0].lower() for line in open(a.lexicon, encoding="utf-8")}
    pairs = set()
    for line in open(a.codespell, encoding="utf-8"):
        if "->" not in line:
            continue
        typed, fixes = line.rstrip("\n").split("->", 1)
        fix = fixes.split(",")[0].strip()
        if fix.count(" ") == 1 and fix.replace(" ", "") == typed and typed.isalpha() and typed.isascii() and typed not in known:
            pairs.add((typed, fix))
    with open(a.out, "w", encoding="utf-8", newline="\n") as f:
        for typed, fix in sorted(pairs):
            f.write(f"{typed}\t{fix}\n")
    print(f"{a.out}: {len(pairs)} pairs")


if __name__ == "__main__":
    main()
