// Laya's CPU kernel for MLX's affine quantized matmul (4- and 8-bit, group sizes that are
// multiples of 32), registered as a custom MLX primitive so it runs inside MLX's graph on the
// CPU stream, vectorized (AVX-512 or AVX2+FMA, chosen at run time) and split across cores.
//
//   out[m, n] = sum_k x[m, k] * (q[n, k] * scales[n, k / G] + biases[n, k / G])
//
// MLX's own CPU quantized matmul is scalar (about 1.7 GMAC/s here); this is the one hot spot of a
// small model's forward on x86. Metal and CUDA keep MLX's kernels: Rust only calls this on the CPU.
//
// Layouts (MLX's): x [..., K] f32 row-major; w [N, K * bits / 32] u32, element i of a row at bits
// [bits * (i % (32 / bits)), ...) of word i / (32 / bits), i.e. low bits first; scales and biases
// [N, K / G] f32.

#include "common.h"

namespace laya {

// Reorders x so that a 4-bit 32-block's unpacked nibbles meet their x values: for vectors of L
// lanes, bytes [h*L, h*L+L) of a block unpack to elements 2i+p (p = 0 low nibble, 1 high).
void permute_for_nibbles(const float* x, float* xp, int M, int K, int L) {
  for (int m = 0; m < M; ++m) {
    const float* src = x + static_cast<size_t>(m) * K;
    float* dst = xp + static_cast<size_t>(m) * K;
    for (int k0 = 0; k0 < K; k0 += 32) {
      int o = 0;
      for (int h = 0; h < 32 / (2 * L); ++h)
        for (int p = 0; p < 2; ++p)
          for (int i = 0; i < L; ++i) dst[k0 + o++] = src[k0 + h * 2 * L + 2 * i + p];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scalar reference (also the fallback on CPUs without AVX2).

void qmm_scalar(const Qmm& q, int n0, int n1) {
  const int per_word = 32 / q.bits, mask = (1 << q.bits) - 1, groups = q.K / q.G;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(q.w);
  const int words = q.K / per_word;
  for (int n = n0; n < n1; ++n)
    for (int m = 0; m < q.M; ++m) {
      const float* x = q.x + static_cast<size_t>(m) * q.K;
      float acc = 0;
      for (int k = 0; k < q.K; ++k) {
        uint32_t v = (w[static_cast<size_t>(n) * words + k / per_word] >> (q.bits * (k % per_word))) & mask;
        int g = k / q.G;
        acc += x[k] * (static_cast<float>(v) * q.s[n * groups + g] + q.b[n * groups + g]);
      }
      q.out[static_cast<size_t>(m) * q.N + n] = acc;
    }
}

// ---------------------------------------------------------------------------------------------
// AVX-512: tiles of NT weight rows x MT input rows. Each 32-element block of a weight row is
// dequantized once into two 16-float vectors (w = q * scale + bias) and multiplied into MT x NT
// accumulators, which are summed across lanes at the end.

template <int BITS, int MT, int NT>
__attribute__((target("avx512f,avx512bw"))) void tile_avx512(const Qmm& q, int m0, int n0) {
  __m512 acc[MT][NT];
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j) acc[i][j] = _mm512_setzero_ps();
  const int groups = q.K / q.G;
  const size_t rb = q.row_bytes();
  const __m512i low4 = _mm512_set1_epi32(0xF);
  for (int k0 = 0; k0 < q.K; k0 += 32) {
    const int g = k0 / q.G;
    __m512 w0[NT], w1[NT];
    for (int j = 0; j < NT; ++j) {
      const int n = n0 + j;
      const __m512 sc = _mm512_set1_ps(q.s[n * groups + g]);
      const __m512 bi = _mm512_set1_ps(q.b[n * groups + g]);
      const uint8_t* p = q.w + n * rb + static_cast<size_t>(k0) * BITS / 8;
      __m512i v0, v1;
      if constexpr (BITS == 4) {
        const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        v0 = _mm512_and_si512(v, low4);
        v1 = _mm512_srli_epi32(v, 4);
      } else {
        v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        v1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
      }
      w0[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v0), sc, bi);
      w1[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v1), sc, bi);
    }
    for (int i = 0; i < MT; ++i) {
      const float* xr = q.x + static_cast<size_t>(m0 + i) * q.K + k0;
      const __m512 x0 = _mm512_loadu_ps(xr), x1 = _mm512_loadu_ps(xr + 16);
      for (int j = 0; j < NT; ++j) {
        acc[i][j] = _mm512_fmadd_ps(w0[j], x0, acc[i][j]);
        acc[i][j] = _mm512_fmadd_ps(w1[j], x1, acc[i][j]);
      }
    }
  }
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j)
      q.out[static_cast<size_t>(m0 + i) * q.N + n0 + j] = _mm512_reduce_add_ps(acc[i][j]);
}

