# Where a decode step's time goes on MLX CUDA (docs/benchmarks.md): the default GGUF model's one-token
# step over a 64-token cache in plain MLX-Python, run eagerly and through mx.compile, beside the
# cost of one synchronised tiny op and of the same number of quantized matmuls alone.
# Usage: python3 bench/cuda_decode_profile.py MODEL.gguf
import sys

import mlx.core as mx

from mlx_timing import median_ms

path = sys.argv[1]
heads, kv_heads, hd, eps, base, ctx = 9, 3, 64, 1e-5, 100000.0, 64
mx.set_default_device(mx.gpu if mx.is_available(mx.gpu) else mx.cpu)
print("device", mx.default_device())
w = mx.load(path)
w = {k: (v.astype(mx.float32) if k.endswith(("scales", "biases")) or v.dtype == mx.float16 else v) for k, v in w.items()}
mx.eval(w)
layers = sum(1 for k in w if k.endswith("attn_norm.weight"))


def quant(name):
    inputs = w[name + ".scales"].shape[-1] * 32
    return 32, w[name + ".weight"].shape[-1] * 32 // inputs


def linear(name, x):
    if name + ".scales" in w:
        return mx.quantized_matmul(x, w[name + ".weight"], w[name + ".scales"], w[name + ".biases"], True, *quant(name))
    return x @ w[name + ".weight"].T


def step(x, *kv):
    """One token through every layer, attending to a cache of `ctx` tokens (not grown: a timing)."""
    for i in range(layers):
        p = f"blk.{i}."
        h = mx.fast.rms_norm(x, w[p + "attn_norm.weight"], eps)
        q = linear(p + "attn_q", h).reshape(1, 1, heads, hd).transpose(0, 2, 1, 3)
        k = linear(p + "attn_k", h).reshape(1, 1, kv_heads, hd).transpose(0, 2, 1, 3)
        v = linear(p + "attn_v", h).reshape(1, 1, kv_heads, hd).transpose(0, 2, 1, 3)
        q = mx.fast.rope(q, hd, traditional=True, base=base, scale=1.0, offset=ctx)
        k = mx.fast.rope(k, hd, traditional=True, base=base, scale=1.0, offset=ctx)
        keys = mx.concatenate([kv[2 * i], k], axis=2)
        vals = mx.concatenate([kv[2 * i + 1], v], axis=2)
        a = mx.fast.scaled_dot_product_attention(q, keys, vals, scale=hd ** -0.5)
        x = x + linear(p + "attn_output", a.transpose(0, 2, 1, 3).reshape(1, 1, -1))
        h = mx.fast.rms_norm(x, w[p + "ffn_norm.weight"], eps)
        g = linear(p + "ffn_gate", h)
        x = x + linear(p + "ffn_down", g * mx.sigmoid(g) * linear(p + "ffn_up", h))
    h = mx.fast.rms_norm(x, w["output_norm.weight"], eps)
    return linear("output" if "output.weight" in w else "token_embd", h)


def timed(f, reps=60):
    return median_ms(f, reps, warm=5)


x = mx.random.normal((1, 1, 576))
kv = [mx.random.normal((1, kv_heads, ctx, hd)) for _ in range(2 * layers)]
mx.eval(x, *kv)
eager = timed(lambda: step(x, *kv))
compiled_step = mx.compile(step)
compiled = timed(lambda: compiled_step(x, *kv))
tiny = timed(lambda: x + 1)
wq = w["blk.0.ffn_up.weight"], w["blk.0.ffn_up.scales"], w["blk.0.ffn_up.biases"]
bits = quant("blk.0.ffn_up")
one_qmm = timed(lambda: mx.quantized_matmul(x, *wq, True, *bits))


def many_qmm():
    y = x
    for _ in range(7 * layers):
        y = y + mx.quantized_matmul(x, *wq, True, *bits)[..., :576]
    return y


qmms = timed(many_qmm)
print(f"layers {layers}; medians of 60, ms")
print(f"decode step, eager           {eager:8.3f}")
print(f"decode step, mx.compile      {compiled:8.3f}   ({eager / compiled:.2f}x)")
print(f"one tiny op, synchronised    {tiny:8.3f}")
print(f"one quantized matmul         {one_qmm:8.3f}")
print(f"{7 * layers} quantized matmuls (+adds)  {qmms:8.3f}   ({qmms / (7 * layers) * 1e3:.1f} us each)")
