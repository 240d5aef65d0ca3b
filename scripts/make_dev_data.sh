#!/usr/bin/env bash
# Regenerates data/dev/typos/*.tsv and data/dev/prose/*.txt (scripts/make_dev_data.py), the speller's
# error model server/decide/data/error-model.tsv (scripts/make_error_model.py), then
# data/dev/context/*.jsonl (scripts/make_context_errors.py, make_grammar_errors.py, make_joined_errors.py, make_split_errors.py). Sources: see data/README.md.
# Needs the lexicon (scripts/lexicon.sh, run first), the codespell 2.4.3 wheel (PyPI, sha256
# pinned) and the crates of Cargo.lock in cargo's registry (`cargo fetch`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DL=.deps/lexicon/dl
CODESPELL_WHL=codespell-2.4.3-py3-none-any.whl
CODESPELL_SHA256=af2505b335e8573dbd2d384d1c4ef498f4006f4ba2d6fceca01e55b91f52628a

scripts/lexicon.sh
[ -f "$DL/$CODESPELL_WHL" ] || "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
  --ignore-requires-python codespell==2.4.3 -d "$DL"
got=$(sha256sum "$DL/$CODESPELL_WHL" | cut -d' ' -f1)
[ "$got" = "$CODESPELL_SHA256" ] || { echo "make_dev_data: checksum mismatch for $DL/$CODESPELL_WHL" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("codespell_lib/data/dictionary.txt"))' \
  "$DL/$CODESPELL_WHL" "$tmp/dictionary.txt"

pydoc=/usr/share/doc/python3.11/html
[ -f "$pydoc/tutorial/index.html" ] || pydoc=.deps/lexicon/src/pydoc/usr/share/doc/python3.11/html
[ -f "$pydoc/tutorial/index.html" ] || { echo "make_dev_data: no Python 3.11 HTML docs (scripts/lexicon.sh fetches them)" >&2; exit 1; }
crates=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/index.crates.io-* | head -1)
cargo fetch --quiet --locked || echo "make_dev_data: note: cargo fetch failed; using the registry as it is" >&2

"$PY" scripts/make_dev_data.py --lexicon .deps/lexicon/en.tsv --codespell "$tmp/dictionary.txt" \
  --brotli-sdist "$DL/brotli-1.2.1.tar.gz" --pydoc "$pydoc" --crates "$crates" --out data/dev
# Two words typed as one, from the same list (the error model counts letters only).
"$PY" scripts/make_joined.py --codespell "$tmp/dictionary.txt" --lexicon .deps/lexicon/en.tsv --out data/dev/typos/joined.tsv
# The speller's learned error model, from the codespell pairs the sets above did not take.
"$PY" scripts/make_error_model.py --codespell "$tmp/dictionary.txt" --exclude data/dev/typos/*.tsv \
  --out server/decide/data/error-model.tsv
"$PY" scripts/make_context_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
  --out data/dev/context/context-errors.jsonl
"$PY" scripts/make_grammar_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
  --out data/dev/context/grammar-errors.jsonl
"$PY" scripts/make_joined_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
  --out data/dev/context/joined-errors.jsonl
"$PY" scripts/make_split_errors.py --prose data/dev/prose --lexicon .deps/lexicon/en.tsv \
  --out data/dev/context/split-errors.jsonl

# Small samples for the fast test suite (tests/data), taken from the dev data.
"$PY" - <<'PYEOF'
import json, os
os.makedirs("tests/data", exist_ok=True)
common = open("data/dev/typos/codespell-common.tsv", encoding="utf-8").read().splitlines()
rare = open("data/dev/typos/codespell-rare.tsv", encoding="utf-8").read().splitlines()
pairs = common[:: len(common) // 40][:40] + rare[:: len(rare) // 20][:20]
open("tests/data/typos-sample.tsv", "w", encoding="utf-8", newline="\n").write("\n".join(pairs) + "\n")
paras = open("data/dev/prose/docs-python-tutorial.txt", encoding="utf-8").read().split("\n\n")
out = []
for p in paras:
    if sum(len(x) + 2 for x in out) + len(p) > 1800:
        break
    out.append(p.strip())
open("tests/data/prose-sample.txt", "w", encoding="utf-8", newline="\n").write("\n\n".join(out) + "\n")
rows = [json.loads(l) for l in open("data/dev/context/context-errors.jsonl", encoding="utf-8")]
want = {"clean": 8, "real-word": 14, "non-word": 3}
pick = []
for kind, n in want.items():
    of_kind = [r for r in rows if r["kind"] == kind]
    pick += of_kind[:: max(1, len(of_kind) // n)][:n]
# Keep at least one error with non-ASCII text before it, where char and byte offsets differ.
def wide(r):
    return r["start"] is not None and not r["text"][: r["start"]].isascii()
if not any(wide(r) for r in pick):
    pick[len(pick) - 1 - want["non-word"]] = next(r for r in rows if r["kind"] == "real-word" and wide(r))
pick.sort(key=rows.index)
with open("tests/data/context-sample.jsonl", "w", encoding="utf-8", newline="\n") as f:
    for r in pick:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(f"samples: tests/data/typos-sample.tsv {len(pairs)} pairs, prose-sample.txt "
      f"{sum(len(p) for p in out) + 2 * (len(out) - 1)} chars, context-sample.jsonl {len(pick)} lines")
PYEOF