// ---------------------------------------------------------------------------------------------
// AVX2 + FMA: the same with 8-float vectors; a 32-block is four of them.

template <int BITS, int MT, int NT>
__attribute__((target("avx2,fma"))) void tile_avx2(const Qmm& q, int m0, int n0) {
  __m256 acc[MT][NT];
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j) acc[i][j] = _mm256_setzero_ps();
  const int groups = q.K / q.G;
  const size_t rb = q.row_bytes();
  const __m256i low4 = _mm256_set1_epi32(0xF);
  for (int k0 = 0; k0 < q.K; k0 += 32) {
    const int g = k0 / q.G;
    for (int h = 0; h < 2; ++h) {  // two halves of 16 elements
      __m256 wa[NT], wb[NT];
      for (int j = 0; j < NT; ++j) {
        const int n = n0 + j;
        const __m256 sc = _mm256_set1_ps(q.s[n * groups + g]);
        const __m256 bi = _mm256_set1_ps(q.b[n * groups + g]);
        const uint8_t* p = q.w + n * rb + static_cast<size_t>(k0) * BITS / 8;
        __m256i va, vb;
        if constexpr (BITS == 4) {
          const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * h)));
          va = _mm256_and_si256(v, low4);
          vb = _mm256_srli_epi32(v, 4);
        } else {
          va = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 16 * h)));
          vb = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 16 * h + 8)));
        }
        wa[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(va), sc, bi);
        wb[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(vb), sc, bi);
      }
      for (int i = 0; i < MT; ++i) {
        const float* xr = q.x + static_cast<size_t>(m0 + i) * q.K + k0 + 16 * h;
        const __m256 xa = _mm256_loadu_ps(xr), xb = _mm256_loadu_ps(xr + 8);
        for (int j = 0; j < NT; ++j) {
          acc[i][j] = _mm256_fmadd_ps(wa[j], xa, acc[i][j]);
          acc[i][j] = _mm256_fmadd_ps(wb[j], xb, acc[i][j]);
        }
      }
    }
  }
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j) q.out[static_cast<size_t>(m0 + i) * q.N + n0 + j] = hsum256(acc[i][j]);
}

// Tiles ahead to prefetch: one thread streamed a decode step's weights at ~3 GB/s without it (the
// hardware prefetcher does not follow four rows read 16 bytes at a time); 1, 2 or 4 tiles ahead
// all gave the same, 40 -> 34 ms for decode_64 on one thread.
constexpr int PF = 2;

// Brings the scales and biases of weight rows [n, n + rows) into cache (the one-row kernels' tiles
// ahead: their weights are prefetched block by block, their scales here once per tile).
inline void prefetch_scales(const Qmm& q, int n, int rows) {
  const int groups = q.K / q.G;
  for (int j = 0; j < rows; ++j)
    for (int g = 0; g < groups; g += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(q.s + (n + j) * groups + g), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(q.b + (n + j) * groups + g), _MM_HINT_T0);
    }
}

// The bias part of weight row n's dot product with a one-row x: sum over groups of b * sum(x).
__attribute__((target("avx2,fma"))) inline float bias_term(const Qmm& q, int n) {
  const int groups = q.K / q.G;
  const float* b = q.b + static_cast<size_t>(n) * groups;
  __m256 bs = _mm256_setzero_ps();
  int g = 0;
  for (; g + 8 <= groups; g += 8) bs = _mm256_fmadd_ps(_mm256_loadu_ps(b + g), _mm256_loadu_ps(q.sx + g), bs);
  float bias = hsum256(bs);
  for (; g < groups; ++g) bias += b[g] * q.sx[g];
  return bias;
}

// One weight row's 32-block times x in 16 bits (xe: the x of its low nibbles or first 16 bytes):
// eight 32-bit partial sums.
template <int BITS>
__attribute__((target("avx2,fma"))) inline __m256i dot16(const uint8_t* p, __m256i xe, __m256i xo) {
  if constexpr (BITS == 4) {
    const __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256i low4 = _mm256_set1_epi16(0xF);
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_and_si256(v, low4), xe),
                            _mm256_madd_epi16(_mm256_srli_epi16(v, 4), xo));
  } else {  // 8-bit: bytes in element order, x unpermuted (xe, xo: the block's two halves)
    const __m256i v0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256i v1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
    return _mm256_add_epi32(_mm256_madd_epi16(v0, xe), _mm256_madd_epi16(v1, xo));
  }
}

