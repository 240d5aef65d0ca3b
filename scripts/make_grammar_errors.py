#!/usr/bin/env python3
"""Make data/dev/context/grammar-errors.jsonl: agreement and verb-form slips in context (stdlib only).

The lines are make_context_errors.py's (same fields, same chunks of the English prose files), with
one slip of grammar put into each line that is not clean, of the kinds real typos in technical
prose are made of (issue 25) and confusion sets do not hold:
  "subject":     "it returns" -> "it return" (he/she/it with a verb's -s form dropped)
  "modal":       "will return" -> "will returns" / "can use" -> "can used"
  "participle":  "is used" -> "is use", "has shown" -> "has show"
  "determiner":  "each line" -> "each lines", "several files" -> "several file"
Every slip is made only where the form it leaves is a lexicon word (a real-word slip), and the
first letter's case is kept. These are the contexts `server/decide/src/verbs.rs` and
`slips::agreement_forms` ask about, so the set measures whether the model tells the slip from the
meant form there and what that costs on clean text, not how often writers' slips fall in those
contexts: `typo-fixes.jsonl` (real typos) is the measure for that.

Seeded and deterministic:
  scripts/make_grammar_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
      --out data/dev/context/grammar-errors.jsonl
"""
import argparse
import collections
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_context_errors import WORD_RE, english_prose, match_case, sample_lines, write_rows  # noqa: E402

SEED = 4242
PER_FILE = 30
SHARE_CLEAN = 1 / 3
MIN_COUNT = 200  # a form rarer than this in the lexicon's counts is not used

MODALS = {"can", "could", "will", "would", "should", "must", "may", "might"}
BE_HAVE = {"is", "are", "was", "were", "be", "been", "has", "have", "had"}
THIRD = {"he", "she", "it"}
SINGULAR_DET = {"a", "an", "each", "every", "this", "another"}
PLURAL_DET = {"these", "those", "several", "multiple", "many", "both", "various"}
IRREGULAR_PARTICIPLES = {
    "shown": "show", "written": "write", "given": "give", "taken": "take", "seen": "see", "known": "know",
    "done": "do", "made": "make", "found": "find", "built": "build", "sent": "send", "held": "hold",
    "kept": "keep", "left": "leave", "meant": "mean", "brought": "bring", "thought": "think",
    "taught": "teach", "caught": "catch", "chosen": "choose", "broken": "break", "spoken": "speak",
    "driven": "drive", "fallen": "fall", "forgotten": "forget", "hidden": "hide", "thrown": "throw",
    "grown": "grow", "drawn": "draw", "told": "tell", "sold": "sell", "lost": "lose", "paid": "pay",
    "said": "say", "spent": "spend", "felt": "feel", "led": "lead", "bound": "bind", "begun": "begin",
    "gotten": "get", "gone": "go", "eaten": "eat", "understood": "understand",
}


def strip_s(w):
    """Base forms a word ending in -s may have: returns -> return, matches -> match, copies -> copy."""
    out = []
    if w.endswith("ies"):
        out.append(w[:-3] + "y")
    if w.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        out.append(w[:-2])
    if w.endswith("s") and not w.endswith("ss"):
        out.append(w[:-1])
    return out


def add_s(w):
    if w.endswith(("ch", "sh", "s", "x", "z", "o")):
        return w + "es"
    if w.endswith("y") and w[-2:-1] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


def base_of_participle(w):
    if w in IRREGULAR_PARTICIPLES:
        return [IRREGULAR_PARTICIPLES[w]]
    if not w.endswith("ed"):
        return []
    stem = w[:-2]
    # "used" is "use" + d, not "us" + ed: the longer base first.
    out = [stem + "e"]
    if w.endswith("ied"):
        out.append(w[:-3] + "y")
    if len(stem) >= 2 and stem[-1] == stem[-2]:
        out.append(stem[:-1])
    out.append(stem)
    return out


# A noun is the word before one of these or before punctuation: "a mutex, runs", "each file
# in"; the word right after a determiner is otherwise often an adjective ("a large part").
AFTER_NOUN = {"of", "that", "which", "is", "was", "are", "were", "in", "to", "for", "with", "on", "from", "by", "has", "have", "will"}
# Words after a modal that are not its verb ("can you", "could not") or whose -s form is no slip.
NOT_VERBS = {"not", "you", "we", "they", "i", "he", "she", "it", "still", "also", "only", "always", "never", "have", "be", "then", "now", "just", "even"}


def ends_noun_phrase(text, toks, k):
    e = toks[k][1]
    if k + 1 == len(toks):
        return False
    return text[e:toks[k + 1][0]] == " " and toks[k + 1][2].lower() in AFTER_NOUN


def slips(text, toks, known, count):
    """(kind, index of the word, the slip) for every place in a chunk where a slip can be made."""
    out = []
    for k in range(1, len(toks)):
        (ps, pe, prev), (s, e, w) = toks[k - 1], toks[k]
        p, lw = prev.lower(), w.lower()
        if text[pe:s] != " " or not w.islower() or len(w) < 3:
            continue

        def ok(form):
            return form != lw and form in known and count.get(form, 0) >= MIN_COUNT

        if p in THIRD and len(w) >= 4:
            for b in strip_s(lw):
                if ok(b) and add_s(b) == lw:
                    out.append(("subject", k, b))
                    break
        if p in MODALS and lw in known and lw not in NOT_VERBS and not lw.endswith(("s", "ed", "ing")):
            for f in (add_s(lw), lw + "d" if lw.endswith("e") else lw + "ed"):
                if ok(f):
                    out.append(("modal", k, f))
                    break
        if p in BE_HAVE:
            for b in base_of_participle(lw):
                if ok(b):
                    out.append(("participle", k, b))
                    break
        if p in (SINGULAR_DET | PLURAL_DET) and not ends_noun_phrase(text, toks, k):
            continue
        if p in SINGULAR_DET and not lw.endswith("s") and len(w) >= 4 and ok(add_s(lw)):
            out.append(("determiner", k, add_s(lw)))
        if p in PLURAL_DET and len(w) >= 4:
            for b in strip_s(lw):
                if ok(b) and add_s(b) == lw:
                    out.append(("determiner", k, b))
                    break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prose", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    count = {}
    with open(args.lexicon, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[1].isdigit():
                count[parts[0]] = count.get(parts[0], 0) + int(parts[1])
    known = set(count)

    rng = random.Random(SEED)
    kinds = collections.Counter()

    def slip(text):
        toks = [(m.start(), m.end(), m.group(0)) for m in WORD_RE.finditer(text)]
        found = slips(text, toks, known, count)
        if not found:
            return None
        # The kind used least so far, so that each is represented.
        least = min(kinds[k] for k, _, _ in found)
        sk, k, form = rng.choice([x for x in found if kinds[x[0]] == least])
        s, e, w = toks[k]
        err = match_case(w, form)
        kinds[sk] += 1
        return dict(text=text[:s] + err + text[e:], start=s, end=s + len(err), error=err, correct=w, kind=sk)

    rows = sample_lines(args.prose, rng, PER_FILE * len(english_prose(args.prose)), SHARE_CLEAN, "slip", slip)
    write_rows(rows, args.out)
    print(f"make_grammar_errors: wrote {args.out}: {len(rows)} lines ({dict(sorted(kinds.items()))}, "
          f"clean {sum(1 for r in rows if r['kind'] == 'clean')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
