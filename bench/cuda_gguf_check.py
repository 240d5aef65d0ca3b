# Runs a plain MLX-Python forward of the default GGUF model (SmolLM2, Llama layout) on the GPU and
# on the CPU and prints, layer by layer, how far they drift apart: tells an MLX CUDA problem with
# GGUF-loaded weights from a problem in Laya's own forward (docs/benchmarks.md).
# Usage: python3 bench/cuda_gguf_check.py MODEL.gguf
import sys

import mlx.core as mx

path = sys.argv[1]
heads, kv_heads, hd, eps, base = 9, 3, 64, 1e-5, 100000.0


def weights(dev):
    with mx.stream(dev):
        w = mx.load(path)
        w = {k: (v.astype(mx.float32) if k.endswith(("scales", "biases")) or v.dtype == mx.float16 else v) for k, v in w.items()}
        mx.eval(w)
        return w


def quant(w, name):
    """Group size and bits of a GGUF tensor as MLX loaded it (GGUF groups hold 32 values)."""
    inputs = w[name + ".scales"].shape[-1] * 32
    return 32, w[name + ".weight"].shape[-1] * 32 // inputs


def linear(w, name, x):
    if name + ".scales" in w:
        return mx.quantized_matmul(x, w[name + ".weight"], w[name + ".scales"], w[name + ".biases"], True, *quant(w, name))
    return x @ w[name + ".weight"].T


def forward(dev, ids):
    w = weights(dev)
    out = []
    with mx.stream(dev):
        e = "token_embd"
        if e + ".scales" in w:
            x = mx.dequantize(w[e + ".weight"][ids], w[e + ".scales"][ids], w[e + ".biases"][ids], *quant(w, e))
        else:
            x = w[e + ".weight"][ids]
        x = x[None].astype(mx.float32)
        n = len(ids)
        i = 0
        while f"blk.{i}.attn_norm.weight" in w:
            p = f"blk.{i}."
            h = mx.fast.rms_norm(x, w[p + "attn_norm.weight"], eps)
            q = linear(w, p + "attn_q", h).reshape(1, n, heads, hd).transpose(0, 2, 1, 3)
            k = linear(w, p + "attn_k", h).reshape(1, n, kv_heads, hd).transpose(0, 2, 1, 3)
            v = linear(w, p + "attn_v", h).reshape(1, n, kv_heads, hd).transpose(0, 2, 1, 3)
            q = mx.fast.rope(q, hd, traditional=True, base=base, scale=1.0, offset=0)
            k = mx.fast.rope(k, hd, traditional=True, base=base, scale=1.0, offset=0)
            a = mx.fast.scaled_dot_product_attention(q, k, v, scale=hd ** -0.5, mask="causal")
            x = x + linear(w, p + "attn_output", a.transpose(0, 2, 1, 3).reshape(1, n, -1))
            h = mx.fast.rms_norm(x, w[p + "ffn_norm.weight"], eps)
            g = linear(w, p + "ffn_gate", h)
            x = x + linear(w, p + "ffn_down", g * mx.sigmoid(g) * linear(w, p + "ffn_up", h))
            mx.eval(x)
            out.append(x)
            i += 1
        h = mx.fast.rms_norm(x, w["output_norm.weight"], eps)
        logits = linear(w, "output" if "output.weight" in w else "token_embd", h)
        mx.eval(logits)
        out.append(logits)
    return out


ids = mx.array([504, 3575, 282, 4649, 314, 253, 1167, 28, 284, 260, 1484, 3143, 30, 378, 8383, 314, 2104], dtype=mx.uint32)
cpu = forward(mx.cpu, ids)
gpu = forward(mx.gpu if mx.is_available(mx.gpu) else mx.cpu, ids)
worst = 0.0
with mx.stream(mx.cpu):
    for i, (c, g) in enumerate(zip(cpu, gpu)):
        d = (mx.abs(c - g).max() / mx.maximum(mx.abs(c).max(), 1.0)).item()
        worst = max(worst, d)
        label = "logits" if i == len(cpu) - 1 else f"layer {i}"
        print(f"{label}: max rel diff {d:.3g}")
    print("next token cpu", mx.argmax(cpu[-1][0, -1]).item(), "gpu", mx.argmax(gpu[-1][0, -1]).item())
print("GGUF forward agrees" if worst < 1e-2 else "GGUF forward DIFFERS between GPU and CPU")