// Eight 32-blocks' int32 partial sums (eight lanes each) summed within each block: lane k of the
// result is block k's dot product. Summed as a tree of adjacent-pair adds, the last step adding
// the two 128-bit halves.
__attribute__((target("avx2,fma"))) inline __m256i sum_each(__m256i d0, __m256i d1, __m256i d2, __m256i d3, __m256i d4,
                                                             __m256i d5, __m256i d6, __m256i d7) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(d0, d1), _mm256_hadd_epi32(d2, d3));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(d4, d5), _mm256_hadd_epi32(d6, d7));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

// One block of tile_avx2_row_q16 the plain way: its sum converted to float and scaled on its own.
template <int BITS, int NT>
__attribute__((target("avx2,fma"))) inline void one_block_q16(const Qmm& q, int n0, int blk, __m256 acc[NT]) {
  const int groups = q.K / q.G, g = blk / (q.G / 32);
  const size_t rb = q.row_bytes();
  const __m256i xe = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.xq + 32 * blk));
  const __m256i xo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.xq + 32 * blk + 16));
  const float d = q.dx[blk];
  const uint8_t* p0 = q.w + n0 * rb + 4 * BITS * static_cast<size_t>(blk);
  if (!q.wide[blk]) {
    for (int j = 0; j < NT; ++j) {
      const uint8_t* p = p0 + j * rb;
      _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb), _MM_HINT_T0);
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot16<BITS>(p, xe, xo)), _mm256_set1_ps(q.s[(n0 + j) * groups + g] * d), acc[j]);
    }
  } else {
    const __m256i re = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.xr + 32 * blk));
    const __m256i ro = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.xr + 32 * blk + 16));
    const float r = q.dr[blk];
    for (int j = 0; j < NT; ++j) {
      const uint8_t* p = p0 + j * rb;
      _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb), _MM_HINT_T0);
      const __m256 sd = _mm256_set1_ps(q.s[(n0 + j) * groups + g]);
      const __m256 part = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot16<BITS>(p, xe, xo)), _mm256_set1_ps(d),
                                          _mm256_mul_ps(_mm256_cvtepi32_ps(dot16<BITS>(p, re, ro)), _mm256_set1_ps(r)));
      acc[j] = _mm256_fmadd_ps(part, sd, acc[j]);
    }
  }
}

// Block k (of eight) of a row's chunk times x in 16 bits (see dot16).
template <int BITS>
__attribute__((target("avx2,fma"))) inline __m256i dot16_at(const uint8_t* p, const int16_t* x, int k) {
  return dot16<BITS>(p + 4 * BITS * k, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * k)),
                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * k + 16)));
}

// AVX2 for one input row (a decode step, the output head of one position), with x in 16 bits.
// The weights are not dequantized: per group, out = s * sum(q * x) + b * sum(x), and the bias term
// is one dot product per weight row over the groups (`bias_term`). The weights are widened to 16-bit
// integers and multiplied into x by pmaddwd, so one sum per 32-block is converted to float; the
// float kernel this replaced converted every weight (four conversions per block, on a single pipe
// on Zen 1) and took 18.5 ms for one decode step's weights on one thread, this one 11.5 ms (see
// docs/benchmarks.md, "On the CPU"). x is quantized per 32-block (its largest element to 32767),
// which moves a block's dot product by at most dx / 2 * sum(q), ~1.5e-5 of the block's largest
// input; a block whose largest element dwarfs the rest also carries its residual. Rows with NaN or
// infinity take the many-row kernel above.
template <int BITS, int NT>
__attribute__((target("avx2,fma"))) void tile_avx2_row_q16(const Qmm& q, int n0) {
  const int groups = q.K / q.G, blocks = q.K / 32;
  const size_t rb = q.row_bytes();
  __m256 acc[NT];
  for (int j = 0; j < NT; ++j) acc[j] = _mm256_setzero_ps();
  prefetch_scales(q, n0 + PF * NT, NT);
  const uint8_t* w0 = q.w + n0 * rb;
  int blk = 0;
  // With a scale per block (GGUF's 32-blocks), eight blocks at a time: each block's integer sum
  // is reduced to one lane first, so the conversion to float and the scaling (the row's eight
  // scales, one load, times x's eight steps) are done once per eight blocks instead of once per
  // block. Per row and block that leaves the load, the widening and the two multiply-adds;
  // before, the scalar scale, its broadcast and the conversion were as many again (perf annotate
  // on Zen 3). Blocks that carry a residual take the plain way.
  if (q.G == 32) {
    for (; blk + 8 <= blocks; blk += 8) {
      uint64_t any_wide;
      std::memcpy(&any_wide, q.wide + blk, sizeof any_wide);
      if (any_wide != 0) {
        for (int b = blk; b < blk + 8; ++b) one_block_q16<BITS, NT>(q, n0, b, acc);
        continue;
      }
      const __m256 dx = _mm256_loadu_ps(q.dx + blk);
      const int16_t* x = q.xq + 32 * blk;
      for (int j = 0; j < NT; ++j) {
        const uint8_t* p = w0 + j * rb + 4 * BITS * static_cast<size_t>(blk);
        _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb + 64), _MM_HINT_T0);
        if constexpr (BITS == 8) {
          _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb + 128), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(p + PF * NT * rb + 192), _MM_HINT_T0);
        }
        const __m256i sums = sum_each(dot16_at<BITS>(p, x, 0), dot16_at<BITS>(p, x, 1), dot16_at<BITS>(p, x, 2), dot16_at<BITS>(p, x, 3),
                                      dot16_at<BITS>(p, x, 4), dot16_at<BITS>(p, x, 5), dot16_at<BITS>(p, x, 6), dot16_at<BITS>(p, x, 7));
        const __m256 sd = _mm256_mul_ps(_mm256_loadu_ps(q.s + static_cast<size_t>(n0 + j) * groups + blk), dx);
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), sd, acc[j]);
      }
    }
  }
  for (; blk < blocks; ++blk) one_block_q16<BITS, NT>(q, n0, blk, acc);
  for (int j = 0; j < NT; ++j) q.out[n0 + j] = hsum256(acc[j]) + bias_term(q, n0 + j);
}

