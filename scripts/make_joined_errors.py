#!/usr/bin/env python3
"""Make data/dev/context/joined-errors.jsonl: two words typed as one ("alot", "eachother"), in
context, from the prose files (stdlib only), in the format of make_context_errors.py (kind
"joined" or "clean"; `correct` is the two words).

Each file gives the same number of lines, a third of them clean. In the others one pair of
neighbouring words is joined: any two lowercase-led words of letters separated by one space (the
second not capitalized, which would be a name), whose join the lexicon does not know, chosen at
random, with no preference for the joins writers make most or for the ones Laya looks for.

Seeded and deterministic: the same prose gives the same file.
  scripts/make_joined_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
      --out data/dev/context/joined-errors.jsonl
"""
import argparse
import random
import re

from make_context_errors import WORD_RE, sample_lines, write_rows

SEED = 1730
N_LINES = 150
SHARE_CLEAN = 1 / 3
PLAIN = re.compile(r"[A-Za-z]+")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prose", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.lexicon, encoding="utf-8") as f:
        lexicon = {l.split("\t", 1)[0].lower() for l in f}
    def join(text):
        toks = [(m.start(), m.end(), m.group(0)) for m in WORD_RE.finditer(text)]
        pairs = [
            (a, b)
            for a, b in zip(toks, toks[1:])
            if text[a[1]:b[0]] == " "
            and PLAIN.fullmatch(a[2])
            and PLAIN.fullmatch(b[2])
            and b[2].islower()
            and (a[2].islower() or a[2][1:].islower())
            and (a[2] + b[2]).lower() not in lexicon
        ]
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        joined = a[2] + b[2]
        new = text[:a[0]] + joined + text[b[1]:]
        return dict(text=new, start=a[0], end=a[0] + len(joined), error=joined, correct=f"{a[2]} {b[2]}")

    rng = random.Random(SEED)
    rows = sample_lines(args.prose, rng, N_LINES, SHARE_CLEAN, "joined", join)
    write_rows(rows, args.out)
    print(f"{args.out}: {len(rows)} lines, {sum(r['kind'] == 'joined' for r in rows)} joined")


if __name__ == "__main__":
    main()
