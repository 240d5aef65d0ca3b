#!/usr/bin/env python3
"""Make data/dev/context/split-errors.jsonl: one word typed as two ("in to", "some one", "data
base"), in context, from the prose files (stdlib only), in the format of make_context_errors.py
(kind "split" or "clean"; `error` is the two words, `correct` the one).

Each file gives the same number of lines, a third of them clean. In the others one word is split
in two: any lowercase-led word of letters that is two common words of the lexicon run together
(ln prior over SPLIT_PRIOR; three letters or more, or one of the short words of SHORT: "re",
"st" and "de" are in the lexicon, but no writer reads "return" as "re turn"), at any such
point, chosen at random among the line's words, with no preference for the splits writers make most or for the
ones Laya looks for (two content words, "data base", are as likely as "in to").

Seeded and deterministic: the same prose gives the same file.
  scripts/make_split_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
      --out data/dev/context/split-errors.jsonl
"""
import argparse
import math
import os
import random
import re

from make_context_errors import WORD_RE, chunks, english_prose, write_rows

SEED = 2611
N_LINES = 150
SHARE_CLEAN = 1 / 3
SPLIT_PRIOR = -12.0
PLAIN = re.compile(r"[A-Za-z]+")
SHORT = {"a", "i", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no", "of", "on", "or", "so",
         "to", "up", "us", "we"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prose", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    counts = {}
    with open(args.lexicon, encoding="utf-8") as f:
        for line in f:
            word, count = line.rstrip("\n").split("\t")[:2]
            counts[word.lower()] = counts.get(word.lower(), 0) + int(count)
    total = sum(counts.values())

    def common(w):
        return (len(w) >= 3 or w in SHORT) and w in counts and math.log(counts[w] / total) > SPLIT_PRIOR

    def splits(word):
        lower = word.lower()
        return [k for k in range(1, len(lower)) if common(lower[:k]) and common(lower[k:])]

    rng = random.Random(SEED)
    files = english_prose(args.prose)
    per_file = N_LINES // len(files)
    n_clean = round(per_file * SHARE_CLEAN)
    rows = []
    for name in files:
        pool = list(chunks(os.path.join(args.prose, name)))
        rng.shuffle(pool)
        want = ["clean"] * n_clean + ["split"] * (per_file - n_clean)
        rng.shuffle(want)
        for kind in want:
            row = None
            while pool and row is None:
                text = pool.pop()
                if kind == "clean":
                    row = dict(text=text, start=None, end=None, error=None, correct=None)
                    continue
                toks = [
                    (m.start(), m.end(), m.group(0))
                    for m in WORD_RE.finditer(text)
                    if PLAIN.fullmatch(m.group(0)) and (m.group(0).islower() or m.group(0)[1:].islower()) and splits(m.group(0))
                ]
                if not toks:
                    continue
                s, e, word = rng.choice(toks)
                k = rng.choice(splits(word))
                two = f"{word[:k]} {word[k:]}"
                new = text[:s] + two + text[e:]
                row = dict(text=new, start=s, end=s + len(two), error=two, correct=word)
            if row is None:
                raise SystemExit(f"{name}: ran out of text for {kind} lines")
            row.update(kind=kind, source=name)
            rows.append(row)
    write_rows(rows, args.out)
    print(f"{args.out}: {len(rows)} lines, {sum(r['kind'] == 'split' for r in rows)} split")


if __name__ == "__main__":
    main()