// One 32-block (v, largest magnitude amax) in 16 bits, in the order tile_avx2_row_q16 reads; its
// step is amax / 32767. With `rest`, also what the 16 bits missed, v - step * q, in element order
// (the rounded values never reach 32768, so packing below does not clip them).
__attribute__((target("avx2,fma"))) void q16_block(const __m256 v[4], float amax, int bits, int16_t* out, __m256* rest) {
  const __m256i evens_then_odds = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256 inv = _mm256_set1_ps(amax > 0 ? 32767.0f / amax : 0.0f);
  __m256i r[4];
  for (int i = 0; i < 4; ++i) r[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], inv));
  if (rest) {
    const __m256 step = _mm256_set1_ps(amax / 32767.0f);
    for (int i = 0; i < 4; ++i) rest[i] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(r[i]), step, v[i]);
  }
  __m256i lo, hi;
  if (bits == 4) {
    for (int i = 0; i < 4; ++i) r[i] = _mm256_permutevar8x32_epi32(r[i], evens_then_odds);
    // packs works within 128-bit lanes: a = [evens of 0-15 | odds of 0-15], b the same for 16-31.
    const __m256i a = _mm256_packs_epi32(r[0], r[1]), b = _mm256_packs_epi32(r[2], r[3]);
    lo = _mm256_permute2x128_si256(a, b, 0x20);
    hi = _mm256_permute2x128_si256(a, b, 0x31);
  } else {
    // packs gives [0-3, 8-11 | 4-7, 12-15]; the 64-bit shuffle puts them in order.
    lo = _mm256_permute4x64_epi64(_mm256_packs_epi32(r[0], r[1]), 0xD8);
    hi = _mm256_permute4x64_epi64(_mm256_packs_epi32(r[2], r[3]), 0xD8);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16), hi);
}

__attribute__((target("avx2,fma"))) float hmax256(__m256 m) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// A block is wide when its largest element is over 8 times its mean magnitude (about 10 times the
// others'): then 16 bits of the largest would leave the rest with 12 or fewer, and the residual
// is kept. Normal activations are far from it; the first position's massive ones are not.
constexpr float kWide = 8.0f;

// Quantizes one row of x (K a multiple of 32) for tile_avx2_row_q16: for 4-bit weights each block's
// even elements, then its odd ones; for 8-bit, in order. False when x holds a value that is not
// finite; the many-row kernel takes such a row, so that it comes out as MLX's would.
__attribute__((target("avx2,fma"))) bool quantize_row_q16(const float* x, int K, int bits, int16_t* xq, float* dx,
                                                          uint8_t* wide, int16_t* xr, float* dr) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  for (int blk = 0; blk < K / 32; ++blk) {
    const float* xb = x + 32 * blk;
    __m256 v[4];
    __m256 m = _mm256_setzero_ps(), sum = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(xb + 8 * i);
      const __m256 a = _mm256_and_ps(v[i], magnitude);
      m = _mm256_max_ps(m, a);
      sum = _mm256_add_ps(sum, a);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[i], v[i], _CMP_UNORD_Q));
    }
    const float amax = hmax256(m);
    if (_mm256_movemask_ps(nan) != 0 || !std::isfinite(amax)) return false;
    dx[blk] = amax / 32767.0f;
    wide[blk] = amax * 32 > kWide * hsum256(sum);
    __m256 rv[4];
    q16_block(v, amax, bits, xq + 32 * blk, wide[blk] ? rv : nullptr);
    if (!wide[blk]) continue;
    __m256 rm = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) rm = _mm256_max_ps(rm, _mm256_and_ps(rv[i], magnitude));
    const float rmax = hmax256(rm);
    dr[blk] = rmax / 32767.0f;
    q16_block(rv, rmax, bits, xr + 32 * blk, nullptr);
  }
  return true;
}

