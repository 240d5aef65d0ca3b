"""Compares MLX ops Laya's forward uses on the GPU against MLX's CPU (a CUDA debugging aid)."""
import mlx.core as mx

mx.random.seed(0)


def cmp(name, f):
    try:
        with mx.stream(mx.gpu):
            g = f()
            mx.eval(g)
        with mx.stream(mx.cpu):
            c = f()
            mx.eval(c)
        d = mx.abs(g.astype(mx.float32) - c.astype(mx.float32)).max().item()
        print(f"{name:28} maxdiff {d:.4g} scale {mx.abs(c.astype(mx.float32)).max().item():.4g}")
    except Exception as e:  # noqa: BLE001
        print(f"{name:28} ERR {e}")


w = mx.random.normal((960, 576)).astype(mx.float16) * 0.05
wq, s, b = mx.quantize(w, 32, 4)
x = mx.random.normal((1, 5, 576)).astype(mx.float16)
cmp("qmm4 g32 M5", lambda: mx.quantized_matmul(x, wq, s, b, True, 32, 4))
cmp("qmm4 g32 M1", lambda: mx.quantized_matmul(x[:, :1], wq, s, b, True, 32, 4))
cmp("qmm4 g32 M5 f32 scales", lambda: mx.quantized_matmul(x, wq, s.astype(mx.float32), b.astype(mx.float32), True, 32, 4))
e = mx.random.normal((49152, 576)).astype(mx.float16) * 0.05
eq, es, eb = mx.quantize(e, 32, 8)
cmp("qmm8 head", lambda: mx.quantized_matmul(x[0, -1:], eq, es, eb, True, 32, 8))
ids = mx.array([5, 7, 100], dtype=mx.uint32)
cmp("deq8 rows", lambda: mx.dequantize(eq[ids], es[ids], eb[ids], 32, 8))
q = mx.random.normal((1, 9, 5, 64)).astype(mx.float16)
cmp("rope trad off3", lambda: mx.fast.rope(q, 64, traditional=True, base=100000.0, scale=1.0, offset=3))
kb = mx.random.normal((1, 3, 256, 64)).astype(mx.float16)
vb = mx.random.normal((1, 3, 256, 64)).astype(mx.float16)
cmp("sdpa view causal", lambda: mx.fast.scaled_dot_product_attention(q, kb[:, :, :9, :], vb[:, :, :9, :], scale=0.125, mask="causal"))
cmp("sdpa contig causal", lambda: mx.fast.scaled_dot_product_attention(q, mx.contiguous(kb[:, :, :9, :]), mx.contiguous(vb[:, :, :9, :]), scale=0.125, mask="causal"))
cmp("sdpa view L1", lambda: mx.fast.scaled_dot_product_attention(q[:, :, :1], kb[:, :, :9, :], vb[:, :, :9, :], scale=0.125))
cmp("rms f16 x f32 w", lambda: mx.fast.rms_norm(x, mx.ones((576,)), 1e-5))
cmp("split", lambda: mx.split(mx.quantized_matmul(x, wq, s, b, True, 32, 4), [576, 768], axis=-1)[1])


def su():
    b2 = mx.zeros((1, 3, 256, 64), dtype=mx.float16)
    b2[:, :, 3:8, :] = kb[:, :, :5, :]
    return b2


cmp("slice_update", su)
