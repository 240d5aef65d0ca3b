# Runs each MLX op Laya's forward uses, with Laya's shapes, on the GPU and on the CPU and compares.
# Written to find why Laya's forward gave wrong answers on MLX's CUDA backend (docs/benchmarks.md).
# Usage: python3 bench/cuda_ops_check.py   (prints one line per check; exit 1 when any differs)
import sys

import mlx.core as mx
mx.random.seed(7)
failures = []


GPU = mx.gpu if mx.is_available(mx.gpu) else mx.cpu  # on a CPU-only MLX the script checks itself


def on(dev, fn):
    with mx.stream(dev):
        out = fn()
        outs = out if isinstance(out, (list, tuple)) else [out]
        mx.eval(*outs)
        return [o.astype(mx.float32) for o in outs]


def check(name, fn, tol=2e-3):
    cpu = on(mx.cpu, fn)
    gpu1 = on(GPU, fn)
    gpu2 = on(GPU, fn)
    worst = 0.0
    for c, g1, g2 in zip(cpu, gpu1, gpu2):
        if c.shape != g1.shape:
            failures.append(name)
            print(f"FAIL {name}: shape cpu {c.shape} gpu {g1.shape}")
            return
        with mx.stream(mx.cpu):
            scale = max(1.0, mx.abs(c).max().item())
            worst = max(worst, mx.abs(c - g1).max().item() / scale)
            if not mx.array_equal(g1, g2).item():
                failures.append(name)
                print(f"FAIL {name}: two GPU runs differ (max {mx.abs(g1 - g2).max().item():.3g})")
                return
    ok = worst <= tol
    if not ok:
        failures.append(name)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max rel diff {worst:.3g}")


def arr(*shape, dtype=mx.float32):
    """Random inputs, made and evaluated on the CPU once, shared by both runs."""
    with mx.stream(mx.cpu):
        a = mx.random.normal(shape).astype(dtype)
        mx.eval(a)
        return a


hidden, heads, kv_heads, hd, ffn, vocab = 576, 9, 3, 64, 1536, 49152

for bits, group in [(4, 32), (4, 64), (8, 32), (8, 64)]:
    for out_dim in [hd * kv_heads, ffn, vocab]:
        w = arr(out_dim, hidden)
        with mx.stream(mx.cpu):
            q = mx.quantize(w, group, bits)
            mx.eval(q)
        for xshape in [(1, hidden), (1, 1, hidden), (4, 1, hidden), (1, 17, hidden), (8, 3, hidden)]:
            x = arr(*xshape)

            def qmm(x=x, q=q, group=group, bits=bits):
                return mx.quantized_matmul(x, *q, True, group, bits)

            check(f"qmm {bits}-bit g{group} x{xshape} out {out_dim}", qmm)

    with mx.stream(mx.cpu):
        emb = mx.quantize(arr(vocab, hidden), group, bits)
        mx.eval(emb)
    ids = mx.array([1, 5, 49151, 300, 12], dtype=mx.uint32)

    def embed(emb=emb, group=group, bits=bits):
        wq, s, b = emb
        i = ids
        return mx.dequantize(mx.take(wq, i, 0), mx.take(s, i, 0), mx.take(b, i, 0), group, bits)

    check(f"embedding rows {bits}-bit g{group}", embed)

x = (arr(2, 5, hidden))
nw = (arr(hidden))
check("rms_norm [2,5,576]", lambda: mx.fast.rms_norm(x, nw, 1e-5))

for offset in [0, 7, 300]:
    qh = (arr(2, 5, heads, hd))

    def rope(qh=qh, offset=offset):
        a = qh.transpose(0, 2, 1, 3)  # non-contiguous, as in the forward
        return mx.fast.rope(a, hd, traditional=False, base=100000.0, scale=1.0, offset=offset)

    check(f"rope transposed offset {offset}", rope)


def kv_step(rows, offset, new, capacity=256, causal=True, broadcast_from_one=True):
    """Laya's cache append: write into a preallocated buffer, attend over the filled part."""
    base = (arr(1 if broadcast_from_one else rows, kv_heads, capacity, hd))
    k_new = (arr(rows, kv_heads, new, hd))
    v_new = (arr(rows, kv_heads, new, hd))
    q = (arr(rows, heads, new, hd))

    def run():
        kb = mx.broadcast_to(base, (rows, kv_heads, capacity, hd))
        vb = mx.broadcast_to(base * 0.5, (rows, kv_heads, capacity, hd))
        kb[:, :, offset:offset + new, :] = k_new
        vb[:, :, offset:offset + new, :] = v_new
        k, v = kb[:, :, : offset + new, :], vb[:, :, : offset + new, :]
        mask = "causal" if causal and new > 1 else None
        return [mx.fast.scaled_dot_product_attention(q, k, v, scale=hd ** -0.5, mask=mask), kb, vb]

    check(f"cache append + sdpa rows {rows} offset {offset} new {new} from-one {broadcast_from_one}", run)


for rows, offset, new in [(1, 0, 17), (1, 17, 1), (1, 200, 3), (4, 17, 1), (8, 30, 2), (8, 100, 3)]:
    kv_step(rows, offset, new)
    if rows > 1:
        kv_step(rows, offset, new, broadcast_from_one=False)


old_kv = (arr(1, kv_heads, 256, hd))


def grow():
    old = old_kv
    zeros = mx.zeros((4, kv_heads, 256, hd))
    return mx.concatenate([mx.broadcast_to(old[:, :, :200, :], (4, kv_heads, 200, hd)), zeros], axis=2)


check("cache grow (broadcast + concatenate)", grow)

logits = (arr(8, 3, vocab))
with mx.stream(mx.cpu):
    targets = mx.random.randint(0, vocab, (8, 3, 1)).astype(mx.uint32)


def score():
    lg = logits
    picked = mx.take_along_axis(lg, targets, -1)
    return picked - mx.logsumexp(lg, -1, keepdims=True)


check("take_along_axis - logsumexp", score)
check("logsumexp [vocab]", lambda: logits[0, 0] - mx.logsumexp(logits[0, 0], -1, keepdims=True))
rows4 = (arr(4, kv_heads, 64, hd))
check("take rows of cache", lambda: mx.take(rows4, mx.array([3, 3, 0, 1], dtype=mx.uint32), 0))
check("silu * up", lambda: (lambda g, u: g * mx.sigmoid(g) * u)(x, x * 0.3))

print(f"{len(failures)} of the checks differ" if failures else "all checks agree")
sys.exit(1 if failures else 0)