// The input's sum over each quantization group (permuting within 32-blocks keeps them).
std::vector<float> group_sums(const Qmm& q) {
  std::vector<float> sx(q.K / q.G);
  for (int g = 0; g < q.K / q.G; ++g) {
    float t = 0;
    for (int k = g * q.G; k < (g + 1) * q.G; ++k) t += q.x[k];
    sx[g] = t;
  }
  return sx;
}

// ---------------------------------------------------------------------------------------------
// AVX-512 VNNI for one input row, with x in 8 bits twice: vpdpbusd multiplies 64 unsigned
// weight bytes by 64 signed bytes of x and sums each four into a 32-bit lane, so a pair of
// 32-blocks costs one instruction where the float kernel above converts and multiplies every
// weight. As in tile_avx2_row_q16, the weights are not dequantized: per block, s * (dx * sum(q *
// xq) + dr * sum(q * xr)), and the bias term once per row over the groups.
//
// x is 8 bits and then 8 bits of what they missed (quantize_row_q8). 8 bits alone moved the
// default model's log-probs by up to 0.85 after 30 layers (every block loses ~1/254 of its
// largest element, and the first position's massive activations swamp their blocks); with the
// residual a block keeps about 15 bits, as the 16-bit kernel does, for ~8% more time. A wide
// block (see kWide) takes a third pass, as the 16-bit kernel's wide blocks take a second. On one
// thread a decode step's matmuls took ~13 ms with floats and ~8.5 ms here (docs/benchmarks.md,
// "On the CPU").
//
// Layout of x, per pair of 32-blocks A and B: for 4-bit weights [A's even elements, B's even,
// A's odd, B's odd], 16 each, which is where the pair's 32 weight bytes land when their low
// nibbles fill the lower half of a vector and their high nibbles the upper half; for 8-bit
// weights A then B, in order. So in a vector of 16 sums, lanes 0-3 and 8-11 (4-bit) or 0-7
// (8-bit) are A's and the rest B's.
template <int BITS, int NT>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void tile_avx512_row_q8(const Qmm& q, int n0) {
  const int groups = q.K / q.G, per_group = q.G / 32;
  const size_t rb = q.row_bytes();
  constexpr __mmask16 B_LANES = BITS == 4 ? 0xF0F0 : 0xFF00;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m512 acc[NT];
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
  prefetch_scales(q, n0 + PF * NT, NT);
  for (int p = 0; p < q.K / 64; ++p) {
    const int a = 2 * p, b = 2 * p + 1;
    const __m512i xv = _mm512_loadu_si512(q.x8 + 64 * p);
    const __m512i rv = _mm512_loadu_si512(q.x8r + 64 * p);
    const __m512 dxv = _mm512_mask_blend_ps(B_LANES, _mm512_set1_ps(q.dx[a]), _mm512_set1_ps(q.dx[b]));
    const __m512 drv = _mm512_mask_blend_ps(B_LANES, _mm512_set1_ps(q.dr[a]), _mm512_set1_ps(q.dr[b]));
    const int ga = a / per_group, gb = b / per_group;
    const bool wide = q.wide[a] | q.wide[b];
    for (int j = 0; j < NT; ++j) {
      const uint8_t* wp = q.w + (n0 + j) * rb + static_cast<size_t>(8 * BITS) * p;
      _mm_prefetch(reinterpret_cast<const char*>(wp + PF * NT * rb), _MM_HINT_T0);
      __m512i wv;
      if constexpr (BITS == 4) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp));
        wv = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(raw, low4)),
                                _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4), 1);
      } else {
        wv = _mm512_loadu_si512(wp);
      }
      const float* sr = q.s + static_cast<size_t>(n0 + j) * groups;
      const __m512 sv = _mm512_mask_blend_ps(B_LANES, _mm512_set1_ps(sr[ga]), _mm512_set1_ps(sr[gb]));
      const __m512 hi = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, xv));
      const __m512 lo = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, rv));
      __m512 d = _mm512_fmadd_ps(hi, dxv, _mm512_mul_ps(lo, drv));
      if (wide) {
        const __m512i tv = _mm512_loadu_si512(q.x8w + 64 * p);
        const __m512 dwv = _mm512_mask_blend_ps(B_LANES, _mm512_set1_ps(q.dw[a]), _mm512_set1_ps(q.dw[b]));
        d = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, tv)), dwv, d);
      }
      acc[j] = _mm512_fmadd_ps(d, sv, acc[j]);
    }
  }
  for (int j = 0; j < NT; ++j) q.out[n0 + j] = _mm512_reduce_add_ps(acc[j]) + bias_term(q, n0 + j);
}

