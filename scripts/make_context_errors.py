#!/usr/bin/env python3
"""Make data/dev/context/*.jsonl: spelling errors in context, from the prose files (stdlib only).

Each line is one JSON object:
  {"text": str, "start": int|null, "end": int|null, "error": str|null, "correct": str|null,
   "kind": "real-word"|"non-word"|"clean", "source": "<prose file name>"}
`start`/`end` are offsets in Unicode scalar values (Python str indices, not bytes) of the one
erroneous word, and text[start:end] == error. "clean" lines have no injected error (all four fields
null): they measure false alarms. "real-word" errors swap a word for another member of its
confusion set (their -> there); "non-word" errors put a common misspelling in (receive -> recieve).
The first letter's case (and an all-caps word's case) is kept.

Seeded and deterministic: the same prose gives the same file.
  scripts/make_context_errors.py --prose data/dev/prose --out data/dev/context/context-errors.jsonl
"""
import argparse
import collections
import json
import os
import random
import re
import sys

SEED = 1729
N_LINES = 300
SHARE_CLEAN = 1 / 3
SHARE_NONWORD = 0.1
MIN_CHARS, MAX_CHARS = 300, 800

# Real-word confusion sets: homophones, near-homophones and common slips of the keyboard.
CONFUSION_SETS = [
    ("their", "there", "they're"), ("then", "than"), ("its", "it's"), ("your", "you're"),
    ("form", "from"), ("loose", "lose"), ("affect", "effect"), ("to", "too", "two"),
    ("accept", "except"), ("lead", "led"), ("quite", "quiet"), ("were", "where", "we're"),
    ("whose", "who's"), ("lie", "lay"), ("passed", "past"), ("principal", "principle"),
    ("weather", "whether"), ("advice", "advise"), ("breath", "breathe"), ("choose", "chose"),
    ("hear", "here"), ("know", "no"), ("knew", "new"), ("peace", "piece"), ("right", "write"),
    ("threw", "through"), ("weak", "week"), ("of", "off"), ("an", "and"), ("buy", "by"),
    ("whole", "hole"), ("lesson", "lessen"), ("later", "latter"), ("dose", "does"),
    ("sight", "site", "cite"), ("complement", "compliment"), ("desert", "dessert"),
    ("brake", "break"), ("plain", "plane"), ("role", "roll"), ("wander", "wonder"),
    ("bare", "bear"), ("fair", "fare"), ("waist", "waste"), ("allowed", "aloud"),
    ("council", "counsel"), ("stationary", "stationery"), ("personal", "personnel"),
    ("conscience", "conscious"), ("thought", "though"), ("now", "not"), ("wait", "weight"),
    ("which", "witch"), ("tail", "tale"), ("sole", "soul"), ("poor", "pour", "pore"),
    ("discreet", "discrete"), ("precede", "proceed"), ("rain", "reign", "rein"),
    ("access", "excess"), ("adverse", "averse"), ("ensure", "insure"), ("eminent", "imminent"),
    ("male", "mail"), ("meat", "meet"), ("flour", "flower"), ("course", "coarse"),
    ("board", "bored"), ("morning", "mourning"), ("patience", "patients"),
    ("presence", "presents"), ("idle", "idol"), ("dairy", "diary"), ("angel", "angle"),
    ("casual", "causal"), ("lightening", "lightning"), ("moral", "morale"),
    ("trail", "trial"), ("bellow", "below"), ("cloths", "clothes"), ("envelop", "envelope"),
    ("decent", "descent"), ("device", "devise"), ("assent", "ascent"), ("hanger", "hangar"),
]

