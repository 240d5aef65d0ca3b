# What a one-token decode step costs on MLX CUDA under each setting that could change it
# (docs/benchmarks.md, "On the H200"): the activation dtype (f32 / f16 / bf16, scales alike),
# MLX's CUDA-graph settings (MLX_USE_CUDA_GRAPHS, MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER,
# read once per process, so each runs in a child process), mx.compile, and stacked projections.
# Random 4-bit weights in the default model's shape (SmolLM2-135M, group 32) and Qwen3-8B's
# (group 64): timings only, plus a check that stacked projections agree with the CPU.
# Usage: python3 bench/cuda_step_variants.py [OUT.jsonl]   (parent: every setting, then a table)
import json
import os
import subprocess
import sys
import time

from mlx_timing import median_ms

SHAPES = {
    "smollm2": dict(hidden=576, inter=1536, layers=30, heads=9, kv=3, hd=64, vocab=49152, group=32),
    "qwen3-8b": dict(hidden=4096, inter=12288, layers=36, heads=32, kv=8, hd=128, vocab=151936, group=64),
}
SETTINGS = {
    "default": {},
    "graphs-off": {"MLX_USE_CUDA_GRAPHS": "0"},
    "ops-100": {"MLX_MAX_OPS_PER_BUFFER": "100", "MLX_MAX_MB_PER_BUFFER": "1000000"},
    "ops-1000": {"MLX_MAX_OPS_PER_BUFFER": "1000", "MLX_MAX_MB_PER_BUFFER": "1000000"},
    "ops-10": {"MLX_MAX_OPS_PER_BUFFER": "10"},
}
CTX = 64