// 16 floats to 16 bytes, each rounded to the nearest integer after scaling by `inv` (|v * inv|
// <= 127 by the choice of inv, so nothing saturates).
__attribute__((target("avx512f,avx512bw"))) inline __m128i to_q8(__m512 v, __m512 inv) {
  return _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v, inv)));
}

// Quantizes one row of x (K a multiple of 64) for tile_avx512_row_q8: per 32-block, its largest
// magnitude to 127 (step dx), then what that missed, its own largest to 127 (step dr), and for a
// wide block what both missed (step dw; zeros elsewhere). False when x holds a value that is not
// finite.
__attribute__((target("avx512f,avx512bw"))) bool quantize_row_q8(const float* x, int K, int bits, int8_t* xq, float* dx,
                                                                 int8_t* xr, float* dr, uint8_t* wide, int8_t* xw,
                                                                 float* dw) {
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int blk = 0; blk < K / 32; ++blk) {
    const __m512 v0 = _mm512_loadu_ps(x + 32 * blk), v1 = _mm512_loadu_ps(x + 32 * blk + 16);
    if (_mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q) || _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q)) return false;
    const __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    if (!std::isfinite(amax)) return false;
    wide[blk] = amax * 32 > kWide * _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    // The block's 32 bytes within its pair's 64 (see tile_avx512_row_q8): for 4-bit weights its
    // even elements at `first` and its odd ones 32 further; for 8-bit elements 0-15 then 16-31.
    const int p = blk / 2, second = blk % 2;
    const int first = bits == 4 ? 64 * p + 16 * second : 64 * p + 32 * second;
    const int then = bits == 4 ? first + 32 : first + 16;
    __m512 e = v0, o = v1;
    if (bits == 4) {
      e = _mm512_permutex2var_ps(v0, evens, v1);
      o = _mm512_permutex2var_ps(v0, odds, v1);
    }
    const float step = amax / 127.0f;
    dx[blk] = step;
    const __m512 inv = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
    const __m128i qe = to_q8(e, inv), qo = to_q8(o, inv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xq + first), qe);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xq + then), qo);
    const __m512 st = _mm512_set1_ps(step);
    const __m512 re = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(qe)), st, e);
    const __m512 ro = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(qo)), st, o);
    const float rmax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(re), _mm512_abs_ps(ro)));
    dr[blk] = rmax / 127.0f;
    const __m512 rinv = _mm512_set1_ps(rmax > 0 ? 127.0f / rmax : 0.0f);
    const __m128i re8 = to_q8(re, rinv), ro8 = to_q8(ro, rinv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xr + first), re8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xr + then), ro8);
    __m128i te8 = _mm_setzero_si128(), to8 = _mm_setzero_si128();
    dw[blk] = 0;
    if (wide[blk]) {
      const __m512 rst = _mm512_set1_ps(dr[blk]);
      const __m512 te = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(re8)), rst, re);
      const __m512 to = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ro8)), rst, ro);
      const float tmax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(te), _mm512_abs_ps(to)));
      dw[blk] = tmax / 127.0f;
      const __m512 tinv = _mm512_set1_ps(tmax > 0 ? 127.0f / tmax : 0.0f);
      te8 = to_q8(te, tinv);
      to8 = to_q8(to, tinv);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xw + first), te8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xw + then), to8);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Tiling: weight rows [n0, n1) in tiles of NT, input rows in tiles of MT, tails in smaller tiles.

template <int BITS, int MT, int NT, bool AVX512>
inline void tile(const Qmm& q, int m0, int n0) {
  if constexpr (AVX512)
    tile_avx512<BITS, MT, NT>(q, m0, n0);
  else
    tile_avx2<BITS, MT, NT>(q, m0, n0);
}

template <int BITS, int MT, bool AVX512>
void rows(const Qmm& q, int m0, int n0, int n1) {
  constexpr int NT = AVX512 ? 4 : 2;
  int n = n0;
  for (; n + NT <= n1; n += NT) tile<BITS, MT, NT, AVX512>(q, m0, n);
  for (; n < n1; ++n) tile<BITS, MT, 1, AVX512>(q, m0, n);
}

