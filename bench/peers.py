#!/usr/bin/env python3
"""The peer side of `laya bench`: runs Laya's engine workloads on a peer engine, prints one JSON object.

    <venv>/bin/python bench/peers.py ENGINE --spec SPEC.json [--reps N] [--warmup N] [--only a,b]
                                            [--max-seconds S] [--flash-attn | --float32]
    .deps/llamacpp/bin/python bench/peers.py make-spec --model GGUF [--out SPEC.json]

ENGINE is `llama.cpp` (llama-cpp-python's low-level ctypes API; venv .deps/llamacpp, made by
tests/reference/build-llamacpp.sh) or `mlx-python` (mlx + mlx-lm on MLX's CPU backend; venv
.deps/pyref, made by scripts/bootstrap-pyref.sh; the model is built by tests/reference/mlx_reference.py).

The spec (written by `laya bench`, or by `make-spec` for hand runs):

    {"model": "/path/model.gguf", "threads": 2, "reps": 20, "warmup": 3,
     "workloads": {"prefill_64": {"prompt": [...]}, "decode_64": {"prompt": [...], "token": t},
                   "score_8": {"prompt": [...], "candidates": [[...], ...]},
                   "append_2": {"prompt": [...], "tokens": [a, b]}, ...}}

A workload's kind comes from its name's prefix (prefill_, decode_, score_, append_); see
docs/benchmarks.md for what each one times. The JSON on stdout:

    {"engine", "version", "threads", "load_ms", "peak_rss_bytes", "config", "loadavg", "note"?,
     "workloads": {NAME: {"median_ms", "p10_ms", "p90_ms", "min_ms", "reps", "cpu_per_wall",
                          "samples_ms", "check": {...}}}}

On failure nothing but {"engine", "error", "hint"} is printed on stdout, the message also goes to
stderr, and the exit status is 2 (bad spec, missing model or package) or 1 (the engine failed).
Progress lines go to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("prefill", "decode", "score", "append")
ENGINES = {"llama.cpp": "llama.cpp", "llamacpp": "llama.cpp", "mlx-python": "mlx-python", "mlx": "mlx-python"}


class Fail(Exception):
    """An error to report: `status` 2 for the user's setup or input, 1 for the engine itself."""

    def __init__(self, msg: str, hint: str = "", status: int = 2):
        super().__init__(msg)
        self.msg, self.hint, self.status = msg, hint, status


def log(msg: str) -> None:
    print(f"peers: {msg}", file=sys.stderr, flush=True)


def loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_bytes() -> int:
    # On Linux ru_maxrss survives exec: a process started by `laya bench` would report laya's own
    # peak. VmHWM belongs to this process's address space alone.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)  # Linux reports KiB, macOS bytes


# --------------------------------------------------------------------------------------------------
# Spec