def child(setting):
    import mlx.core as mx

    mx.set_default_device(mx.gpu if mx.is_available(mx.gpu) else mx.cpu)
    rows = []

    def timed(f, reps):
        return round(median_ms(f, reps), 4)

    def emit(**r):
        r["setting"] = setting
        rows.append(r)
        print(json.dumps(r), flush=True)

    x0 = mx.random.normal((1, 576))
    mx.eval(x0)

    def chain(n):
        y = x0
        for _ in range(n):
            y = y + 1.0
        return y

    emit(what="tiny op, synchronised", ms=timed(lambda: x0 + 1.0, 100))
    emit(what="600 tiny ops, one eval", ms=timed(lambda: chain(600), 40))

    for shape, s in SHAPES.items():
        mx.random.seed(0)
        H, I, L, nh, nkv, hd, V, G = (s[k] for k in ("hidden", "inter", "layers", "heads", "kv", "hd", "vocab", "group"))

        def qw(rows_, cols):
            w = mx.random.normal((rows_, cols), dtype=mx.float16) * 0.02
            q = mx.quantize(w, group_size=G, bits=4)
            mx.eval(*q)
            return q

        base = []
        for _ in range(L):
            base.append({"q": qw(nh * hd, H), "k": qw(nkv * hd, H), "v": qw(nkv * hd, H), "o": qw(H, nh * hd),
                         "gate": qw(I, H), "up": qw(I, H), "down": qw(H, I)})
        head = qw(V, H)
        dtypes = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16} if shape == "smollm2" else {"f16": mx.float16, "bf16": mx.bfloat16}
        for dname, dt in dtypes.items():
            def cast(q):
                return (q[0], q[1].astype(dt), q[2].astype(dt))

            layers = [{k: cast(v) for k, v in l.items()} for l in base]
            for l in layers:
                l["qkv"] = tuple(mx.concatenate([l[p][i] for p in ("q", "k", "v")], axis=0) for i in range(3))
                l["gu"] = tuple(mx.concatenate([l[p][i] for p in ("gate", "up")], axis=0) for i in range(3))
                l["n1"] = mx.ones((H,), dtype=dt)
                l["n2"] = mx.ones((H,), dtype=dt)
                mx.eval(*l["qkv"], *l["gu"])
            hq = cast(head)
            norm = mx.ones((H,), dtype=dt)

            def lin(x, q):
                return mx.quantized_matmul(x, *q, transpose=True, group_size=G, bits=4)

            def step(x, *kv, stacked=False):
                b = x.shape[0]
                for i, l in enumerate(layers):
                    h = mx.fast.rms_norm(x, l["n1"], 1e-5)
                    if stacked:
                        qkv = lin(h, l["qkv"])
                        q, k, v = mx.split(qkv, [nh * hd, (nh + nkv) * hd], axis=-1)
                    else:
                        q, k, v = lin(h, l["q"]), lin(h, l["k"]), lin(h, l["v"])
                    q = mx.fast.rope(q.reshape(b, 1, nh, hd).transpose(0, 2, 1, 3), hd, traditional=False, base=1e6, scale=1.0, offset=CTX)
                    k = mx.fast.rope(k.reshape(b, 1, nkv, hd).transpose(0, 2, 1, 3), hd, traditional=False, base=1e6, scale=1.0, offset=CTX)
                    v = v.reshape(b, 1, nkv, hd).transpose(0, 2, 1, 3)
                    keys = mx.concatenate([kv[2 * i], k], axis=2)
                    vals = mx.concatenate([kv[2 * i + 1], v], axis=2)
                    a = mx.fast.scaled_dot_product_attention(q, keys, vals, scale=hd ** -0.5)
                    x = x + lin(a.transpose(0, 2, 1, 3).reshape(b, nh * hd), l["o"])
                    h = mx.fast.rms_norm(x, l["n2"], 1e-5)
                    if stacked:
                        g, u = mx.split(lin(h, l["gu"]), [I], axis=-1)
                    else:
                        g, u = lin(h, l["gate"]), lin(h, l["up"])
                    x = x + lin(g * mx.sigmoid(g) * u, l["down"])
                logits = lin(mx.fast.rms_norm(x, norm, 1e-5), hq).astype(mx.float32)
                return logits - mx.logsumexp(logits, axis=-1, keepdims=True)

            x = (mx.random.normal((1, H)) * 0.5).astype(dt)
            kv = [(mx.random.normal((1, nkv, CTX, hd)) * 0.5).astype(dt) for _ in range(2 * L)]
            mx.eval(x, *kv)
            reps = 30 if shape == "smollm2" else 15
            comp = mx.compile(step)
            comp_st = mx.compile(lambda x, *kv: step(x, *kv, stacked=True))
            emit(shape=shape, dtype=dname, what="step eager", ms=timed(lambda: step(x, *kv), reps))
            emit(shape=shape, dtype=dname, what="step eager, stacked", ms=timed(lambda: step(x, *kv, stacked=True), reps))
            emit(shape=shape, dtype=dname, what="step compiled", ms=timed(lambda: comp(x, *kv), reps))
            emit(shape=shape, dtype=dname, what="step compiled, stacked", ms=timed(lambda: comp_st(x, *kv), reps))

            def qmvs():  # every projection of every layer, all from the same input: the matmuls alone
                out = []
                for l in layers:
                    out += [lin(x, l["q"]), lin(x, l["k"]), lin(x, l["v"]), lin(x, l["gate"]), lin(x, l["up"])]
                return out

            emit(shape=shape, dtype=dname, what=f"{5 * L} projections from one input, one eval", ms=timed(qmvs, reps))
            down_in = mx.random.normal((1, I)).astype(dt)
            mx.eval(down_in)
            emit(shape=shape, dtype=dname, what="one down projection, synchronised", ms=timed(lambda: lin(down_in, layers[0]["down"]), reps))
            emit(shape=shape, dtype=dname, what="head matmul, synchronised", ms=timed(lambda: lin(x, hq), reps))
            if setting == "default" and shape == "smollm2":
                # Stacked against separate projections, GPU against CPU (f32 reference), 1 row and 8.
                for b in (1, 8, 13):
                    xb = (mx.random.normal((b, H)) * 0.5).astype(dt)
                    kvb = [mx.broadcast_to(t, (b,) + t.shape[1:]) for t in kv]
                    ref = None
                    with mx.stream(mx.cpu):
                        ref = step(xb.astype(mx.float32), *[t.astype(mx.float32) for t in kvb]) if dname == "f32" else None
                        if ref is not None:
                            mx.eval(ref)
                    sep = step(xb, *kvb)
                    st = step(xb, *kvb, stacked=True)
                    mx.eval(sep, st)
                    scale = max(1.0, mx.abs(sep).max().item())
                    r = dict(shape=shape, dtype=dname, what=f"stacked vs separate, {b} rows", rel=mx.abs(st - sep).max().item() / scale)
                    if ref is not None:
                        r["gpu_vs_cpu_separate"] = mx.abs(sep - ref).max().item() / scale
                        r["gpu_vs_cpu_stacked"] = mx.abs(st - ref).max().item() / scale
                    emit(**r)
                # The matmuls alone, stacked and separate, against the CPU: one row, 8 rows, a
                # 13-token prefill as Laya's load-time check runs it.
                l0 = layers[0]
                for shp in ((1, H), (8, H), (1, 13, H)):
                    xm = mx.random.normal(shp).astype(dt)
                    for name, parts in (("qkv", ("q", "k", "v")), ("gu", ("gate", "up"))):
                        st = lin(xm, l0[name])
                        sep = mx.concatenate([lin(xm, l0[p]) for p in parts], axis=-1)
                        with mx.stream(mx.cpu):
                            ref = mx.concatenate([lin(xm.astype(mx.float32), tuple(a.astype(mx.float32) if a.dtype != mx.uint32 else a for a in l0[p])) for p in parts], axis=-1)
                            mx.eval(ref)
                        mx.eval(st, sep)
                        scale = max(1.0, mx.abs(ref).max().item())
                        emit(shape=shape, dtype=dname, what=f"matmul {name} {shp}", stacked_vs_cpu=mx.abs(st.astype(mx.float32) - ref).max().item() / scale,
                             separate_vs_cpu=mx.abs(sep.astype(mx.float32) - ref).max().item() / scale, rel=mx.abs(st - sep).max().item() / scale)
            del layers, hq
        del base, head
        mx.clear_cache()
    return rows