template <int BITS, bool AVX512>
void qmm_simd(const Qmm& q, int n0, int n1) {
  if constexpr (AVX512) {
    if (q.M == 1 && q.x8) {
      int n = n0;
      for (; n + 4 <= n1; n += 4) tile_avx512_row_q8<BITS, 4>(q, n);
      for (; n < n1; ++n) tile_avx512_row_q8<BITS, 1>(q, n);
      return;
    }
  }
  if constexpr (!AVX512) {
    if (q.M == 1 && q.xq) {
      int n = n0;
      for (; n + 4 <= n1; n += 4) tile_avx2_row_q16<BITS, 4>(q, n);
      for (; n < n1; ++n) tile_avx2_row_q16<BITS, 1>(q, n);
      return;
    }
  }
  // Walk weight rows in chunks that stay in L2 while every input row passes over them.
  constexpr int MT = 4;
  const int chunk = std::max(4, static_cast<int>((256 * 1024) / std::max<size_t>(1, q.row_bytes())) & ~3);
  for (int c0 = n0; c0 < n1; c0 += chunk) {
    const int c1 = std::min(n1, c0 + chunk);
    int m = 0;
    for (; m + MT <= q.M; m += MT) rows<BITS, MT, AVX512>(q, m, c0, c1);
    switch (q.M - m) {
      case 3: rows<BITS, 3, AVX512>(q, m, c0, c1); break;
      case 2: rows<BITS, 2, AVX512>(q, m, c0, c1); break;
      case 1: rows<BITS, 1, AVX512>(q, m, c0, c1); break;
      default: break;
    }
  }
}

void qmm_range(const Qmm& q, int n0, int n1) {
  const bool four = q.bits == 4;
  switch (isa()) {
    case Isa::Avx512:
    case Isa::Avx512Vnni: four ? qmm_simd<4, true>(q, n0, n1) : qmm_simd<8, true>(q, n0, n1); break;
    case Isa::Avx2: four ? qmm_simd<4, false>(q, n0, n1) : qmm_simd<8, false>(q, n0, n1); break;
    default: qmm_scalar(q, n0, n1); break;
  }
}


void qmm(Qmm q) {
  std::vector<float> sx;
  std::vector<int16_t> xq;
  std::vector<float> dx;
  std::vector<uint8_t> wide;
  if (q.M == 1 && isa() == Isa::Avx2) {
    sx = group_sums(q);
    q.sx = sx.data();
    xq.resize(2 * q.K);
    dx.resize(2 * (q.K / 32));
    wide.resize(q.K / 32);
    if (quantize_row_q16(q.x, q.K, q.bits, xq.data(), dx.data(), wide.data(), xq.data() + q.K, dx.data() + q.K / 32)) {
      q.xq = xq.data();
      q.dx = dx.data();
      q.wide = wide.data();
      q.xr = xq.data() + q.K;
      q.dr = dx.data() + q.K / 32;
    }
  }
  std::vector<int8_t> x8;
  if (q.M == 1 && isa() == Isa::Avx512Vnni && q.K % 64 == 0) {
    sx = group_sums(q);
    q.sx = sx.data();
    const int blocks = q.K / 32;
    x8.resize(3 * q.K);
    dx.resize(3 * blocks);
    wide.resize(blocks);
    if (quantize_row_q8(q.x, q.K, q.bits, x8.data(), dx.data(), x8.data() + q.K, dx.data() + blocks, wide.data(),
                        x8.data() + 2 * q.K, dx.data() + 2 * blocks)) {
      q.x8 = x8.data();
      q.x8r = x8.data() + q.K;
      q.x8w = x8.data() + 2 * q.K;
      q.dx = dx.data();
      q.dr = dx.data() + blocks;
      q.dw = dx.data() + 2 * blocks;
      q.wide = wide.data();
    }
  }
  std::vector<float> permuted;
  if (q.bits == 4 && isa() != Isa::Scalar && !q.xq && !q.x8) {
    permuted.resize(static_cast<size_t>(q.M) * q.K);
    permute_for_nibbles(q.x, permuted.data(), q.M, q.K, lanes());
    q.x = permuted.data();
  }
  Pool& pool = Pool::get();
  const double macs = static_cast<double>(q.M) * q.N * q.K;
  // Tiny matmuls stay on the calling thread: the hand-off costs more than it saves. Measured
  // (laya bench, A/B interleaved): with a whole layer in one MLX node, MLX's own threads are idle
  // during a block and splitting even a decode step's 0.5M multiply-adds pays (decode_512 12.7 ->
  // 10.3 ms); before that fusion, MLX's two busy threads made a third spinning one a loss.
  if (pool.threads() == 1 || macs < kParallelMacs || q.N < 16 * pool.threads()) {
    qmm_range(q, 0, q.N);
    return;
  }
  // Chunks of whole 4-row tiles, a few per thread, so a late helper costs at most one chunk.
  const int tiles = (q.N + 3) / 4;
  const int chunks = std::min(tiles, 4 * pool.threads());
  pool.run(chunks, [&](int c) {
    const int t0 = tiles * c / chunks, t1 = tiles * (c + 1) / chunks;
    qmm_range(q, std::min(q.N, 4 * t0), std::min(q.N, 4 * t1));
  });
}

