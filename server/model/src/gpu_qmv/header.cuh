// Helpers of Laya's one-row 4-bit matmul (body.cuh), compiled by MLX's CUDA JIT ahead of the body.
__device__ __forceinline__ float laya_f32(float v) { return v; }
__device__ __forceinline__ float laya_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float laya_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

// The nibble of `w` under `mask` (0xF << 4k, k < 4) times 16^k, as a float, without a shift
// and an integer-to-float conversion: its bits, ORed into the mantissa of 2^23, give
// 2^23 + q * 16^k exactly. (On an H100 this timed the same as the conversion: the kernel is
// bound by memory, not by these instructions; bench/cuda_qmv_bench.cu.)
__device__ __forceinline__ float laya_nibble(uint32_t w, uint32_t mask) {
  return __uint_as_float((w & mask) | 0x4B000000u) - 8388608.0f;
}