# Common non-word misspellings (correct -> misspelling): the classic ones, written for this script.
NON_WORD = {
    "receive": "recieve", "separate": "seperate", "definitely": "definately", "occurred": "occured",
    "until": "untill", "which": "wich", "believe": "beleive", "government": "goverment",
    "environment": "enviroment", "accommodate": "accomodate", "achieve": "acheive",
    "address": "adress", "beginning": "begining", "coming": "comming", "existence": "existance",
    "forward": "foward", "friend": "freind", "grammar": "grammer", "happened": "happend",
    "immediately": "immediatly", "independent": "independant", "knowledge": "knowlege",
    "necessary": "neccessary", "noticeable": "noticable", "occurrence": "occurence",
    "possession": "posession", "preferred": "prefered", "recommend": "recomend",
    "referred": "refered", "relevant": "relevent", "successful": "succesful",
    "surprise": "suprise", "tomorrow": "tommorow", "truly": "truely", "weird": "wierd",
    "writing": "writting", "the": "teh", "their": "thier", "because": "becuase", "what": "waht",
    "just": "jsut", "that": "taht", "with": "wiht", "about": "abotu", "would": "woudl",
    "should": "shoudl", "people": "poeple", "different": "diffrent", "probably": "probaly",
    "really": "realy", "language": "langauge", "library": "libary", "argument": "arguement",
    "available": "availble", "interesting": "intresting", "especially": "especialy",
    "experience": "experiance", "business": "buisness", "similar": "similiar",
    "particular": "paticular", "whether": "wether", "familiar": "familar", "length": "lenght",
    "height": "heigth", "field": "feild", "piece": "peice", "character": "charachter",
    "function": "funtion", "return": "retrun", "parameter": "paramter", "message": "mesage",
    "version": "verison", "default": "defualt", "support": "suport", "document": "docuemnt",
    "problem": "probelm", "example": "exmaple", "software": "sofware", "actually": "actualy",
    "usually": "usualy", "basically": "basicly", "finally": "finaly", "beautiful": "beatiful",
    "conscious": "concious", "committee": "commitee", "maintenance": "maintainance",
    "threshold": "threshhold", "original": "orignal", "little": "litle", "again": "agian",
    "another": "anohter", "something": "somthing", "without": "wihtout", "important": "importent",
    "information": "infomation", "question": "quesiton", "remember": "rember",
    "together": "togehter", "thought": "thougth", "around": "aroud", "before": "befroe",
    "curious": "curiuos", "suddenly": "suddenely", "quickly": "quikly", "written": "writen",
    "already": "allready", "always": "allways", "anything": "anythign", "everything": "everyting",
    "strength": "strenght", "separately": "seperately", "efficient": "efficent",
    "performance": "performace", "implement": "implment",
}

WORD_RE = re.compile(r"(?<![\w'\-.])[A-Za-z]+(?:'[A-Za-z]+)?(?![\w'\-])")
SENT_RE = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(A-Z])")


def chunks(path):
    """Runs of whole sentences, MIN_CHARS..MAX_CHARS long; may span paragraphs (joined by \\n\\n)."""
    with open(path, encoding="utf-8") as f:
        paras = [p.strip() for p in f.read().split("\n\n") if p.strip()]
    cur = ""
    for para in paras:
        sep = "\n\n"
        for sent in SENT_RE.split(para):
            sent = sent.strip()
            if not sent:
                continue
            cand = (cur + sep + sent) if cur else sent
            sep = " "
            if len(cand) > MAX_CHARS:
                cur = sent if len(sent) <= MAX_CHARS else ""
                if len(cur) >= MIN_CHARS:
                    yield cur
                    cur = ""
                continue
            cur = cand
            if len(cur) >= MIN_CHARS:
                yield cur
                cur = ""


def match_case(template, word):
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[0].isupper():
        return word[0].upper() + word[1:]
    return word


def english_prose(folder):
    """The English prose files of `folder`, sorted: its .txt files but the Chinese one (zh-*)."""
    return sorted(f for f in os.listdir(folder) if f.endswith(".txt") and not f.startswith("zh-"))


