// Body of Laya's one-row gated MLP input: out [N] = silu(x Wg^T) * (x Wu^T) for two 4-bit [N, K]
// matrices (gate: w, scales, biases; up: w2, scales2, biases2) and x [K], in one kernel: one launch
// and one graph node where MLX takes three (two matmuls and the activation). The same walk as
// body.cuh's, each warp reading its R rows of both matrices; sums in f32, the activation on them.
constexpr int KV = K / 32;  // 16-byte words in a row
constexpr int GPR = K / G;  // groups in a row
const int lane = threadIdx.x & 31;
const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
if (row0 >= N) return;
const uint4* wm[2] = {reinterpret_cast<const uint4*>(w), reinterpret_cast<const uint4*>(w2)};
const T* sm[2] = {scales, scales2};
const T* bm[2] = {biases, biases2};
float acc[2][R];
#pragma unroll
for (int m = 0; m < 2; ++m) {
#pragma unroll
  for (int r = 0; r < R; ++r) acc[m][r] = 0.f;
}
#pragma unroll U
for (int v = lane; v < KV; v += 32) {
  uint4 q[2][R];
#pragma unroll
  for (int m = 0; m < 2; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) q[m][r] = __ldg(wm[m] + (size_t)(row0 + r < N ? row0 + r : N - 1) * KV + v);
  }
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
  for (int m = 0; m < 2; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t wd[4] = {q[m][r].x, q[m][r].y, q[m][r].z, q[m][r].w};
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
      acc[m][r] += laya_f32(sm[m][sg]) * d + laya_f32(bm[m][sg]) * xsum;
    }
  }
}
#pragma unroll
for (int r = 0; r < R; ++r) {
  float gate = acc[0][r], up = acc[1][r];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    gate += __shfl_xor_sync(0xffffffffu, gate, o);
    up += __shfl_xor_sync(0xffffffffu, up, o);
  }
  // MLX rounds each matmul's output to T before the activation; so does this, so that the two
  // paths differ only by the order of the sums.
  const float gt = laya_f32(static_cast<T>(gate)), ut = laya_f32(static_cast<T>(up));
  if (lane == 0 && row0 + r < N) out[row0 + r] = static_cast<T>(gt / (1.f + expf(-gt)) * ut);
}
