#!/usr/bin/env python3
"""Regenerate data/dev/typos/*.tsv and data/dev/prose/*.txt from their sources (stdlib only).

Run it through scripts/make_dev_data.sh, which fetches the sources and builds the lexicon first;
data/README.md says where each file comes from and under which licence. Deterministic: the same
sources give the same bytes.

  --lexicon FILE     .deps/lexicon/en.tsv (typo pairs are kept only if the correction is in it)
  --codespell FILE   codespell 2.4.3's codespell_lib/data/dictionary.txt
  --brotli-sdist F   brotli-1.2.1.tar.gz (tests/testdata/alice29.txt and lcet10.txt)
  --pydoc DIR        the Python 3.11 HTML documentation (Debian python3.11-doc)
  --crates DIR       cargo's registry source folder (~/.cargo/registry/src/index.crates.io-*)
  --out DIR          the repository's data/dev
"""
import argparse
import collections
import html
import os
import random
import re
import sys
import tarfile
import unicodedata

SEED = 20240611
TARGET_BYTES = 45_000  # per prose file

# Crates whose README / CHANGELOG text goes into the documentation and changelog files. All are
# MIT or Apache-2.0 (checked against Cargo.toml's `license` at run time). Versions are those of
# Laya's Cargo.lock; `cargo fetch` puts them in the registry folder.
README_CRATES = ["regex-1.13.2", "proptest-1.12.0", "tracing-0.1.44", "nom-7.1.3", "rayon-1.12.0",
                 "ropey-1.6.1", "darling-0.21.3", "parking_lot-0.12.5", "sharded-slab-0.1.7",
                 "static_assertions-1.1.0", "derive_builder-0.20.2", "rustix-1.1.6",
                 "fancy-regex-0.14.0", "aho-corasick-1.1.5", "memchr-2.8.3", "anyhow-1.0.105",
                 "thiserror-2.0.21", "clap-4.6.9", "itertools-0.14.0", "indexmap-2.14.2",
                 "tempfile-3.27.0", "once_cell-1.21.4", "half-2.7.1", "getrandom-0.4.3"]
CHANGELOG_CRATES = ["regex-1.13.2", "rand-0.9.5", "log-0.4.35", "proptest-1.12.0", "tracing-0.1.44",
                    "itertools-0.14.0", "bitflags-2.13.2", "hashbrown-0.17.2", "rayon-1.12.0",
                    "indexmap-2.14.2", "ropey-1.6.1", "tempfile-3.27.0", "bytes-1.12.2",
                    "once_cell-1.21.4", "parking_lot-0.12.5", "half-2.7.1", "getrandom-0.4.3",
                    "nom-7.1.3", "darling-0.21.3", "strsim-0.11.1"]
PERMISSIVE = {"MIT", "Apache-2.0", "OR", "AND", "Unlicense", "Zlib", "BSD-3-Clause", "BSD-2-Clause",
              "/", "(", ")", "WITH", "LLVM-exception", "Apache-2.0/MIT", "MIT/Apache-2.0", "Unicode-3.0"}
PYDOC_TUTORIAL = ["appetite", "interpreter", "introduction", "controlflow", "datastructures",
                  "modules", "inputoutput", "errors", "classes", "stdlib", "stdlib2", "venv",
                  "whatnow", "interactive", "floatingpoint"]


