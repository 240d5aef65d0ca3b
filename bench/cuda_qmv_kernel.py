# Whether a one-row 4-bit matmul written for the GPU (mx.fast.cuda_kernel: 16-byte weight loads,
# R rows a warp, f32 accumulation) beats MLX CUDA's own (quantized_matmul's qmv) on the shapes of
# a decode step, and what reading a step's log-probs on the host costs (docs/benchmarks.md, "On
# the H200"). Random weights: timings and agreement only.
# Usage: python3 bench/cuda_qmv_kernel.py
import statistics
import time

import mlx.core as mx

from mlx_timing import median_ms

HEADER = """
__device__ inline float tof(float v) { return v; }
__device__ inline float tof(__half v) { return __half2float(v); }
__device__ inline float tof(__nv_bfloat16 v) { return __bfloat162float(v); }
"""

# x [K] (T), w [N, K/8] u32 (4-bit values, least significant first), scales and biases [N, K/G]
# (T); out [N] (T). Lane l of a warp takes 32 columns at a time (one 16-byte load a row).
SOURCE = """
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * R;
  if (row0 >= N) return;
  constexpr int KV = K / 32;
  constexpr int GPR = K / G;
  const uint4* w4 = reinterpret_cast<const uint4*>(w);
  float acc[R];
  #pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  #pragma unroll 4
  for (int v = lane; v < KV; v += 32) {
    uint4 q[R];
    #pragma unroll
    for (int r = 0; r < R; ++r) q[r] = (row0 + r < N) ? w4[(size_t)(row0 + r) * KV + v] : make_uint4(0u, 0u, 0u, 0u);
    __align__(16) T xr[32];
    const uint4* xq = reinterpret_cast<const uint4*>(x + v * 32);
    #pragma unroll
    for (int i = 0; i < (32 * (int)sizeof(T)) / 16; ++i) reinterpret_cast<uint4*>(xr)[i] = xq[i];
    float xf[32];
    float xs = 0.f;
    #pragma unroll
    for (int i = 0; i < 32; ++i) { xf[i] = tof(xr[i]); xs += xf[i]; }
    const int g = (v * 32) / G;
    #pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t wd[4] = {q[r].x, q[r].y, q[r].z, q[r].w};
      float qd = 0.f;
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        #pragma unroll
        for (int n = 0; n < 8; ++n) qd += xf[j * 8 + n] * (float)((wd[j] >> (4 * n)) & 0xFu);
      }
      if (row0 + r < N) {
        const size_t sg = (size_t)(row0 + r) * GPR + g;
        acc[r] += tof(scales[sg]) * qd + tof(biases[sg]) * xs;
      }
    }
  }
  #pragma unroll
  for (int r = 0; r < R; ++r) {
    float a = acc[r];
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
    if (lane == 0 && row0 + r < N) out[row0 + r] = static_cast<T>(a);
  }
"""

kernel = mx.fast.cuda_kernel(name="laya_qmv4", input_names=["x", "w", "scales", "biases"], output_names=["out"],
                             source=SOURCE, header=HEADER)


def qmv(x, w, s, b, group, rows_per_warp, warps):
    n, k = w.shape[0], x.shape[-1]
    rows_per_block = rows_per_warp * warps
    blocks = (n + rows_per_block - 1) // rows_per_block
    return kernel(inputs=[x.reshape(-1), w, s, b], template=[("T", x.dtype), ("K", k), ("N", n), ("G", group), ("R", rows_per_warp)],
                  grid=(blocks * 32 * warps, 1, 1), threadgroup=(32 * warps, 1, 1), output_shapes=[(n,)], output_dtypes=[x.dtype])[0]


def timed(f, reps=20):
    return median_ms(f, reps)


