#!/usr/bin/env python3
"""Build Laya's English lexicon: `word<TAB>count`, most frequent first (python3 stdlib only).

Inputs (fetched by scripts/lexicon.sh, see data/README.md for origins and licences):
  --symspell FILE  SymSpell's frequency_dictionary_en_82_765.txt (symspellpy wheel, MIT): 82,765
                   lowercase words with counts (Google Web 1T unigram counts filtered by SCOWL).
  --scowl DIR      SCOWL's split word lists (Debian package `scowl`, /usr/share/dict/scowl):
                   names like english-words.35, english-upper.50, american-proper-names.60 ...
                   Used for the case of each word (Paris, NASA, I, eBay) and to add the valid SCOWL
                   words (size <= 60) that the truncated SymSpell list lacks. Optional: without it the
                   lexicon is SymSpell alone, all lowercase (a warning says so).
  --corpus-html DIR / --corpus-text FILE  cased running text (the Python 3.11 documentation and
                   "Alice's Adventures in Wonderland") used for two estimates that the lowercase
                   counts cannot give: how a count splits between a lowercase word and its cased
                   twin (bill/Bill, may/May, us/US), and the counts of contractions (SymSpell gives
                   every contraction the same placeholder 300,000 because the Web 1T tokenizer split
                   words at apostrophes). Optional; without it, fixed SCOWL-level heuristics are used.
  --terms DIR      a folder of CSpell word lists (@cspell/dict-software-terms, -python, -rust, ...;
                   npm, MIT): one word per line, `#` comments, `!`/`*`/`+`/`~` markers. Their plain
                   words that the lexicon lacks are added at TERMS_COUNT, below every SCOWL word, so
                   they are known but never outrank a dictionary word as a suggestion. Repeatable.
  --misspellings FILE  codespell's dictionary.txt (`typo->fix`): a term that codespell lists as a
                   misspelling is not added ("homogenous").

Output: UTF-8 (NFC), one `word<TAB>count` per line, sorted by count descending then word; words
keep their case (Paris, NASA, I, I'm, eBay); a lowercase entry exists wherever SCOWL lists the
lowercase word. Apostrophes are ASCII U+0027. Possessives ("Paris's", "dog's") are left out:
callers strip a trailing 's/' before lookup; contractions (it's, don't, I'm, o'clock) are in.

Idempotent: a stamp next to the output records this script's hash and --stamp; if both match,
nothing is rebuilt.
"""
import argparse
import collections
import hashlib
import html
import math
import os
import re
import sys
import unicodedata

# SCOWL size levels, most common first. 60 is SCOWL's recommended size for spell checking.
LEVELS = [10, 20, 35, 40, 50, 55, 60, 70, 80, 95]
MAX_NEW_LEVEL = 60      # SCOWL words missing from SymSpell are added up to this size
MAX_CASE_LEVEL = 70     # case variants are looked up up to this size (95 holds odd forms: "i'm")
# Spellings used (Australian lists are left out: at small sizes they hold slang like "Straya").
SPELLINGS = ("english", "american", "british", "british_z", "canadian",
             "variant_1", "british_variant_1", "canadian_variant_1")
KINDS = ("words", "upper", "proper-names", "abbreviations", "contractions")
EXTRA_LISTS = ("special-hacker",)  # computing words: "ASCII", "URL", "Linux"

# Counts for SCOWL words absent from SymSpell. SymSpell kept the ~82k most frequent words, whose
# smallest count is 12,714, so every absent word is below that: fill in by SCOWL size.
FLOOR_BY_LEVEL = {10: 12000, 20: 11000, 35: 10000, 40: 9000, 50: 8000, 55: 6000, 60: 5000}
CONTRACTION_PLACEHOLDER = 300000
MIN_CORPUS_EVIDENCE = 20   # corpus occurrences (not sentence-initial) before the corpus decides a split
MIN_CONTRACTION_HITS = 5
SCOWL_ONLY_CAP = 10_000_000  # about the 8,000th word
TERMS_COUNT = 3000  # technical terms (--terms): below FLOOR_BY_LEVEL's smallest
TERM_RE = re.compile(r"[A-Za-z][A-Za-z']*[A-Za-z]")

WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*", re.UNICODE)
SENTENCE_GAP_RE = re.compile(r"[.!?:;\"'\u201c(\[*#>|]")