def norm(text):
    """NFC; typographic apostrophes and double quotes to ASCII; whitespace runs to one space."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u00a0", " ").replace("\u00b6", "")
    return re.sub(r"\s+", " ", text).strip()


def write_paragraphs(path, paras, misspellings, limit=TARGET_BYTES):
    """Writes paragraphs up to `limit` bytes, leaving out repeats and any paragraph that holds a
    known misspelling (the sources have a few: "unavailble"), so that the prose is clean text."""
    out, size, seen = [], 0, set()
    skipped = 0
    for p in paras:
        if p in seen:
            continue
        if any(w.lower() in misspellings for w in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", p)):
            skipped += 1
            continue
        seen.add(p)
        b = len(p.encode("utf-8")) + 2
        if size + b > limit:
            break
        out.append(p)
        size += b
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n\n".join(out) + "\n")
    return len(out), size, skipped


def proseish(p, min_words=8):
    words = p.split()
    if len(words) < min_words:
        return False
    if re.search(r"https?://|www\.|\.(com|org|io|rs)\b|```|[{}<>\\]|::|=>|->|&&|\|\|", p):
        return False
    if words[0] in ("in", "and", "or", "to", "the", "of", "for", "with", "but", "a", "an", "is", "are"):
        return False  # the tail of a paragraph whose head was dropped
    letters = sum(ch.isalpha() or ch.isspace() for ch in p)
    return letters / len(p) >= 0.88 and p[-1] in ".!?\"'"


# ---- typos -------------------------------------------------------------------------------------
def make_typos(codespell, lexicon, out_dir):
    lex = {}
    with open(lexicon, encoding="utf-8") as f:
        for i, line in enumerate(f):
            w, c = line.rstrip("\n").split("\t")
            lex[w] = i  # rank
    lex_lower = {w.lower() for w in lex}
    stats = collections.Counter()
    pairs = []
    with open(codespell, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if "->" not in line:
                continue
            typo, _, rhs = line.partition("->")
            alts = [a.strip() for a in rhs.split(",") if a.strip()]
            stats["entries"] += 1
            single = [a for a in alts if " " not in a and "-" not in a]
            if not single:
                stats["dropped: multi-word correction"] += 1
                continue
            if len(single) > 1:
                stats["dropped: several one-word corrections"] += 1
                continue
            correct = single[0]
            if not re.fullmatch(r"[a-z]+(?:'[a-z]+)?", typo):
                stats["dropped: typo not lowercase letters"] += 1
                continue
            if correct not in lex:
                stats["dropped: correction not in lexicon"] += 1
                continue
            if correct == typo + "g":
                stats["dropped: informal g-dropping (chasin)"] += 1
                continue
            if typo in lex_lower:
                stats["dropped: typo is itself a lexicon word"] += 1
                continue
            pairs.append((typo, correct, lex[correct]))
    # One pair per correct word (the file lists every inflection of a misspelled stem), chosen by a
    # seeded shuffle; then split at lexicon rank 20,000 into common and rare words.
    rng = random.Random(SEED)
    rng.shuffle(pairs)
    by_correct = {}
    for t, c, r in pairs:
        by_correct.setdefault(c, (t, c, r))
    stats["pairs kept after one-per-correction"] = len(by_correct)
    stats["pool: correction in the lexicon's top 20,000"] = sum(1 for p in by_correct.values() if p[2] < 20000)
    common = sorted((p for p in by_correct.values() if p[2] < 20000), key=lambda p: p[0])
    rare = sorted((p for p in by_correct.values() if p[2] >= 20000), key=lambda p: p[0])
    common = sorted(rng.sample(common, min(1200, len(common))), key=lambda p: p[0])
    rare = sorted(rng.sample(rare, min(800, len(rare))), key=lambda p: p[0])
    os.makedirs(out_dir, exist_ok=True)
    for name, rows in (("codespell-common.tsv", common), ("codespell-rare.tsv", rare)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
            for t, c, _ in rows:
                f.write(f"{t}\t{c}\n")
        print(f"  typos/{name}: {len(rows)} pairs")
    for k, v in sorted(stats.items()):
        print(f"    {k}: {v}")
    return stats


# ---- prose: Alice ------------------------------------------------------------------------------
def fix_alice_quotes(p):
    """The Millennium Fulcrum text opens quotes with ` and closes them with '."""
    out, open_q = [], False
    for i, ch in enumerate(p):
        if ch == "`":
            out.append('"')
            open_q = True
        elif ch == "'" and open_q:
            prev = p[i - 1] if i else " "
            nxt = p[i + 1] if i + 1 < len(p) else " "
            if prev.isalpha() and nxt.isalpha():
                out.append("'")  # apostrophe inside a word
            else:
                out.append('"')
                open_q = False
        else:
            out.append(ch)
    return "".join(out)


def alice_paragraphs(text):
    start = text.index("CHAPTER I")
    for block in re.split(r"\n\s*\n", text[start:]):
        lines = block.split("\n")
        if any(l.startswith("    ") for l in lines if l.strip()):
            continue  # verse, headings, "* * *"
        if re.match(r"\s*CHAPTER [IVX]+", block):
            continue
        joined = re.sub(r"(?<=\w)-\s*\n\s*(?=\w)", "-", "\n".join(l.strip() for l in lines))
        p = norm(fix_alice_quotes(joined))
        p = re.sub(r"\s*--+\s*", "\u2014", p)
        if len(p.split()) >= 6:
            yield p