def sample_lines(prose, rng, n_lines, share_clean, kind, make):
    """Lines of each English prose file of `prose`, as many from each, a `share_clean` of them
    clean and the others of `kind`: `make(text)` gives the row of an error put into `text`, or
    None where it cannot (the next chunk is tried). Rows carry their kind (`kind`, unless `make`
    names a finer one) and source file."""
    files = english_prose(prose)
    per_file = n_lines // len(files)
    n_clean = round(per_file * share_clean)
    rows = []
    for name in files:
        pool = list(chunks(os.path.join(prose, name)))
        rng.shuffle(pool)
        want = ["clean"] * n_clean + [kind] * (per_file - n_clean)
        rng.shuffle(want)
        for k in want:
            row = None
            while pool and row is None:
                text = pool.pop()
                if k == "clean":
                    row = dict(text=text, start=None, end=None, error=None, correct=None)
                else:
                    row = make(text)
            if row is None:
                raise SystemExit(f"{name}: ran out of text for {k} lines")
            row.setdefault("kind", k)
            row["source"] = name
            rows.append(row)
    return rows


def write_rows(rows, out):
    """Checks that each row's offsets span its error, then writes the rows as JSON lines."""
    for r in rows:
        if r["error"] is not None:
            assert r["text"][r["start"]:r["end"]] == r["error"], r
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prose", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lexicon", help="optional: misspellings that are lexicon words are skipped")
    ap.add_argument("--lines", type=int, default=N_LINES)
    args = ap.parse_args()

    lexicon = set()
    if args.lexicon and os.path.exists(args.lexicon):
        with open(args.lexicon, encoding="utf-8") as f:
            lexicon = {l.split("\t", 1)[0].lower() for l in f}
    non_word = {c: t for c, t in NON_WORD.items() if t not in lexicon}

    member = {}
    for i, s in enumerate(CONFUSION_SETS):
        for w in s:
            member.setdefault(w, set()).add(i)

    rng = random.Random(SEED)
    files = english_prose(args.prose)
    pools = {}
    for f in files:
        cs = list(chunks(os.path.join(args.prose, f)))
        rng.shuffle(cs)
        pools[f] = cs
    per_file = args.lines // len(files)
    n_clean = round(per_file * SHARE_CLEAN)
    n_nonword = round(per_file * SHARE_NONWORD)
    n_real = per_file - n_clean - n_nonword

    set_use = collections.Counter()
    nw_use = collections.Counter()
    rows = []
    for f in files:
        want = ["clean"] * n_clean + ["non-word"] * n_nonword + ["real-word"] * n_real
        rng.shuffle(want)
        pool = pools[f]
        for kind in want:
            row = None
            while pool and row is None:
                text = pool.pop()
                toks = [(m.start(), m.end(), m.group(0)) for m in WORD_RE.finditer(text)]
                if kind == "clean":
                    row = dict(text=text, start=None, end=None, error=None, correct=None)
                elif kind == "real-word":
                    cands = [(s, e, w, i) for s, e, w in toks for i in member.get(w.lower(), ())]
                    if not cands:
                        continue
                    least = min(set_use[i] for *_, i in cands)
                    cands = [c for c in cands if set_use[c[3]] == least]
                    s, e, w, i = rng.choice(cands)
                    alt = rng.choice([x for x in CONFUSION_SETS[i] if x != w.lower()])
                    set_use[i] += 1
                    row = dict(error=match_case(w, alt), correct=w, start=s)
                else:
                    cands = [(s, e, w) for s, e, w in toks if w.lower() in non_word]
                    if not cands:
                        continue
                    least = min(nw_use[w.lower()] for *_, w in cands)
                    cands = [c for c in cands if nw_use[c[2].lower()] == least]
                    s, e, w = rng.choice(cands)
                    nw_use[w.lower()] += 1
                    row = dict(error=match_case(w, non_word[w.lower()]), correct=w, start=s)
                if kind != "clean":
                    s, w = row["start"], row["correct"]
                    e = s + len(w)
                    assert text[s:e] == w
                    new_text = text[:s] + row["error"] + text[e:]
                    row = dict(text=new_text, start=s, end=s + len(row["error"]),
                               error=row["error"], correct=w)
            if row is None:
                sys.exit(f"make_context_errors: {f} ran out of paragraphs for {kind}")
            row["kind"] = kind
            row["source"] = f
            rows.append(row)

    write_rows(rows, args.out)
    kinds = collections.Counter(r["kind"] for r in rows)
    print(f"make_context_errors: wrote {args.out}: {len(rows)} lines "
          f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}; "
          f"{len(set_use)} confusion sets used)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