def nfc(s):
    return unicodedata.normalize("NFC", s)


def read_lines(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return [nfc(l.strip()) for l in text.splitlines() if l.strip()]


def load_symspell(path):
    counts = {}
    for line in read_lines(path):
        parts = line.split()
        if len(parts) != 2:
            continue
        w, c = parts[0], int(parts[1])
        counts[w] = max(counts.get(w, 0), c)  # the file repeats a few words
    return counts


def load_scowl(d):
    """form -> (level, kind) with the smallest level where the form appears."""
    best = {}
    names = [f"{sp}-{k}" for sp in SPELLINGS for k in KINDS] + list(EXTRA_LISTS)
    for fn in sorted(os.listdir(d)):
        name, _, lvl = fn.rpartition(".")
        if name not in names or not lvl.isdigit():
            continue
        lvl = int(lvl)
        if lvl > max(LEVELS):
            continue
        kind = name.split("-", 1)[1]
        for w in read_lines(os.path.join(d, fn)):
            if w.endswith("'s") or w.endswith("s'") and len(w) > 2:
                continue  # possessives
            if w not in best or best[w][0] > lvl:
                best[w] = (lvl, kind)
    return best


# US spellings and their British twins, as SCOWL lists them ("harbor" and "harbour"): SymSpell's
# list lacks a couple of hundred of the US forms whose British twin it has with a large count.
TWIN_RULES = (("our", "or"), ("re", "er"), ("res", "ers"), ("ise", "ize"), ("isation", "ization"),
              ("yse", "yze"), ("ogue", "og"), ("ence", "ense"), ("ll", "l"))


def load_spelling(d, spelling):
    """The lowercase words of one of SCOWL's spellings ("american", "british"), every size."""
    words = set()
    for fn in sorted(os.listdir(d)):
        name, _, lvl = fn.rpartition(".")
        if name == f"{spelling}-words" and lvl.isdigit():
            words.update(w.lower() for w in read_lines(os.path.join(d, fn)))
    return words


def british_twin(us, british, sym):
    """The British form of a US-only word that SymSpell counts ("harbor" -> "harbour",
    "traveler" -> "traveller", "kilometers" -> "kilometres"), or None."""
    for uk, us_part in TWIN_RULES:
        at = us.find(us_part)
        while at >= 0:
            twin = us[:at] + uk + us[at + len(us_part):]
            if twin in british and twin in sym:
                return twin
            at = us.find(us_part, at + 1)
    return None


# ---- cased corpus ------------------------------------------------------------------------------
P_RE = re.compile(r"<(p)\b[^>]*>(.*?)</\1>", re.S | re.I)  # paragraphs only: lists hold link titles
DROP_RE = re.compile(r"<(pre|table|script|style)\b.*?</\1>", re.S | re.I)
TAG_RE = re.compile(r"<[^>]+>")


def corpus_paragraphs_html(root):
    for dp, dn, fn in os.walk(root):
        dn[:] = sorted(d for d in dn if not d.startswith("_"))
        for f in sorted(fn):
            if not f.endswith(".html") or f in ("genindex.html", "py-modindex.html", "search.html"):
                continue
            with open(os.path.join(dp, f), encoding="utf-8", errors="replace") as fh:
                s = DROP_RE.sub(" ", fh.read())
            for m in P_RE.finditer(s):
                yield html.unescape(TAG_RE.sub("", m.group(2)))


def corpus_paragraphs_text(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read().replace("`", "'")
    for para in re.split(r"\n\s*\n", text):
        yield para


def count_corpus(paragraphs):
    """Returns (non-initial cased counts, all-position lowercased counts)."""
    cased = collections.Counter()
    folded = collections.Counter()
    for para in paragraphs:
        para = nfc(para).replace("\u2019", "'").replace("\u2018", "'")
        prev_end = 0
        for m in WORD_RE.finditer(para):
            # Sentence-initial (or quote-, heading-initial) words are capitalized whatever they
            # are: they say nothing about case, so they only count in `folded`.
            initial = prev_end == 0 or SENTENCE_GAP_RE.search(para, prev_end, m.start()) is not None
            w = m.group(0)
            folded[w.lower()] += 1
            if not initial:
                cased[w] += 1
            prev_end = m.end()
    return cased, folded


# ---- case split --------------------------------------------------------------------------------
def load_terms(dirs, misspellings):
    """Plain words of the CSpell lists in `dirs` (sorted), less codespell's misspellings."""
    import gzip
    bad = set()
    if misspellings:
        for line in read_lines(misspellings):
            if "->" in line:
                bad.add(line.split("->", 1)[0].strip().lower())
    words = {}  # lowercase -> the form kept
    for d in dirs:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if name.endswith(".txt.gz"):
                with gzip.open(path, "rt", encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            elif name.endswith(".txt"):
                lines = read_lines(path)
            else:
                continue
            for line in lines:
                w = nfc(line.strip())
                if TERM_RE.fullmatch(w) and w.lower() not in bad:
                    # One form a word, lowercase where a list has it: "struct" and "config",
                    # not the "STRUCT" and "CONFIG" that sort first. Otherwise the first in
                    # sorted order ("gRPC").
                    kept = words.get(w.lower())
                    if kept is None or (w == w.lower() != kept) or (kept != kept.lower() and w < kept):
                        words[w.lower()] = w
    return sorted(words.values())


def level_index(lvl):
    return LEVELS.index(lvl) if lvl in LEVELS else len(LEVELS)


def heuristic_weights(lower, cased_forms, scowl):
    """Weights for [lower] + cased_forms from SCOWL sizes and kinds alone."""
    li = level_index(scowl[lower][0]) if lower in scowl else len(LEVELS)
    weights = [1.0]
    for f in cased_forms:
        lvl, kind = scowl[f]
        d = li - level_index(lvl)  # > 0: the cased form is in a smaller (more common) list
        if d >= 2:
            share = 0.98
        elif d == 1:
            share = 0.75
        elif d == 0:
            share = 0.3
        elif kind in ("upper",):
            share = 0.1 if d == -1 else 0.03
        elif kind == "proper-names":
            share = 0.05 if d == -1 else 0.02
        else:  # abbreviations, hacker words: "IN", "OR", "IT"
            share = 0.01 if d >= -2 else 0.002
        if kind == "abbreviations" and len(f) <= 2 and f[0].isupper() and f[1:].islower():
            share = 0.002  # chemical symbols: "Be", "He", "In", "Pm", "Cd"
        if kind == "abbreviations" and f.isupper() and d > 0:
            share = 0.5  # "PM"/"pm", "CD"/"cd": both common
        weights.append(share / (1.0 - share))
    return weights


def split_count(total, forms, weights):
    s = sum(weights)
    out = []
    for f, w in zip(forms, weights):
        out.append((f, max(1, int(round(total * w / s)))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--symspell", required=True)
    ap.add_argument("--scowl")
    ap.add_argument("--corpus-html", action="append", default=[])
    ap.add_argument("--corpus-text", action="append", default=[])
    ap.add_argument("--terms", action="append", default=[])
    ap.add_argument("--misspellings")
    ap.add_argument("--out", required=True)
    ap.add_argument("--stamp", default="", help="string naming the inputs (versions); part of the stamp")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--note", default="", help="prefix for the summary line (what the wrapper fetched)")
    args = ap.parse_args()

    with open(os.path.abspath(__file__), "rb") as fh:
        me = hashlib.sha256(fh.read()).hexdigest()[:16]
    stamp = f"{me} {args.stamp} scowl={'yes' if args.scowl else 'no'} corpus={len(args.corpus_html) + len(args.corpus_text)} terms={len(args.terms)}"
    stamp_path = args.out + ".stamp"
    if not args.force and os.path.exists(args.out) and os.path.exists(stamp_path):
        with open(stamp_path, encoding="utf-8") as fh:
            if fh.read().strip() == stamp:
                with open(args.out, encoding="utf-8") as fo:
                    n = sum(1 for _ in fo)
                print(f"lexicon: up to date: {args.out} ({n} entries)")
                return 0

    sym = load_symspell(args.symspell)
    scowl = load_scowl(args.scowl) if args.scowl else {}
    american = load_spelling(args.scowl, "american") if args.scowl else set()
    british = load_spelling(args.scowl, "british") | load_spelling(args.scowl, "british_z") if args.scowl else set()
    if not scowl:
        print("lexicon: warning: no SCOWL lists; the lexicon is SymSpell's, all lowercase", file=sys.stderr)

    cased_c, folded_c = collections.Counter(), collections.Counter()
    for root in args.corpus_html:
        c, f = count_corpus(corpus_paragraphs_html(root))
        cased_c.update(c)
        folded_c.update(f)
    for path in args.corpus_text:
        c, f = count_corpus(corpus_paragraphs_text(path))
        cased_c.update(c)
        folded_c.update(f)
    have_corpus = folded_c["the"] > 1000

    # Group SCOWL forms by lowercase key.
    groups = collections.defaultdict(list)
    for f, (lvl, _) in scowl.items():
        if lvl <= MAX_CASE_LEVEL:
            groups[f.lower()].append(f)
    for k in groups:
        groups[k].sort(key=lambda f: (scowl[f][0], f))
    wide = collections.defaultdict(list)  # every level, for SymSpell words absent at <= 70
    for f, (lvl, _) in scowl.items():
        wide[f.lower()].append(f)

    out = {}
    stats = collections.Counter()

    def emit(word, count):
        out[word] = out.get(word, 0) + count

    keys = set(sym) | {k for k, fs in groups.items() if any(scowl[f][0] <= MAX_NEW_LEVEL for f in fs)}
    for key in sorted(keys):
        forms = groups.get(key) or sorted(wide.get(key, []), key=lambda f: (scowl[f][0], f))
        if key in sym:
            total = sym[key]
            stats["symspell"] += 1
            if "'" in key and total == CONTRACTION_PLACEHOLDER and have_corpus:
                hits = folded_c[key]
                if hits >= MIN_CONTRACTION_HITS:
                    total = max(total, int(round(hits / folded_c["the"] * sym["the"])))
                    stats["contraction estimated"] += 1
            if not forms:
                emit(key, total)
                continue
        else:
            forms = [f for f in forms if scowl[f][0] <= MAX_NEW_LEVEL]
            best_lvl = min(scowl[f][0] for f in forms)
            total = FLOOR_BY_LEVEL[best_lvl]
            stats["scowl only"] += 1
            twin = british_twin(key, british, sym) if key in american else None
            if twin:
                total = max(total, sym[twin])  # the US form is as common as its British twin
                stats["US form, its British twin's count"] += 1
            # SymSpell matched SCOWL's lowercase words only, so it lost acronyms (OK, TV, URL,
            # NASA); the corpus says which of these are common, within a modest cap.
            hits = folded_c[key] if have_corpus and len(key) > 2 else 0  # "x", "kw", "fd": code
            if hits >= MIN_CONTRACTION_HITS:
                est = int(round(hits / folded_c["the"] * sym["the"]))
                if est > total:
                    total = min(est, SCOWL_ONLY_CAP)
                    stats["scowl only, corpus count"] += 1
        lower_present = key in forms
        cased = [f for f in forms if f != key]
        if not cased:
            emit(key, total)
            continue
        if not lower_present and len(cased) == 1:
            emit(cased[0], total)
            stats["cased only"] += 1
            continue
        cand = ([key] if lower_present else []) + cased
        ev = [cased_c[f] for f in cand]
        if have_corpus and sum(ev) >= MIN_CORPUS_EVIDENCE and len(key) > 1:
            weights = [e + 0.5 for e in ev]
            stats["split by corpus"] += 1
        else:
            if lower_present:
                weights = heuristic_weights(key, cased, scowl)
            else:  # several cased forms only (APR/Apr): smaller SCOWL size weighs more
                weights = [2.0 ** -level_index(scowl[f][0]) for f in cased]
            stats["split by heuristic"] += 1
        for f, c in split_count(total, cand, weights):
            emit(f, c)

    # Technical terms the lists above lack, each once whatever its case ("impl", "gRPC").
    known = {w.lower() for w in out}
    for w in load_terms(args.terms, args.misspellings):
        if w.lower() not in known:
            emit(w, TERMS_COUNT)
            known.add(w.lower())
            stats["technical terms"] += 1

    rows = sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fo:
        for w, c in rows:
            fo.write(f"{w}\t{c}\n")
    os.replace(tmp, args.out)
    with open(stamp_path, "w", encoding="utf-8") as fh:
        fh.write(stamp + "\n")
    detail = ", ".join(f"{k} {v}" for k, v in sorted(stats.items()))
    note = f"{args.note}; " if args.note else ""
    print(f"lexicon: {note}wrote {args.out}: {len(rows)} entries ({detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
