#!/usr/bin/env python3
"""llama.cpp's logits for Gemma 3 270M on the texts of gemma3-texts.json: the fixture
tests/fixtures/gemma3-llamacpp.json that server/model/tests/gemma.rs compares Laya against.

    .deps/llamacpp/bin/python tests/reference/gemma3_llamacpp.py GGUF > tests/fixtures/gemma3-llamacpp.json

For each text: its ids (llama.cpp's tokenizer, <bos> first) and, for each of the last `tail`
positions (all when 0), the TOP ids with their logits and the row's logsumexp (4 decimals), so
that log-probs can be compared (raw logits may shift by a constant per row). One forward of the whole
sequence on the CPU, with llama.cpp's own sliding window (512) on the local layers.
"""

import json
import sys
from pathlib import Path

import llama_cpp
import numpy as np

TOP = 8


def main() -> None:
    gguf = sys.argv[1]
    texts = json.loads((Path(__file__).parent / "gemma3-texts.json").read_text(encoding="utf-8"))
    llm = llama_cpp.Llama(model_path=gguf, logits_all=True, n_ctx=2048, n_batch=2048, n_ubatch=2048,
                          n_threads=2, verbose=False)
    out = []
    for t in texts:
        ids = llm.tokenize(t["text"].encode("utf-8"), add_bos=True, special=False)
        assert ids[0] == 2, "Gemma's sequences start with <bos> (2)"
        llm.reset()
        llm.eval(ids)
        scores = np.asarray(llm.scores[: len(ids)], dtype=np.float32)
        first = len(ids) - t["tail"] if t["tail"] else 0
        rows = []
        for p in range(first, len(ids)):
            top = np.argsort(-scores[p])[:TOP]
            row = scores[p].astype(np.float64)
            lse = float(row.max() + np.log(np.exp(row - row.max()).sum()))
            rows.append({"ids": [int(i) for i in top], "logits": [round(float(scores[p, i]), 4) for i in top],
                         "lse": round(lse, 4)})
        out.append({"name": t["name"], "ids": list(ids), "first": first, "top": rows})
    # One line per position: reviewable diffs.
    print("[")
    for i, t in enumerate(out):
        head = json.dumps({k: t[k] for k in ("name", "ids", "first")})[:-1]
        rows = ",\n  ".join(json.dumps(r) for r in t["top"])
        print(f'{head}, "top": [\n  {rows}\n]}}' + ("," if i + 1 < len(out) else ""))
    print("]")


if __name__ == "__main__":
    main()