def load_spec(path: str, args) -> dict:
    try:
        spec = json.loads(Path(path).read_text())
    except OSError as e:
        raise Fail(f"cannot read the spec {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise Fail(f"the spec {path} is not JSON: {e}")
    if not isinstance(spec, dict):
        raise Fail(f"the spec {path} must be a JSON object")
    model = spec.get("model")
    if not isinstance(model, str) or not model:
        raise Fail(f'the spec {path} has no "model" (path of a .gguf file)')
    model = os.path.expanduser(model)
    if not Path(model).is_file():
        raise Fail(f"the model {model} does not exist",
                   "scripts/bootstrap.sh fetches the default model; or fix \"model\" in the spec")
    spec["model"] = model

    def count(key, default, lo):
        v = spec.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise Fail(f'the spec\'s "{key}" must be an integer >= {lo}, got {v!r}')
        return v

    spec["threads"] = count("threads", os.cpu_count() or 1, 1)
    spec["reps"] = args.reps if args.reps is not None else count("reps", 20, 1)
    spec["warmup"] = args.warmup if args.warmup is not None else count("warmup", 3, 0)
    ms = args.max_seconds if args.max_seconds is not None else spec.get("max_seconds")
    if ms is not None and (not isinstance(ms, (int, float)) or ms <= 0):
        raise Fail(f'"max_seconds" must be a positive number, got {ms!r}')
    spec["max_seconds"] = ms

    wl = spec.get("workloads")
    if not isinstance(wl, dict):
        raise Fail(f'the spec {path} has no "workloads" object')
    if args.only:
        only = [w.strip() for w in args.only.split(",") if w.strip()]
        missing = [w for w in only if w not in wl]
        if missing:
            raise Fail(f"--only names workloads the spec lacks: {', '.join(missing)} (it has: {', '.join(wl)})")
        wl = {k: wl[k] for k in only}
    out = {}
    for name, w in wl.items():
        kind = name.split("_", 1)[0]
        if kind not in KINDS:
            raise Fail(f"workload {name!r}: unknown kind {kind!r} (names start with one of {', '.join(KINDS)})")
        if not isinstance(w, dict):
            raise Fail(f"workload {name!r} must be an object")
        out[name] = check_workload(name, kind, w)
    spec["workloads"] = out
    return spec


def _ids(name, what, v, min_len=1):
    if (not isinstance(v, list) or len(v) < min_len
            or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in v)):
        raise Fail(f"workload {name!r}: {what} must be a list of at least {min_len} token ids, got {str(v)[:80]}")
    return v


def check_workload(name: str, kind: str, w: dict) -> dict:
    d = {"kind": kind, "prompt": _ids(name, '"prompt"', w.get("prompt"))}
    if kind == "decode":
        t = w.get("token")
        d["token"] = _ids(name, '"token"', [t])[0]
    elif kind == "append":
        d["tokens"] = _ids(name, '"tokens"', w.get("tokens"))
    elif kind == "score":
        c = w.get("candidates")
        if not isinstance(c, list) or not c:
            raise Fail(f'workload {name!r}: "candidates" must be a non-empty list of token-id lists')
        d["candidates"] = [_ids(name, f"candidate {i}", x) for i, x in enumerate(c)]
    return d


def check_vocab(spec: dict, vocab: int) -> None:
    for name, w in spec["workloads"].items():
        ids = list(w["prompt"]) + ([w["token"]] if "token" in w else []) + list(w.get("tokens", []))
        for c in w.get("candidates", []):
            ids += c
        bad = [t for t in ids if t >= vocab]
        if bad:
            raise Fail(f"workload {name!r}: token id {bad[0]} is out of the model's vocabulary (size {vocab})",
                       "the spec was made for another model")


# --------------------------------------------------------------------------------------------------
# Shared pieces


def log_softmax_np(np, logits):
    """Row-wise log-softmax in float32 (as Laya computes it), numerically stable."""
    x = np.asarray(logits, dtype=np.float32)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def top_check(np, logits_row, k: int = 5) -> dict:
    """argmax, its log-prob and the top-k (id, log-prob), in float64 from the f32 logits."""
    lp = np.asarray(logits_row, dtype=np.float64)
    lp = lp - (lp.max() + math.log(np.exp(lp - lp.max()).sum()))
    top = np.argsort(-lp, kind="stable")[:k]
    return {"argmax": int(top[0]), "logprob": round(float(lp[top[0]]), 5),
            "top": [[int(i), round(float(lp[i]), 5)] for i in top]}