// ---------------------------------------------------------------------------------------------
// The MLX primitive.

class LayaQuantizedMatmul : public mx::Primitive {
 public:
  LayaQuantizedMatmul(mx::Stream s, int group, int bits) : mx::Primitive(s), group_(group), bits_(bits) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    const auto& x = inputs[0];
    const auto& w = inputs[1];
    const auto& s = inputs[2];
    const auto& b = inputs[3];
    auto& out = outputs[0];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    const int K = x.shape(-1), N = w.shape(0), M = static_cast<int>(x.size() / K);
    auto& enc = mx::cpu::get_command_encoder(stream());
    enc.set_input_array(x);
    enc.set_input_array(w);
    enc.set_input_array(s);
    enc.set_input_array(b);
    enc.set_output_array(out);
    enc.dispatch([x = mx::array::unsafe_weak_copy(x), w = mx::array::unsafe_weak_copy(w),
                  s = mx::array::unsafe_weak_copy(s), b = mx::array::unsafe_weak_copy(b),
                  out = mx::array::unsafe_weak_copy(out), M, N, K, g = group_, bits = bits_]() mutable {
      // Inputs that are views (a transposed or sliced x) are gathered here rather than through
      // an extra graph node per call.
      std::vector<float> xs, ss, bs;
      std::vector<uint32_t> ws;
      qmm(Qmm{row_major(x, xs), reinterpret_cast<const uint8_t*>(row_major(w, ws)), row_major(s, ss),
              row_major(b, bs), out.data<float>(), M, N, K, g, bits});
    });
  }

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("[laya_quantized_matmul] runs on the CPU only; use quantized_matmul on a GPU");
  }

  const char* name() const override { return "LayaQuantizedMatmul"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto* o = dynamic_cast<const LayaQuantizedMatmul*>(&other);
    return o && o->group_ == group_ && o->bits_ == bits_;
  }

 private:
  int group_, bits_;
};

mx::array make_quantized_matmul(const mx::array& x_in, const mx::array& w, const mx::array& scales,
                                const mx::array& biases, int group, int bits) {
  if (bits != 4 && bits != 8) throw std::invalid_argument("bits must be 4 or 8");
  if (group <= 0 || group % 32 != 0) throw std::invalid_argument("group size must be a multiple of 32");
  if (x_in.dtype() != mx::float32 || scales.dtype() != mx::float32 || biases.dtype() != mx::float32)
    throw std::invalid_argument("x, scales and biases must be float32");
  if (w.dtype() != mx::uint32 || w.ndim() != 2 || scales.ndim() != 2 || biases.shape() != scales.shape())
    throw std::invalid_argument("w must be [N, K*bits/32] uint32 with scales/biases [N, K/group]");
  const int K = x_in.shape(-1), N = w.shape(0);
  if (K % group != 0 || w.shape(1) * 32 / bits != K || scales.shape(0) != N || scales.shape(1) != K / group)
    throw std::invalid_argument("shapes do not match: x [..., " + std::to_string(K) + "], w [" +
                                std::to_string(N) + ", " + std::to_string(w.shape(1)) + "]");
  auto s = mx::default_stream(mx::Device::cpu);
  auto shape = x_in.shape();
  shape.back() = N;
  return mx::array(std::move(shape), mx::float32, std::make_shared<LayaQuantizedMatmul>(s, group, bits),
                   {x_in, w, scales, biases});
}

}  // namespace laya

using namespace laya;

extern "C" {

// Returns 0 and stores a new mlx-c array handle's ctx in *out, or returns 1 with a message.
int laya_quantized_matmul(void** out, const void* x, const void* w, const void* scales, const void* biases,
                          int group, int bits, char* err, size_t err_len) {
  try {
    auto r = make_quantized_matmul(*static_cast<const mx::array*>(x), *static_cast<const mx::array*>(w),
                                   *static_cast<const mx::array*>(scales), *static_cast<const mx::array*>(biases),
                                   group, bits);
    *out = new mx::array(std::move(r));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return 1;
  }
}

}  // extern "C"
