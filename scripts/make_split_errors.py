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
import random
import re

from make_context_errors import WORD_RE, sample_lines, write_rows

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

    def split(text):
        toks = [
            (m.start(), m.end(), m.group(0))
            for m in WORD_RE.finditer(text)
            if PLAIN.fullmatch(m.group(0)) and (m.group(0).islower() or m.group(0)[1:].islower()) and splits(m.group(0))
        ]
        if not toks:
            return None
        s, e, word = rng.choice(toks)
        k = rng.choice(splits(word))
        two = f"{word[:k]} {word[k:]}"
        return dict(text=text[:s] + two + text[e:], start=s, end=s + len(two), error=two, correct=word)

    rng = random.Random(SEED)
    rows = sample_lines(args.prose, rng, N_LINES, SHARE_CLEAN, "split", split)
    write_rows(rows, args.out)
    print(f"{args.out}: {len(rows)} lines, {sum(r['kind'] == 'split' for r in rows)} split")


if __name__ == "__main__":
    main()