def timed(spec: dict, run_once, restore) -> tuple[list[float], float, object]:
    """Warm-up reps, then timed reps (up to max_seconds of timed work, at least 3 or reps).

    run_once() does the timed work and returns its result; restore() puts the state back and is not
    timed. Returns (samples in ms, CPU time / wall time over the timed reps, the last result).
    """
    for _ in range(spec["warmup"]):
        run_once()
        restore()
    samples, cpu, wall, result = [], 0.0, 0.0, None
    budget = spec["max_seconds"]
    for i in range(spec["reps"]):
        c0 = cpu_seconds()
        t0 = time.perf_counter_ns()
        result = run_once()
        t1 = time.perf_counter_ns()
        cpu += cpu_seconds() - c0
        wall += (t1 - t0) / 1e9
        samples.append((t1 - t0) / 1e6)
        restore()
        if budget is not None and wall >= budget and i + 1 >= min(3, spec["reps"]):
            break
    return samples, (cpu / wall if wall > 0 else 0.0), result


def summarize(np, samples: list[float], cpu_per_wall: float, check: dict) -> dict:
    p10, p50, p90 = np.percentile(np.asarray(samples), [10, 50, 90])
    return {"median_ms": round(float(p50), 3), "p10_ms": round(float(p10), 3), "p90_ms": round(float(p90), 3),
            "min_ms": round(min(samples), 3), "reps": len(samples), "cpu_per_wall": round(cpu_per_wall, 2),
            "samples_ms": [round(s, 3) for s in samples], "check": check}


def run_workloads(engine, spec: dict, np) -> dict:
    out = {}
    for name, w in spec["workloads"].items():
        log(f"{engine.name}: {name} ({len(w['prompt'])}-token prompt, {spec['warmup']} warm-up + "
            f"{spec['reps']} reps)")
        run_once, restore, check = engine.workload(w)
        samples, cpw, result = timed(spec, run_once, restore)
        out[name] = summarize(np, samples, cpw, check(result))
        log(f"{engine.name}: {name}: median {out[name]['median_ms']:.2f} ms over {len(samples)} reps")
    return out


# --------------------------------------------------------------------------------------------------
# llama.cpp (llama-cpp-python's low-level API)


_LOG_CB = None


def quiet_llama(L) -> None:
    """llama.cpp logs only its errors (to stderr); the callback is kept alive in a global.

    ggml's log levels are NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (llama-cpp-python's
    _logger.py still lists an older order). The warnings are dropped: with a unified KV cache the
    "n_ctx_per_seq < n_ctx_train" one is wrong, and failures surface as return codes anyway.
    """
    global _LOG_CB
    if _LOG_CB is None:
        _LOG_CB = L.llama_log_callback(
            lambda level, text, _: print(text.decode("utf-8", "replace"), end="", file=sys.stderr)
            if level == 4 else None)
    L.llama_log_set(_LOG_CB, None)


