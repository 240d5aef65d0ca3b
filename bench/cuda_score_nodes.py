# Why a scoring forward (2 rows of 2 tokens after a 1-row cache) costs more than a one-token
# step on MLX CUDA (docs/benchmarks.md, "On the H200"): the graph Laya's GPU path builds for each,
# in plain MLX-Python with random 4-bit weights in the default model's shape (SmolLM2-135M, f32,
# group 32, 64 cached tokens), and the same scoring forward without its per-layer broadcasts of
# the cache, or without its transposes (wrong values: timing only). Also the host cost of a graph
# node that launches nothing (a transpose, a broadcast) against one that launches a kernel.
# Usage: python3 bench/cuda_score_nodes.py
import json

import mlx.core as mx

from mlx_timing import median_ms

H, I, L, NH, NKV, HD, V, G = 576, 1536, 30, 9, 3, 64, 49152, 32
CTX, CAP = 64, 256

mx.set_default_device(mx.gpu if mx.is_available(mx.gpu) else mx.cpu)
mx.random.seed(0)


def qw(rows, cols):
    q = mx.quantize(mx.random.normal((rows, cols)) * 0.02, group_size=G, bits=4)
    mx.eval(*q)
    return q


def lin(x, q):
    return mx.quantized_matmul(x, *q, transpose=True, group_size=G, bits=4)


layers = [{n: qw(r, c) for n, (r, c) in {"q": (NH * HD, H), "k": (NKV * HD, H), "v": (NKV * HD, H), "o": (H, NH * HD),
                                          "gate": (I, H), "up": (I, H), "down": (H, I)}.items()} for _ in range(L)]
head = qw(V, H)
ones = mx.ones((H,))
gated = mx.compile(lambda g, u: g * mx.sigmoid(g) * u, shapeless=True)


def cache(rows):
    kv = [mx.concatenate([mx.random.normal((rows, NKV, CTX, HD)) * 0.5, mx.zeros((rows, NKV, CAP - CTX, HD))], axis=2) for _ in range(2 * L)]
    mx.eval(*kv)
    return kv


cache1, cache2 = cache(1), cache(2)
offset = mx.array(CTX)


def forward(kv, b, l, broadcast=True, transpose=True):
    """Laya's generic forward on the GPU (model.rs, hidden_traced): one-token reshapes when l == 1."""
    x = mx.random.normal((b, l, H)) * 0.5
    end = CTX + l

    def split(a, n):
        if l == 1 or not transpose:
            return a.reshape(b, n, l, HD)
        return a.reshape(b, l, n, HD).transpose(0, 2, 1, 3)

    for i, lay in enumerate(layers):
        h = mx.fast.rms_norm(x, ones, 1e-5)
        q = mx.fast.rope(split(lin(h, lay["q"]), NH), HD, traditional=False, base=10000.0, scale=1.0, offset=offset)
        k = mx.fast.rope(split(lin(h, lay["k"]), NKV), HD, traditional=False, base=10000.0, scale=1.0, offset=offset)
        v = split(lin(h, lay["v"]), NKV)
        kb, vb = kv[2 * i], kv[2 * i + 1]
        if broadcast and kb.shape[0] != b:
            kb, vb = mx.broadcast_to(kb, (b,) + kb.shape[1:]), mx.broadcast_to(vb, (b,) + vb.shape[1:])
        kb = _update(kb, k)
        vb = _update(vb, v)
        a = mx.fast.scaled_dot_product_attention(q, kb[:, :, :end], vb[:, :, :end], scale=HD ** -0.5, mask="causal" if l > 1 else None)
        a = a.reshape(b, l, NH * HD) if l == 1 or not transpose else a.transpose(0, 2, 1, 3).reshape(b, l, NH * HD)
        x = x + lin(a, lay["o"])
        h = mx.fast.rms_norm(x, ones, 1e-5)
        x = x + lin(gated(lin(h, lay["gate"]), lin(h, lay["up"])), lay["down"])
    logits = lin(mx.fast.rms_norm(x, ones, 1e-5).reshape(b * l, H), head)
    return logits - mx.logsumexp(logits, axis=-1, keepdims=True)


def _update(buf, new):
    out = mx.array(buf)  # a new handle: the cache's own stays, so MLX copies, as on a fork (the
    # same in every variant; Python's item assignment may add reshapes around MLX's slice_update)
    out[:, :, CTX:CTX + new.shape[2], :] = new
    return out


x0 = mx.random.normal((1, 576))
x3 = x0.reshape(1, 9, 64)
mx.eval(x0, x3)
rows = []


def emit(what, f, reps=30):
    r = {"what": what, "ms": round(median_ms(f, reps), 4)}
    rows.append(r)
    print(json.dumps(r), flush=True)


emit("decode step: 1 row, 1 token, 1-row cache", lambda: forward(cache1, 1, 1))
emit("scoring forward: 2 rows of 2 tokens, 1-row cache broadcast", lambda: forward(cache1, 2, 2))
emit("scoring forward, 2-row cache (no broadcasts)", lambda: forward(cache2, 2, 2))
emit("scoring forward, no transposes (wrong values)", lambda: forward(cache1, 2, 2, transpose=False))
emit("scoring forward, neither", lambda: forward(cache2, 2, 2, transpose=False))
emit("1 row of 1 token, 1-row cache, again", lambda: forward(cache1, 1, 1))
emit("180 transposes, one eval", lambda: [x3.transpose(1, 0, 2) for _ in range(180)])
emit("180 broadcasts, one eval", lambda: [mx.broadcast_to(x0, (2, 576)) for _ in range(180)])
emit("180 reshapes, one eval", lambda: [x0.reshape(9, 64) for _ in range(180)])
emit("180 tiny adds, one eval", lambda: [x0 + 1.0 for _ in range(180)])
