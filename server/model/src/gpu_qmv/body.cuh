// Body of Laya's one-row 4-bit matmul: out [N] = w [N, K] (4-bit, MLX's affine layout: 8 values a
// u32, least significant first; scales and biases [N, K / G]) times x [K]. MLX's JIT wraps it in
// a kernel taking `const T* x, const uint32_t* w, const T* scales, const T* biases, T* out`, with
// T, K, N, G (group size), R (rows a warp) and U (loop unrolling) as compile-time constants.
// Each warp takes R rows; lane l reads 16 bytes (32 values) of each of its rows at a time, so a
// warp reads 512 contiguous bytes a row, and sums in f32, reduced across the warp at the end.
constexpr int KV = K / 32;  // 16-byte words in a row
constexpr int GPR = K / G;  // groups in a row
const int lane = threadIdx.x & 31;
const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
if (row0 >= N) return;
const uint4* w4 = reinterpret_cast<const uint4*>(w);
float acc[R];
#pragma unroll
for (int r = 0; r < R; ++r) acc[r] = 0.f;
#pragma unroll U
for (int v = lane; v < KV; v += 32) {
  uint4 q[R];
#pragma unroll
  for (int r = 0; r < R; ++r) q[r] = __ldg(w4 + (size_t)(row0 + r < N ? row0 + r : N - 1) * KV + v);
  // The 32 activations of this word, column 8j + n scaled by 16^-(n % 4) to undo laya_nibble's
  // 16^k (exact: powers of two), and their plain sum for the groups' biases.
  __align__(16) T xr[32];
#pragma unroll
  for (int i = 0; i < (32 * (int)sizeof(T)) / 16; ++i)
    reinterpret_cast<uint4*>(xr)[i] = reinterpret_cast<const uint4*>(x + v * 32)[i];
  float xs[32];
  float xsum = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float f = laya_f32(xr[i]);
    xsum += f;
    xs[i] = f * (i % 4 == 0 ? 1.f : i % 4 == 1 ? 0.0625f : i % 4 == 2 ? 0.00390625f : 0.000244140625f);
  }
  const int g = (v * 32) / G;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const uint32_t wd[4] = {q[r].x, q[r].y, q[r].z, q[r].w};
    float d = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t hi = wd[j] >> 16;
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        d = fmaf(laya_nibble(wd[j], 0xFu << (4 * n)), xs[8 * j + n], d);
        d = fmaf(laya_nibble(hi, 0xFu << (4 * n)), xs[8 * j + 4 + n], d);
      }
    }
    const size_t sg = (size_t)(row0 + r < N ? row0 + r : N - 1) * GPR + g;
    acc[r] += laya_f32(scales[sg]) * d + laya_f32(biases[sg]) * xsum;
  }
}
#pragma unroll
for (int r = 0; r < R; ++r) {
  float a = acc[r];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
  if (lane == 0 && row0 + r < N) out[row0 + r] = static_cast<T>(a);
}