class LlamaCpp:
    name = "llama.cpp"

    def __init__(self, spec: dict, flash_attn: bool):
        try:
            import llama_cpp as L
            import numpy as np
        except ImportError as e:
            raise Fail(f"cannot import llama_cpp / numpy ({e})",
                       "run tests/reference/build-llamacpp.sh and use .deps/llamacpp/bin/python")
        self.L, self.np = L, np
        for fn in ("llama_get_memory", "llama_memory_seq_rm", "llama_memory_seq_cp", "llama_memory_clear",
                   "llama_batch_init", "llama_decode", "llama_get_logits"):
            if not hasattr(L, fn):
                raise Fail(f"llama-cpp-python {L.__version__} lacks {fn} (written against 0.3.16)",
                           "run tests/reference/build-llamacpp.sh (it pins 0.3.16)")
        quiet_llama(L)
        L.llama_backend_init()

        wl = spec["workloads"].values()
        # KV cells a workload needs at once: its prompt plus what it appends (every candidate's
        # tokens but the last sit in cells of their own).
        need = [len(w["prompt"]) + {"prefill": 0, "decode": 1, "append": len(w.get("tokens", [])),
                                    "score": sum(len(c) - 1 for c in w.get("candidates", []))}[w["kind"]]
                for w in wl]
        longest = max(need + [1])
        self.n_seq = max([len(w.get("candidates", [])) for w in wl] + [1])
        self.n_batch = 512
        n_ctx = max(1024, -(-longest // 256) * 256)

        t0 = time.perf_counter()
        mp = L.llama_model_default_params()
        mp.n_gpu_layers = 0
        self.model = L.llama_model_load_from_file(spec["model"].encode(), mp)
        if not self.model:
            raise Fail(f"llama.cpp could not load {spec['model']}", "is it a GGUF file llama.cpp knows?", 1)
        cp = L.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = self.n_batch
        cp.n_ubatch = self.n_batch
        cp.n_seq_max = self.n_seq
        # One KV buffer for all sequences: the candidates of a score share the prompt's cells
        # (seq_cp only tags them), which is what "sharing the cached prefix" means here.
        cp.kv_unified = True
        cp.n_threads = spec["threads"]
        cp.n_threads_batch = spec["threads"]
        cp.flash_attn = flash_attn
        cp.no_perf = True
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise Fail("llama.cpp could not create a context", "", 1)
        self.mem = L.llama_get_memory(self.ctx)
        self.vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(self.model))
        self.cap = max(self.n_batch, longest)
        self.batch = L.llama_batch_init(self.cap, 0, 1)
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.config = {
            "api": "llama_cpp low-level (llama_decode, llama_memory_seq_*)",
            "n_ctx": L.llama_n_ctx(self.ctx), "n_batch": self.n_batch, "n_ubatch": self.n_batch,
            "n_seq_max": self.n_seq, "kv_unified": True, "flash_attn": flash_attn, "kv_type": "f16",
            "mmap": bool(mp.use_mmap),
            "system_info": L.llama_print_system_info().decode().strip(),
        }
        self.version = f"llama-cpp-python {L.__version__}"

    # -- helpers

    def decode(self, tokens, pos, seqs, logits):
        """One llama_decode of tokens[i] at pos[i] in seq seqs[i]; logits[i] says whether to output."""
        L, b, n = self.L, self.batch, len(tokens)
        if n > self.cap:
            raise Fail(f"batch of {n} tokens exceeds the allocated {self.cap}", "", 1)
        for i in range(n):
            b.token[i] = tokens[i]
            b.pos[i] = pos[i]
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seqs[i]
            b.logits[i] = logits[i]
        b.n_tokens = n
        rc = L.llama_decode(self.ctx, b)
        if rc != 0:
            raise Fail(f"llama_decode returned {rc} ({n} tokens)", "", 1)

    def logits(self, rows: int):
        """The output rows of the last decode, copied to host as [rows, vocab] float32."""
        p = self.L.llama_get_logits(self.ctx)
        return self.np.ctypeslib.as_array(p, shape=(rows, self.vocab)).copy()

    def prefill(self, prompt):
        """Empty cache -> prompt in seq 0; returns the last position's logits."""
        n = len(prompt)
        for s in range(0, n, self.n_batch):
            chunk = prompt[s:s + self.n_batch]
            last = s + len(chunk) == n
            self.decode(chunk, range(s, s + len(chunk)), [0] * len(chunk),
                        [int(last and i == len(chunk) - 1) for i in range(len(chunk))])
        return self.logits(1)[0]

    def clear(self):
        self.L.llama_memory_clear(self.mem, True)

    def trim(self, n_keep: int):
        """Every sequence back to seq 0's first n_keep positions."""
        L = self.L
        for s in range(1, self.n_seq):
            L.llama_memory_seq_rm(self.mem, s, -1, -1)
        if not L.llama_memory_seq_rm(self.mem, 0, n_keep, -1):
            raise Fail("llama_memory_seq_rm failed", "", 1)

    # -- workloads: (run_once, restore, check)

    def workload(self, w):
        np, L, kind, prompt = self.np, self.L, w["kind"], w["prompt"]
        P = len(prompt)
        if kind == "prefill":
            self.clear()
            return (lambda: self.prefill(prompt)), self.clear, (lambda r: top_check(np, r))

        self.clear()
        last = self.prefill(prompt)  # the cache holds the prompt (and its next-token log-probs)
        restore = lambda: self.trim(P)

        if kind == "decode":
            tok = w["token"]

            def once():
                self.decode([tok], [P], [0], [1])
                return self.logits(1)[0]
            return once, restore, (lambda r: top_check(np, r))

        if kind == "append":
            toks = w["tokens"]
            n = len(toks)

            def once():
                self.decode(toks, range(P, P + n), [0] * n, [0] * (n - 1) + [1])
                return log_softmax_np(np, self.logits(1)[0])
            return once, restore, (lambda r: top_check(np, r))

        # score: candidate i lives in seq i (seq 0 is the prompt itself, seqs 1.. are copies); its
        # first token's log-prob comes from the prompt's last logits (kept, as log-probs, like
        # Laya's cache keeps them), each further token's from the logits at the token before it.
        cands = w["candidates"]
        first_lp = log_softmax_np(np, last)
        toks, pos, seqs, targets = [], [], [], []
        for i, c in enumerate(cands):
            for j in range(len(c) - 1):
                toks.append(c[j]); pos.append(P + j); seqs.append(i); targets.append((i, c[j + 1]))
        n_out = len(toks)

        def once():
            for s in range(1, len(cands)):
                L.llama_memory_seq_cp(self.mem, 0, s, -1, -1)
            totals = [float(first_lp[c[0]]) for c in cands]
            if n_out:
                self.decode(toks, pos, seqs, [1] * n_out)
                lp = log_softmax_np(np, self.logits(n_out))
                for r, (i, t) in enumerate(targets):
                    totals[i] += float(lp[r, t])
            return totals
        return once, restore, (lambda r: {"totals": [round(x, 5) for x in r]})

    def close(self):
        L = self.L
        L.llama_batch_free(self.batch)
        L.llama_free(self.ctx)
        L.llama_model_free(self.model)


# --------------------------------------------------------------------------------------------------
# MLX from Python (mlx + mlx-lm, CPU backend); the model is built by tests/reference/mlx_reference.py


class MlxPython:
    name = "mlx-python"

    def __init__(self, spec: dict, float32: bool):
        try:
            import mlx.core as mx
            import mlx_lm
            import numpy as np
            from mlx_lm.models import cache as mlx_cache
        except ImportError as e:
            raise Fail(f"cannot import mlx / mlx_lm / numpy ({e})",
                       "run scripts/bootstrap-pyref.sh and use .deps/pyref/bin/python")
        sys.path.insert(0, str(ROOT / "tests" / "reference"))
        try:
            import mlx_reference
        except ImportError as e:
            raise Fail(f"cannot import tests/reference/mlx_reference.py ({e})", "run from a Laya checkout")
        self.mx, self.np, self.cache_mod = mx, np, mlx_cache
        mx.set_default_device(mx.cpu)
        t0 = time.perf_counter()
        try:  # MLX defaults: f16 scales and biases as loaded
            model, info = mlx_reference.load_gguf(Path(spec["model"]), None)
        except SystemExit:  # mlx_reference.die() has printed why
            raise Fail(f"MLX could not build a model from {spec['model']} (see the message above)", "", 1)
        if float32:  # not MLX's default: what Laya does on the CPU backend
            mlx_reference.cast_floats(model, mx.float32)
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.model = model
        self.vocab = model.args.vocab_size
        # The activations' dtype: what a one-token forward produces (before any cast).
        probe = model(mx.array([[0]], dtype=mx.int32))
        mx.eval(probe)
        emb = model.model.embed_tokens
        self.config = {
            "device": str(mx.default_device()),
            "activation_dtype": mlx_reference.dtype_name(probe.dtype),
            "scales_dtype": mlx_reference.dtype_name(getattr(emb, "scales", emb.weight).dtype),
            "quantization": info["quantization"], "rope_traditional": info["rope_traditional"],
            "float32_cast": float32,
            "kv_cache": "mlx_lm.models.cache.make_prompt_cache (KVCache, trim to restore)",
        }
        self.version = f"mlx {mx.__version__}, mlx-lm {mlx_lm.__version__}"
        self.note = ("MLX's CPU backend takes no thread count (the spec's threads are not applied); "
                     "see cpu_per_wall for the cores actually used")

    def hidden(self, ids, cache):
        return self.model.model(self.mx.array(ids, dtype=self.mx.int32), cache=cache)

    def head(self, h):
        m = self.model
        return m.model.embed_tokens.as_linear(h) if m.args.tie_word_embeddings else m.lm_head(h)

    def kv(self, cache):
        return [a for c in cache for a in (c.keys, c.values) if a is not None]

    def prefill(self, prompt, cache):
        """Runs prompt after what cache holds; the logits of the last position only (the head is
        applied to that position alone, as Laya does), evaluated with the cache."""
        mx = self.mx
        logits = self.head(self.hidden([prompt], cache)[:, -1, :])[0]
        mx.eval(logits, *self.kv(cache))
        return logits

    def workload(self, w):
        mx, np, kind, prompt = self.mx, self.np, w["kind"], w["prompt"]
        P = len(prompt)
        f32 = lambda a: np.asarray(a.astype(mx.float32))
        if kind == "prefill":
            state = {"cache": self.cache_mod.make_prompt_cache(self.model)}

            def once():
                return self.prefill(prompt, state["cache"])

            def restore():
                state["cache"] = self.cache_mod.make_prompt_cache(self.model)
            return once, restore, (lambda r: top_check(np, f32(r)))

        cache = self.cache_mod.make_prompt_cache(self.model)
        last = self.prefill(prompt, cache)
        last = last.astype(mx.float32)
        first_lp = last - mx.logsumexp(last, axis=-1, keepdims=True)  # kept with the cache, as Laya does
        mx.eval(first_lp)

        def restore():
            n = cache[0].offset - P
            if n > 0:
                self.cache_mod.trim_prompt_cache(cache, n)

        if kind == "decode":
            tok = w["token"]
            return (lambda: self.prefill([tok], cache)), restore, (lambda r: top_check(np, f32(r)))

        if kind == "append":
            toks = w["tokens"]

            def once():
                logits = self.head(self.hidden([toks], cache)[:, -1, :])[0].astype(mx.float32)
                lp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
                mx.eval(lp, *self.kv(cache))
                return lp
            return once, restore, (lambda r: top_check(np, f32(r)))

        # score: the prompt's cache tiled to one row per candidate (keys/values repeated on axis 0),
        # the candidates right-padded (padding after the real tokens, so the causal mask keeps it
        # from them) in one [n, width] forward; the shared cache itself is never written.
        cands = w["candidates"]
        n = len(cands)
        width = max(len(c) for c in cands) - 1
        first_ids = mx.array([c[0] for c in cands], dtype=mx.int32)
        pad = lambda s: (list(s) + [0] * width)[:width]
        inputs = [pad(c[:-1]) for c in cands]
        targets = [pad(c[1:]) for c in cands]

        def fork():
            out = []
            for c in cache:
                f = self.cache_mod.KVCache()
                f.keys = mx.repeat(c.keys[..., :c.offset, :], n, axis=0)
                f.values = mx.repeat(c.values[..., :c.offset, :], n, axis=0)
                f.offset = c.offset
                out.append(f)
            return out

        def once():
            first = first_lp[first_ids]
            if width == 0:
                mx.eval(first)
                return first.tolist()
            logits = self.head(self.hidden(inputs, fork())).astype(mx.float32)  # [n, width, vocab]
            picked = mx.take_along_axis(logits, mx.array(targets, dtype=mx.int32)[..., None], axis=-1)[..., 0]
            lp = picked - mx.logsumexp(logits, axis=-1)
            mx.eval(lp, first)
            rows, f = lp.tolist(), first.tolist()
            return [f[i] + sum(rows[i][:len(c) - 1]) for i, c in enumerate(cands)]
        return once, (lambda: None), (lambda r: {"totals": [round(x, 5) for x in r]})

    def close(self):
        pass


# --------------------------------------------------------------------------------------------------
# make-spec: a spec for hand runs, from a built-in passage tokenized by llama.cpp


# Written for this project (no third-party text); ~600 tokens with SmolLM2's tokenizer.
PASSAGE = """\
The lighthouse keeper kept a notebook on the table by the window, and every evening she wrote down \
the same four things: the wind, the colour of the water, the ships that had passed and the one thing \
she had not expected. Most days the last line was short. A gull had landed on the railing and refused \
to leave. The bread had risen twice as high as usual. A letter had come from her brother, who lived \
in the city and wrote only when something had gone wrong. Over the years the notebooks filled a shelf, \
then a second one, and the keeper began to read them back in the winter, when the storms kept the \
boats in the harbour and there was little to do but trim the wick and wait. She noticed that the \
unexpected things repeated themselves. The gulls came back in the same week of every spring. The \
letters from her brother arrived after the first frost, as if the cold reminded him that he had a \
sister on a rock at the edge of the map. Even the ships seemed to keep a calendar of their own, the \
grain boats in autumn, the small fishing boats in the long evenings of June, the grey navy vessel \
that passed once a year without a flag and without a light. She started a new notebook with a \
different purpose. Instead of writing down what had happened, she wrote down what she thought would \
happen the next day, and in the evening she checked. At first she was wrong more often than right. \
The wind turned when she had promised it would hold; the boats she expected stayed in port. But \
slowly the pages changed. She learned that the water turned green a day before a southern wind, that \
the fishermen stayed home when the moon was full, that her brother's letters were shorter when he \
was happy. By the third winter she was right nine days out of ten, and the tenth day had become the \
only interesting one. When the inspector came from the mainland to ask whether the light could be \
run by a machine, she showed him the shelf of notebooks and said that a machine could certainly turn \
the lamp, but it would never know which day to be surprised. He wrote something in his own notebook, \
thanked her for the tea, and took the afternoon boat back across the bay. The machine arrived in the \
spring anyway, in six wooden crates, with a manual that nobody on the island could read, and the \
keeper kept writing her predictions in the evening, now with one more line at the bottom of each \
page: what the machine did, and whether it had been right. The inspector wrote to her twice more. \
The first letter asked how the machine was behaving; the second, a year later, asked to borrow the \
notebooks, because the people who built the machines wanted to know how she had learned to guess the \
weather from the colour of the sea. She sent him the oldest ones and kept the newest for herself.
"""
# Eight candidate words of 1-3 tokens (SmolLM2: 1, 3, 2, 2, 3, 1, 2, 2); longer ones are cut to 3.
SCORE_WORDS = [" notebook", " lamplighter", " weatherglass", " barometer", " lighthouse-keeper", " gull",
               " foghorn", " unpredictability"]


def cmd_make_spec(a) -> None:
    model = os.path.expanduser(a.model)
    if not Path(model).is_file():
        raise Fail(f"the model {model} does not exist")
    try:
        import llama_cpp
    except ImportError as e:
        raise Fail(f"make-spec tokenizes with llama.cpp and cannot import llama_cpp ({e})",
                   "run tests/reference/build-llamacpp.sh and use .deps/llamacpp/bin/python")
    quiet_llama(llama_cpp)
    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    tok = lambda s: list(llm.tokenize(s.encode(), add_bos=False, special=False))
    ids = tok(PASSAGE)
    if len(ids) < 520:
        raise Fail(f"the passage is only {len(ids)} tokens with this model's tokenizer (need 520)")
    p64, p512 = ids[:64], ids[:512]
    cands = [c[:3] for c in (tok(wd) for wd in SCORE_WORDS)][:8]
    spec = {
        "model": model, "threads": a.threads, "reps": a.reps, "warmup": a.warmup,
        "workloads": {
            "prefill_64": {"prompt": p64},
            "prefill_512": {"prompt": p512},
            "decode_64": {"prompt": p64, "token": ids[64]},
            "decode_512": {"prompt": p512, "token": ids[512]},
            "score_8": {"prompt": p64, "candidates": cands},
            "append_2": {"prompt": p64, "tokens": ids[64:66]},
        },
    }
    text = json.dumps(spec) + "\n"
    if a.out:
        Path(a.out).write_text(text)
        log(f"wrote {a.out} (candidate lengths {[len(c) for c in cands]})")
    else:
        sys.stdout.write(text)


# --------------------------------------------------------------------------------------------------


def cmd_run(a) -> None:
    engine_name = ENGINES[a.engine]
    spec = load_spec(a.spec, a)
    if not spec["workloads"]:
        raise Fail("the spec has no workloads to run")
    la0 = loadavg()
    if engine_name == "llama.cpp":
        if a.float32:
            raise Fail("--float32 is an mlx-python option")
        engine = LlamaCpp(spec, a.flash_attn)
    else:
        if a.flash_attn:
            raise Fail("--flash-attn is a llama.cpp option")
        engine = MlxPython(spec, a.float32)
    check_vocab(spec, engine.vocab)
    log(f"{engine.name}: {engine.version}, model loaded in {engine.load_ms:.0f} ms")
    try:
        import numpy as np
        workloads = run_workloads(engine, spec, np)
    finally:
        engine.close()
    out = {
        "engine": engine_name, "version": engine.version, "threads": spec["threads"],
        "load_ms": round(engine.load_ms, 1), "peak_rss_bytes": peak_rss_bytes(),
        "config": engine.config, "loadavg": {"start": la0, "end": loadavg()},
        "workloads": workloads,
    }
    if getattr(engine, "note", None):
        out["note"] = engine.note
    print(json.dumps(out))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="peers.py", description=__doc__.split("\n")[0])
    if argv and argv[0] == "make-spec":
        p.add_argument("cmd")
        p.add_argument("--model", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache",
                                                       "laya/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        p.add_argument("--out", help="write here instead of stdout")
        p.add_argument("--threads", type=int, default=2)
        p.add_argument("--reps", type=int, default=20)
        p.add_argument("--warmup", type=int, default=3)
        fn, engine = cmd_make_spec, "make-spec"
    else:
        p.add_argument("engine", choices=sorted(ENGINES), help="the peer engine (or `make-spec`)")
        p.add_argument("--spec", required=True, help="the spec JSON written by `laya bench`")
        p.add_argument("--reps", type=int, help="override the spec's reps")
        p.add_argument("--warmup", type=int, help="override the spec's warmup")
        p.add_argument("--only", help="comma-separated workload names to run (default: all in the spec)")
        p.add_argument("--max-seconds", type=float,
                       help="stop a workload's timed reps after this much timed work (at least 3 reps)")
        p.add_argument("--flash-attn", action="store_true", help="llama.cpp: enable flash attention")
        p.add_argument("--float32", action="store_true",
                       help="mlx-python: cast scales, biases and norms to float32 (not MLX's default; "
                            "what Laya does on the CPU backend)")
        fn, engine = cmd_run, None
    a = p.parse_args(argv)
    engine = engine or ENGINES[a.engine]
    try:
        fn(a)
    except Fail as e:
        print(f"peers: error: {e.msg}" + (f"\npeers: hint: {e.hint}" if e.hint else ""), file=sys.stderr)
        print(json.dumps({"engine": engine, "error": e.msg, "hint": e.hint}))
        return e.status
    return 0


if __name__ == "__main__":
    sys.exit(main())