# ---- prose: LoC workshop -------------------------------------------------------------------------
LCET_ACRONYMS = {"LC", "OCLC", "RLIN", "SGML", "ASCII", "OCR", "CD", "ROM", "USMARC", "MARC", "AAP",
                 "NEH", "NSF", "CNI", "ARL", "OJCCT", "TEI", "DTD", "DTDS", "II", "III", "IV", "VI",
                 "NLM", "NAL", "NARA", "UVA", "AM", "PC", "IBM", "UNIX", "DOS", "TIFF", "JPEG", "CCITT",
                 "NREN", "PDF", "RLG", "CLR", "AI", "UK", "US", "USA", "IT", "NTSC", "DEC", "MIT",
                 "ADS", "CPU", "OTA", "ERIC", "NAS", "EPA", "GPO", "OSTI", "DOE", "NASA", "SDI", "EIT",
                 "NCSA", "CMU", "IEEE", "ANSI", "ISO", "NISO", "BBS", "ACLS", "MLA", "OED", "TLG",
                 "CETH", "CCAT", "HTML", "RAM", "DAT", "WORM", "GIF", "DPI", "LAN", "WAN", "PLD", "PHI",
                 "ARTFL", "POB"}


def lcet_paragraphs(text, lexicon_words):
    start = text.index("INTRODUCTION", text.index("TABLE OF CONTENTS") + 2000)
    for block in re.split(r"\n\s*\n", text[start:]):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines or any(l.startswith(" ") for l in lines):
            continue  # indented: lists, quotations, headings
        p = norm(" ".join(lines))
        if p.upper() == p or re.search(r"\+\+|\|", p):
            continue

        def fix(m):  # the proceedings set speakers' surnames in capitals: "Marybeth PETERS"
            w = m.group(0)
            if w in LCET_ACRONYMS or w in lexicon_words:
                return w
            return w[0] + w[1:].lower()
        p = re.sub(r"\b[A-Z]{3,}\b", fix, p)
        p = re.sub(r"\s*--\s*", "\u2014", p)
        p = re.sub(r"\(\d+\)", "", p)  # footnote marks
        if proseish(p, 10):
            yield p


# ---- prose: Python tutorial --------------------------------------------------------------------
def pydoc_paragraphs(root):
    for page in PYDOC_TUTORIAL:
        with open(os.path.join(root, "tutorial", page + ".html"), encoding="utf-8") as f:
            s = f.read()
        body = s[s.index('<div class="body"'):]
        body = body[:body.index('<div class="sphinxsidebar"')] if '<div class="sphinxsidebar"' in body else body
        body = re.sub(r"<(pre|table)\b.*?</\1>", " ", body, flags=re.S)
        body = re.sub(r'<p class="admonition-title">.*?</p>', " ", body, flags=re.S)
        body = re.sub(r'<span class="target".*?</span>', " ", body, flags=re.S)
        for m in re.finditer(r"<p>(.*?)</p>", body, re.S):
            inner = m.group(1)
            if "footnote" in inner:
                continue
            inner = re.sub(r'<a class="footnote-reference.*?</a>', "", inner, flags=re.S)
            codes = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<code[^>]*>(.*?)</code>", inner, re.S)]
            if any(re.search(r"[^\w.() ,'-]", c) for c in codes):
                continue  # code beyond plain identifiers: not prose
            p = norm(html.unescape(re.sub(r"<[^>]+>", "", inner)))
            if proseish(p, 10):
                yield p


# ---- prose: crate READMEs and changelogs -------------------------------------------------------
def md_to_blocks(md):
    md = re.sub(r"<!--.*?-->", " ", md, flags=re.S)
    md = re.sub(r"^\s*(```|~~~).*?^\s*(```|~~~)\s*$", "\n", md, flags=re.S | re.M)
    blocks = []
    md = re.sub(r"^[^\n]*\n[=-]{3,}\s*$", "\n", md, flags=re.M)  # setext headings
    for block in re.split(r"\n\s*\n", md):
        lines = block.split("\n")
        items, cur = [], []
        for l in lines:
            if re.match(r"\s{0,3}([-*+]|\d+\.)\s+", l):  # a new list item
                if cur:
                    items.append(cur)
                cur = [re.sub(r"^\s{0,3}([-*+]|\d+\.)\s+", "", l)]
            elif re.match(r"\s{4,}\S", l) and not cur:
                cur = None  # indented code
                break
            else:
                cur.append(l)
        if cur is None:
            continue
        if cur:
            items.append(cur)
        for it in items:
            blocks.append(" ".join(x.strip() for x in it))
    return blocks