mx.random.seed(0)
# (name, rows N, columns K, group, copies): copies distinct matrices per evaluation, as a step's
# layers are, so that the L2 holds none of them.
SHAPES = [
    ("qwen3-8b q/o", 4096, 4096, 64, 36), ("qwen3-8b k/v", 1024, 4096, 64, 36), ("qwen3-8b gate/up", 12288, 4096, 64, 36),
    ("qwen3-8b down", 4096, 12288, 64, 36), ("qwen3-8b head", 151936, 4096, 64, 2),
    ("smollm2 gate/up", 1536, 576, 32, 30), ("smollm2 down", 576, 1536, 32, 30),
]
CONFIGS = [(1, 8), (2, 4), (4, 4)]
print(f"device {mx.default_device()}")
print(f"{'shape':<18}{'dtype':>6}{'MB':>8}  {'MLX qmv ms':>10} {'GB/s':>6}  " + "  ".join(f"R{r}xW{w} ms (GB/s) err" for r, w in CONFIGS))
for name, n, k, group, copies in SHAPES:
    mats = []
    for _ in range(copies):
        q = mx.quantize(mx.random.normal((n, k), dtype=mx.float16) * 0.02, group_size=group, bits=4)
        mx.eval(*q)
        mats.append(q)
    nbytes = sum(a.nbytes for a in mats[0]) * copies
    for dname, dt in (("f16", mx.float16), ("bf16", mx.bfloat16)) + ((("f32", mx.float32),) if name.startswith("smollm2") else ()):
        ms = [(m[0], m[1].astype(dt), m[2].astype(dt)) for m in mats]
        mx.eval(*[a for m in ms for a in m])
        x = mx.random.normal((1, k)).astype(dt)
        mx.eval(x)
        t_mlx = timed(lambda: [mx.quantized_matmul(x, *m, transpose=True, group_size=group, bits=4) for m in ms])
        ref = mx.quantized_matmul(x.astype(mx.float32), ms[0][0], ms[0][1].astype(mx.float32), ms[0][2].astype(mx.float32),
                                  transpose=True, group_size=group, bits=4).reshape(-1)
        mlx_err = (mx.abs(mx.quantized_matmul(x, *ms[0], transpose=True, group_size=group, bits=4).reshape(-1).astype(mx.float32) - ref).max() / mx.abs(ref).max()).item()
        cells = []
        for r, w in CONFIGS:
            try:
                out = qmv(x, *ms[0], group, r, w).astype(mx.float32)
                err = (mx.abs(out - ref).max() / mx.abs(ref).max()).item()
                t = timed(lambda: [qmv(x, *m, group, r, w) for m in ms])
                cells.append(f"{t:8.3f} ({nbytes / t / 1e6:5.0f}) {err:.0e}")
            except Exception as e:  # a kernel that fails to build or run is reported, not fatal
                cells.append(f"failed: {str(e)[:60]}")
        print(f"{name:<18}{dname:>6}{nbytes / 1e6:8.1f}  {t_mlx:10.3f} {nbytes / t_mlx / 1e6:6.0f}  " + "  ".join(cells) + f"  (MLX err {mlx_err:.0e})", flush=True)
    del mats, ms

# What a step's log-probs cost to read on the host: the head and log-softmax of one row, then the
# [49152] f32 row copied out (as Laya's decisions read it), against evaluating it alone.
w = mx.quantize(mx.random.normal((49152, 576), dtype=mx.float16) * 0.02, group_size=32, bits=8)
w = (w[0], w[1].astype(mx.float32), w[2].astype(mx.float32))
x = mx.random.normal((1, 576))
mx.eval(*w, x)


def lp():
    logits = mx.quantized_matmul(x, *w, transpose=True, group_size=32, bits=8)
    return logits - mx.logsumexp(logits, axis=-1, keepdims=True)


t_eval = timed(lambda: lp(), 50)
ts = []
for _ in range(50):
    t = time.perf_counter()
    a = bytes(memoryview(lp()))  # evaluates, then copies the row out as Laya's as_slice().to_vec() does
    ts.append((time.perf_counter() - t) * 1e3)
print(f"head + log-softmax, evaluated: {t_eval:.3f} ms; evaluated and read on the host: {statistics.median(ts):.3f} ms")
