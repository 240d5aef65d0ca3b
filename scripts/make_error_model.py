#!/usr/bin/env python3
"""Learns the speller's error model from real misspelling pairs: how often each single-letter
slip (a substitution, a letter left out or added after a given letter, two letters swapped) turns
a word into its misspelling, counted over codespell's list of misspellings (codespell 2.4.3,
codespell_lib/data/dictionary.txt, CC BY-SA 3.0, mostly from Wikipedia's list of common
misspellings).

Pairs of the development sets (data/dev/typos/*.tsv), and every pair whose right word is the right
word of one of them, are left out, so `laya eval typos` on those sets measures words the model did
not learn from.

Writes server/decide/data/error-model.tsv: `kind<TAB>key<TAB>count` lines, where kind is
  sub  key "x>y"  the word has x, the writer typed y
  del  key "px"   the writer left out x, which follows p in the word (p "^" at the start)
  ins  key "py"   the writer typed y after p where the word has nothing
  tra  key "xy"   the word has xy, the writer typed yx
  chr  key "x"    x (or "^", a word's start) in the right words (what sub and ins divide by)
  big  key "px"   the letter pair px in the right words (what del and tra divide by)
Deterministic: the same inputs give the same bytes.

Usage: scripts/make_error_model.py --codespell dictionary.txt --exclude data/dev/typos/*.tsv \
           --out server/decide/data/error-model.tsv
"""
import argparse
from collections import Counter

ALPHABET = set("abcdefghijklmnopqrstuvwxyz'")


def align(w, t):
    """The single-letter slips of one cheapest way to turn w into t (unit costs, adjacent swaps)."""
    n, m = len(w), len(t)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (w[i - 1] != t[j - 1]))
            if i > 1 and j > 1 and w[i - 1] == t[j - 2] and w[i - 2] == t[j - 1] and w[i - 1] != w[i - 2]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    ops = []
    i, j = n, m
    while i > 0 or j > 0:
        # A letter doubled or written once where the word doubles it is one slip of its own
        # ("ocasion", "untill"): counted as the second of the pair added or left out ("cc"),
        # not as whichever letter happens to precede the pair.
        if i > 0 and j > 1 and t[j - 1] == t[j - 2] == w[i - 1] and d[i][j] == d[i][j - 1] + 1:
            ops.append(("ins", w[i - 1] + t[j - 1]))
            j -= 1
        elif i > 1 and w[i - 1] == w[i - 2] and d[i][j] == d[i - 1][j] + 1:
            ops.append(("del", w[i - 2] + w[i - 1]))
            i -= 1
        elif i > 0 and j > 0 and w[i - 1] == t[j - 1] and d[i][j] == d[i - 1][j - 1]:
            i, j = i - 1, j - 1
        elif i > 1 and j > 1 and w[i - 1] == t[j - 2] and w[i - 2] == t[j - 1] and w[i - 1] != w[i - 2] and d[i][j] == d[i - 2][j - 2] + 1:
            ops.append(("tra", w[i - 2] + w[i - 1]))
            i, j = i - 2, j - 2
        elif i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + 1:
            ops.append(("sub", w[i - 1] + ">" + t[j - 1]))
            i, j = i - 1, j - 1
        elif i > 0 and d[i][j] == d[i - 1][j] + 1:
            ops.append(("del", (w[i - 2] if i > 1 else "^") + w[i - 1]))
            i -= 1
        else:
            ops.append(("ins", (w[i - 1] if i > 0 else "^") + t[j - 1]))
            j -= 1
    return d[n][m], ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codespell", required=True)
    ap.add_argument("--exclude", nargs="*", default=[])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    held_out_typos, held_out_words = set(), set()
    for path in a.exclude:
        for line in open(path, encoding="utf-8"):
            if "\t" in line:
                typo, right = line.rstrip("\n").split("\t")[:2]
                held_out_typos.add(typo.lower())
                held_out_words.add(right.lower())
    counts = Counter()
    pairs = 0
    for line in open(a.codespell, encoding="utf-8"):
        if "->" not in line:
            continue
        typo, rights = line.rstrip("\n").split("->", 1)
        rights = [r.strip() for r in rights.split(",") if r.strip()]
        typo = typo.strip().lower()
        # One right word only: a list of several is codespell's guess, not the writer's intent.
        if len(rights) != 1:
            continue
        right = rights[0].lower()
        if typo in held_out_typos or right in held_out_words:
            continue
        if not set(typo) <= ALPHABET or not set(right) <= ALPHABET or typo == right:
            continue
        dist, ops = align(right, typo)
        if dist > 2:
            continue
        pairs += 1
        for op in ops:
            counts[op] += 1
        prev = "^"
        counts[("chr", "^")] += 1
        for c in right:
            counts[("chr", c)] += 1
            counts[("big", prev + c)] += 1
            prev = c
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(f"# Laya's learned error model: scripts/make_error_model.py over {pairs} pairs of codespell 2.4.3's\n")
        f.write("# list of misspellings (CC BY-SA 3.0), the development sets' pairs and words left out.\n")
        for (kind, key), n in sorted(counts.items()):
            f.write(f"{kind}\t{key}\t{n}\n")


if __name__ == "__main__":
    main()