def md_inline(p):
    if re.match(r"\s*(#|\||\[[^\]]+\]:|<|!\[)", p):
        return ""
    p = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", p)                     # images, badges
    p = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", p)                  # [text](url)
    p = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", p)                 # [text][ref]
    p = re.sub(r"\(\s*\[?#\d+\]?\s*(,\s*\[?#\d+\]?\s*)*\)", "", p)  # (#123), ([#1], [#2])
    p = re.sub(r"\[([^\]]+)\]", r"\1", p)                           # [text]
    if any(re.search(r"[^\w.() ,'-]", c) for c in re.findall(r"`([^`]*)`", p)):
        return ""  # code beyond plain identifiers: not prose
    p = re.sub(r"`([^`]*)`", r"\1", p)                              # `code`
    p = re.sub(r"(\*\*|__)(.+?)\1", r"\2", p)
    p = re.sub(r"(?<![\w*])[*_](\S.*?\S|\S)[*_](?![\w*])", r"\1", p)
    p = re.sub(r"<[^>]+>", "", p)
    p = re.sub(r"\s*\bby @[\w-]+\b", "", p)
    p = re.sub(r"\s+([.,;:])(?=\s|$)", r"\1", p)
    p = re.sub(r"^#\d+:\s*", "", p)  # "#1400: Fix ..."
    return norm(html.unescape(p))


def crate_dir(crates, name):
    d = os.path.join(crates, name)
    if not os.path.isdir(d):
        sys.exit(f"make_dev_data: {d} is missing (run `cargo fetch` in the repository)")
    with open(os.path.join(d, "Cargo.toml"), encoding="utf-8") as f:
        m = re.search(r'^license\s*=\s*"([^"]+)"', f.read(), re.M)
    lic = m.group(1) if m else "?"
    if not set(re.findall(r"[\w.-]+|[()/]", lic)) <= PERMISSIVE:
        sys.exit(f"make_dev_data: {name} has licence {lic!r}, not a permissive one")
    return d


def crate_paragraphs(crates, names, kinds, per_crate):
    """Round-robin over crates so that each one adds a little, up to per_crate bytes each."""
    streams = []
    for name in names:
        d = crate_dir(crates, name)
        files = [f for f in sorted(os.listdir(d)) if re.match(kinds, f, re.I)]
        if not files:
            continue
        with open(os.path.join(d, files[0]), encoding="utf-8") as f:
            md = f.read()
        paras = [p for p in (md_inline(b) for b in md_to_blocks(md)) if p and proseish(p)]
        paras = [p for p in paras if not re.search(
            r"\b(Licensed under|license, shall be|dual licensed|Apache License|Keep a Changelog|"
            r"Semantic Versioning|notable changes to this project)\b", p)]
        streams.append((name, paras))
    budget = {n: per_crate for n, _ in streams}
    i = 0
    while any(ps for _, ps in streams):
        name, ps = streams[i % len(streams)]
        i += 1
        if ps and budget[name] > 0:
            p = ps.pop(0)
            budget[name] -= len(p) + 2
            yield p
        elif ps:
            ps.clear()


def main():
    ap = argparse.ArgumentParser()
    for a in ("--lexicon", "--codespell", "--brotli-sdist", "--pydoc", "--crates", "--out"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()

    print("make_dev_data:")
    make_typos(args.codespell, args.lexicon, os.path.join(args.out, "typos"))

    with open(args.lexicon, encoding="utf-8") as f:
        lexicon_words = {l.split("\t", 1)[0] for l in f}
    with tarfile.open(args.brotli_sdist) as t:
        alice = t.extractfile("brotli-1.2.1/tests/testdata/alice29.txt").read().decode("latin-1")
        lcet = t.extractfile("brotli-1.2.1/tests/testdata/lcet10.txt").read().decode("latin-1")
    prose = os.path.join(args.out, "prose")
    os.makedirs(prose, exist_ok=True)
    outputs = [
        ("fiction-alice.txt", alice_paragraphs(alice)),
        ("essay-loc-workshop.txt", lcet_paragraphs(lcet, lexicon_words)),
        ("docs-python-tutorial.txt", pydoc_paragraphs(args.pydoc)),
        ("docs-rust-readmes.txt", crate_paragraphs(args.crates, README_CRATES, r"readme", 3000)),
        ("changelog-rust-crates.txt", crate_paragraphs(args.crates, CHANGELOG_CRATES,
                                                        r"(changelog|changes|releases)", 3000)),
    ]
    with open(args.codespell, encoding="utf-8") as f:
        lex_lower = {w.lower() for w in lexicon_words}
        misspellings = {l.split("->", 1)[0].strip().lower() for l in f if "->" in l} - lex_lower
    for name, paras in outputs:
        n, size, skipped = write_paragraphs(os.path.join(prose, name), paras, misspellings)
        print(f"  prose/{name}: {n} paragraphs, {size} bytes ({skipped} with a known misspelling left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