def parent(out_path):
    here = os.path.abspath(__file__)
    env0 = dict(os.environ)
    env0.setdefault("MLX_PTX_CACHE_DIR", "/tmp/mlx-ptx-cache")
    rows = []
    for name, extra in SETTINGS.items():
        env = dict(env0, **extra)
        t = time.time()
        p = subprocess.run([sys.executable, here, "--child", name], env=env, capture_output=True, text=True, timeout=200)
        print(f"== {name} ({time.time() - t:.0f} s, exit {p.returncode})", flush=True)
        if p.returncode != 0:
            print(p.stderr[-3000:], flush=True)
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                rows.append(json.loads(line))
        if out_path:  # after each child, so that a run cut short keeps what it measured
            with open(out_path, "w") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
    keys = sorted({(r.get("shape", ""), r.get("dtype", ""), r["what"]) for r in rows if "ms" in r}, key=lambda k: (k[0], k[2], k[1]))
    names = list(SETTINGS)
    print("median ms".ljust(62) + "".join(n.rjust(11) for n in names))
    for k in keys:
        cells = []
        for n in names:
            m = [r["ms"] for r in rows if r["setting"] == n and (r.get("shape", ""), r.get("dtype", ""), r["what"]) == k]
            cells.append(f"{m[0]:.3f}" if m else "-")
        print(f"{k[0]} {k[1]} {k[2]}"[:61].ljust(62) + "".join(c.rjust(11) for c in cells))
    for r in rows:
        if "rel" in r:
            print(json.dumps(r))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        parent(sys.argv[1] if len(sys.argv) > 1 else None)
