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

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mlx/allocator.h"
#include "mlx/array.h"
#include "mlx/backend/cpu/encoder.h"
#include "mlx/ops.h"
#include "mlx/primitives.h"
#include "mlx/stream.h"

namespace mx = mlx::core;

namespace {

// ---------------------------------------------------------------------------------------------
// Instruction set, chosen once.

enum class Isa { Scalar = 0, Avx2 = 2, Avx512 = 3 };

Isa detect_isa() {
  if (const char* f = std::getenv("LAYA_CPU_ISA")) {  // for tests and benchmarks
    std::string s(f);
    if (s == "scalar") return Isa::Scalar;
    if (s == "avx2") return Isa::Avx2;
  }
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  return Isa::Scalar;
}

Isa isa() {
  static const Isa i = detect_isa();
  return i;
}

// Vector width in floats of the chosen ISA (the 4-bit kernels read x in an order that matches it).
int lanes() {
  switch (isa()) {
    case Isa::Avx512: return 16;
    case Isa::Avx2: return 8;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// A small pool. Work is cut into more chunks than threads and every thread, the caller included,
// takes chunks from a shared counter: if a helper is slow to wake (another process holds its
// core on a shared machine), the caller simply does its chunks and never waits for a chunk that
// has not started. Helpers spin briefly before sleeping, because a forward calls the kernel ~200
// times a few microseconds apart.

class Pool {
 public:
  static Pool& get() {
    static Pool p;
    return p;
  }

  int threads() const { return n_; }

  // Runs f(chunk) for chunk in [0, chunks), spread over the threads; returns when all are done.
  void run(int chunks, const std::function<void(int)>& f) {
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    if (n_ == 1 || chunks == 1 || !busy.owns_lock()) {  // nested or concurrent use: run inline
      for (int c = 0; c < chunks; ++c) f(c);
      return;
    }
    job_ = &f;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lk(mu_);
      gen_.fetch_add(1, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) cv_.notify_all();
    take_chunks();
    while (done_.load(std::memory_order_acquire) != chunks) _mm_pause();
    // Helpers that wake late find no chunk left; they only read next_, never job_.
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      gen_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  Pool() {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* e = std::getenv("LAYA_THREADS")) n = std::atoi(e);
    n_ = std::clamp(n, 1, 64);
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this] { work(); });
  }

  void take_chunks() {
    for (;;) {
      const int c = next_.fetch_add(1, std::memory_order_acq_rel);
      if (c >= chunks_) return;
      (*job_)(c);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      int spins = 0;
      while (gen_.load(std::memory_order_acquire) == seen) {
        if (++spins < 4000) {
          _mm_pause();
          continue;
        }
        std::unique_lock<std::mutex> lk(mu_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        cv_.wait(lk, [&] { return gen_.load(std::memory_order_acquire) != seen; });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
      seen = gen_.load(std::memory_order_acquire);
      if (stop_) return;
      take_chunks();
    }
  }

  int n_ = 1;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> next_{0}, done_{0}, sleeping_{0};
  int chunks_ = 0;
  const std::function<void(int)>* job_ = nullptr;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// ---------------------------------------------------------------------------------------------
// The problem, as the kernels see it.

struct Qmm {
  const float* x;      // [M, K], 4-bit: each 32-block permuted to the ISA's nibble order
  const uint8_t* w;    // [N, K * bits / 8] bytes
  const float* s;      // [N, K / G]
  const float* b;      // [N, K / G]
  float* out;          // [M, N]
  int M, N, K, G, bits;
  const float* sx = nullptr;  // [K / G]: x's sum over each group, with xq
  // When M is 1 (AVX2): x in 16 bits, per 32-block: x[k] ~ dx[k / 32] * xq[...]; for 4-bit weights
  // each block's even elements first, then its odd ones (the order of its low and high nibbles).
  const int16_t* xq = nullptr;
  const float* dx = nullptr;
  // Blocks whose largest element dwarfs the rest (the "massive activations" of some positions)
  // also carry what 16 bits missed, in 16 bits again: x ~ dx * xq + dr * xr where wide[block].
  const uint8_t* wide = nullptr;
  const int16_t* xr = nullptr;
  const float* dr = nullptr;
  size_t row_bytes() const { return static_cast<size_t>(K) * bits / 8; }
};

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

__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

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
  const int groups = q.K / q.G, per_group = q.G / 32;
  const size_t rb = q.row_bytes();
  __m256 acc[NT];
  for (int j = 0; j < NT; ++j) acc[j] = _mm256_setzero_ps();
  for (int j = 0; j < NT; ++j)
    for (int g = 0; g < groups; g += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(q.s + (n0 + PF * NT + j) * groups + g), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(q.b + (n0 + PF * NT + j) * groups + g), _MM_HINT_T0);
    }
  for (int g = 0; g < groups; ++g)
    for (int blk = g * per_group; blk < (g + 1) * per_group; ++blk) {
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
    case Isa::Avx512: four ? qmm_simd<4, true>(q, n0, n1) : qmm_simd<8, true>(q, n0, n1); break;
    case Isa::Avx2: four ? qmm_simd<4, false>(q, n0, n1) : qmm_simd<8, false>(q, n0, n1); break;
    default: qmm_scalar(q, n0, n1); break;
  }
}

// Splits the weight rows across the pool when the work is big enough to pay for the hand-off.
const double kParallelMacs = [] {
  const char* e = std::getenv("LAYA_PARALLEL_MACS");
  return e ? std::atof(e) : 2e5;
}();

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
  std::vector<float> permuted;
  if (q.bits == 4 && isa() != Isa::Scalar && !q.xq) {
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

// `a`'s elements in row-major order: its own data when it is laid out so, else a copy in `buf`.
template <typename T>
const T* row_major(const mx::array& a, std::vector<T>& buf) {
  if (a.flags().row_contiguous) return a.data<T>();
  buf.resize(a.size());
  const T* src = a.data<T>();
  const auto& shape = a.shape();
  const auto& strides = a.strides();
  const int nd = a.ndim();
  std::vector<int> idx(nd, 0);
  for (size_t i = 0; i < buf.size(); ++i) {
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += static_cast<int64_t>(idx[d]) * strides[d];
    buf[i] = src[off];
    for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; --d) idx[d] = 0;
  }
  return buf.data();
}

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

mx::array laya_quantized_matmul(const mx::array& x_in, const mx::array& w, const mx::array& scales,
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

void set_error(char* err, size_t len, const char* msg) {
  if (err && len) {
    std::strncpy(err, msg, len - 1);
    err[len - 1] = 0;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Attention for short query blocks (a keystroke, a decode step, scoring candidates) over the KV
// cache, read in place from its buffers: causal, grouped-query, softmax in f32 with a vectorized
// exp. MLX's CPU path copies the cache views, runs two BLAS calls and a scalar softmax per head.

// exp(x) for x <= 0 (softmax arguments after subtracting the max): 2^(x log2 e) as 2^n * 2^f,
// 2^f by a degree-6 polynomial on [-0.5, 0.5] (relative error ~2e-7).
__attribute__((target("avx512f"))) inline __m512 exp512(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f));
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_mul_ps(_mm512_sub_ps(t, n), _mm512_set1_ps(0.69314718055994531f));
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

struct Attn {
  const float* q;  // [B, H, L, D] row-major
  const float* k;  // [B, KVH, >= T, D] with strides below (last dim contiguous)
  const float* v;
  float* out;      // [B, H, L, D]
  int B, H, KVH, L, D, T;  // T = keys visible to the last query (cache offset + L)
  int64_t kb, kh, kt, vb, vh, vt;  // strides of k and v (batch, head, position)
  float scale;
};

// One query row: scores over its visible keys, softmax, weighted sum of values.
__attribute__((target("avx512f"))) void attend_row_avx512(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  const float* kbase = a.k + b * a.kb + kvh * a.kh;
  const float* vbase = a.v + b * a.vb + kvh * a.vh;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const float* kr = kbase + j * a.kt;
    __m512 acc = _mm512_setzero_ps();
    for (int d = 0; d < D; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + d), _mm512_loadu_ps(kr + d), acc);
    const float sc = _mm512_reduce_add_ps(acc) * a.scale;
    scores[j] = sc;
    mx = std::max(mx, sc);
  }
  __m512 sum = _mm512_setzero_ps();
  const __m512 vmx = _mm512_set1_ps(mx);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(scores + j), vmx));
    _mm512_storeu_ps(scores + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (j < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, scores + j), vmx));
    _mm512_mask_storeu_ps(scores + j, m, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(m, e));
  }
  const float inv = 1.0f / _mm512_reduce_add_ps(sum);
  float* o = a.out + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  for (int d0 = 0; d0 < D; d0 += 64) {  // 4 accumulators of 16 lanes per pass
    const int w = std::min(64, D - d0);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int jj = 0; jj < n; ++jj) {
      const __m512 p = _mm512_set1_ps(scores[jj]);
      const float* vr = vbase + jj * a.vt + d0;
      for (int c = 0; c < w / 16; ++c) acc[c] = _mm512_fmadd_ps(p, _mm512_loadu_ps(vr + 16 * c), acc[c]);
    }
    for (int c = 0; c < w / 16; ++c) _mm512_storeu_ps(o + d0 + 16 * c, _mm512_mul_ps(acc[c], _mm512_set1_ps(inv)));
  }
}

// exp(x) for x <= 0 with AVX2: as exp512, 2^n built in the exponent bits (n >= -126 after the
// clamp, so the result stays a normal float).
__attribute__((target("avx2,fma"))) inline __m256 exp256(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f));
  const __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_mul_ps(_mm256_sub_ps(t, n), _mm256_set1_ps(0.69314718055994531f));
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// attend_row_avx512 with 8 lanes (D a multiple of 8); the softmax's tail is scalar.
__attribute__((target("avx2,fma"))) void attend_row_avx2(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  const float* kbase = a.k + b * a.kb + kvh * a.kh;
  const float* vbase = a.v + b * a.vb + kvh * a.vh;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const float* kr = kbase + j * a.kt;
    __m256 acc = _mm256_setzero_ps();
    for (int d = 0; d < D; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kr + d), acc);
    const float sc = hsum256(acc) * a.scale;
    scores[j] = sc;
    mx = std::max(mx, sc);
  }
  __m256 sum = _mm256_setzero_ps();
  const __m256 vmx = _mm256_set1_ps(mx);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(scores + j), vmx));
    _mm256_storeu_ps(scores + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = hsum256(sum);
  for (; j < n; ++j) total += (scores[j] = std::exp(scores[j] - mx));
  const float inv = 1.0f / total;
  float* o = a.out + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  for (int d0 = 0; d0 < D; d0 += 32) {  // 4 accumulators of 8 lanes per pass
    const int w = std::min(32, D - d0);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int jj = 0; jj < n; ++jj) {
      const __m256 p = _mm256_set1_ps(scores[jj]);
      const float* vr = vbase + jj * a.vt + d0;
      for (int c = 0; c < w / 8; ++c) acc[c] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vr + 8 * c), acc[c]);
    }
    for (int c = 0; c < w / 8; ++c) _mm256_storeu_ps(o + d0 + 8 * c, _mm256_mul_ps(acc[c], _mm256_set1_ps(inv)));
  }
}

void attend_row_scalar(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  const float* kbase = a.k + b * a.kb + kvh * a.kh;
  const float* vbase = a.v + b * a.vb + kvh * a.vh;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    float s = 0;
    for (int d = 0; d < D; ++d) s += q[d] * kbase[j * a.kt + d];
    scores[j] = s * a.scale;
    mx = std::max(mx, scores[j]);
  }
  float sum = 0;
  for (int j = 0; j < n; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
  float* o = a.out + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  for (int d = 0; d < D; ++d) {
    float acc = 0;
    for (int j = 0; j < n; ++j) acc += scores[j] * vbase[j * a.vt + d];
    o[d] = acc / sum;
  }
}

void attend(const Attn& a) {
  const int rows = a.B * a.H * a.L;
  const Isa simd = isa() == Isa::Avx512 && a.D % 16 == 0 ? Isa::Avx512
                   : isa() != Isa::Scalar && a.D % 8 == 0  ? Isa::Avx2
                                                            : Isa::Scalar;
  auto run = [&](int r0, int r1) {
    std::vector<float> scores(a.T + 16);
    for (int r = r0; r < r1; ++r) {
      const int i = r % a.L, h = (r / a.L) % a.H, b = r / (a.L * a.H);
      switch (simd) {
        case Isa::Avx512: attend_row_avx512(a, b, h, i, scores.data()); break;
        case Isa::Avx2: attend_row_avx2(a, b, h, i, scores.data()); break;
        default: attend_row_scalar(a, b, h, i, scores.data()); break;
      }
    }
  };
  Pool& pool = Pool::get();
  const double work = static_cast<double>(rows) * a.T * a.D;
  if (pool.threads() == 1 || work < kParallelMacs) {
    run(0, rows);
    return;
  }
  const int chunks = std::min(rows, 4 * pool.threads());
  pool.run(chunks, [&](int c) { run(rows * c / chunks, rows * (c + 1) / chunks); });
}

class LayaAttention : public mx::Primitive {
 public:
  LayaAttention(mx::Stream s, float scale) : mx::Primitive(s), scale_(scale) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    auto& out = outputs[0];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& enc = mx::cpu::get_command_encoder(stream());
    for (const auto& in : inputs) enc.set_input_array(in);
    enc.set_output_array(out);
    enc.dispatch([q = mx::array::unsafe_weak_copy(inputs[0]), k = mx::array::unsafe_weak_copy(inputs[1]),
                  v = mx::array::unsafe_weak_copy(inputs[2]), out = mx::array::unsafe_weak_copy(out),
                  scale = scale_]() mutable {
      std::vector<float> qs;
      const float* qp = row_major(q, qs);
      // Keys and values are read in place through their strides (a view of the cache buffer);
      // only their last dimension must be contiguous, else they are gathered.
      std::vector<float> ks, vs;
      const bool kin = k.strides(3) == 1, vin = v.strides(3) == 1;
      const float* kp = kin ? k.data<float>() : row_major(k, ks);
      const float* vp = vin ? v.data<float>() : row_major(v, vs);
      const int T = k.shape(2), D = k.shape(3), KVH = k.shape(1);
      auto st = [T, D, KVH](const mx::array& a, bool in_place, int d) -> int64_t {
        if (in_place) return a.strides(d);
        return d == 0 ? static_cast<int64_t>(KVH) * T * D : d == 1 ? static_cast<int64_t>(T) * D : D;
      };
      attend(Attn{qp, kp, vp, out.data<float>(), q.shape(0), q.shape(1), KVH, q.shape(2), D, T, st(k, kin, 0),
                  st(k, kin, 1), st(k, kin, 2), st(v, vin, 0), st(v, vin, 1), st(v, vin, 2), scale});
    });
  }

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("[laya_attention] runs on the CPU only");
  }

  const char* name() const override { return "LayaAttention"; }

 private:
  float scale_;
};

mx::array make_attention(const mx::array& q, const mx::array& k, const mx::array& v, float scale) {
  if (q.ndim() != 4 || k.ndim() != 4 || v.shape() != k.shape())
    throw std::invalid_argument("q must be [B, H, L, D], k and v [B, KVH, T, D]");
  if (q.dtype() != mx::float32 || k.dtype() != mx::float32 || v.dtype() != mx::float32)
    throw std::invalid_argument("q, k and v must be float32");
  const int B = q.shape(0), H = q.shape(1), L = q.shape(2), D = q.shape(3);
  if (k.shape(0) != B || k.shape(3) != D || H % k.shape(1) != 0 || k.shape(2) < L)
    throw std::invalid_argument("q, k and v shapes do not fit together");
  auto s = mx::default_stream(mx::Device::cpu);
  return mx::array(q.shape(), mx::float32, std::make_shared<LayaAttention>(s, scale), {q, k, v});
}

// ---------------------------------------------------------------------------------------------
// Log-softmax over the vocabulary, row by row (f32), vectorized with AVX-512 or AVX2. MLX's CPU
// backend has no x86 vector exp: its logsumexp over a 49,152-token vocabulary took ~1.4 ms a row,
// as much as the output head's matmul, for every head row of a decode step or a spelling check.
// `lse_only`: out [..., 1] holds each row's logsumexp instead of the whole row of log-probs.

__attribute__((target("avx512f"))) float logsumexp_avx512(const float* x, int n) {
  __m512 vmx = _mm512_set1_ps(-INFINITY);
  int j = 0;
  for (; j + 16 <= n; j += 16) vmx = _mm512_max_ps(vmx, _mm512_loadu_ps(x + j));
  float mx = _mm512_reduce_max_ps(vmx);
  for (int t = j; t < n; ++t) mx = std::max(mx, x[t]);
  if (!std::isfinite(mx)) return mx;  // all -inf (or a +inf / NaN that the caller sees as such)
  const __m512 m = _mm512_set1_ps(mx);
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j + 16 <= n; j += 16) sum = _mm512_add_ps(sum, exp512(_mm512_sub_ps(_mm512_loadu_ps(x + j), m)));
  float s = _mm512_reduce_add_ps(sum);
  for (int t = j; t < n; ++t) s += std::exp(x[t] - mx);
  return mx + std::log(s);
}

__attribute__((target("avx2,fma"))) float logsumexp_avx2(const float* x, int n) {
  __m256 vmx = _mm256_set1_ps(-INFINITY);
  int j = 0;
  for (; j + 8 <= n; j += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + j));
  float lanes[8];
  _mm256_storeu_ps(lanes, vmx);
  float mx = *std::max_element(lanes, lanes + 8);
  for (int t = j; t < n; ++t) mx = std::max(mx, x[t]);
  if (!std::isfinite(mx)) return mx;
  const __m256 m = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (j = 0; j + 8 <= n; j += 8) sum = _mm256_add_ps(sum, exp256(_mm256_sub_ps(_mm256_loadu_ps(x + j), m)));
  float s = hsum256(sum);
  for (int t = j; t < n; ++t) s += std::exp(x[t] - mx);
  return mx + std::log(s);
}

float logsumexp_scalar(const float* x, int n) {
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) mx = std::max(mx, x[j]);
  if (!std::isfinite(mx)) return mx;
  double s = 0;
  for (int j = 0; j < n; ++j) s += std::exp(x[j] - mx);
  return mx + static_cast<float>(std::log(s));
}

class LayaLogSoftmax : public mx::Primitive {
 public:
  LayaLogSoftmax(mx::Stream s, bool lse_only) : mx::Primitive(s), lse_only_(lse_only) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    auto& out = outputs[0];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& enc = mx::cpu::get_command_encoder(stream());
    enc.set_input_array(inputs[0]);
    enc.set_output_array(out);
    enc.dispatch([x = mx::array::unsafe_weak_copy(inputs[0]), out = mx::array::unsafe_weak_copy(out),
                  lse_only = lse_only_]() mutable {
      std::vector<float> xs;
      const float* xp = row_major(x, xs);
      const int n = x.shape(-1);
      const size_t rows = n ? x.size() / n : 0;
      float* o = out.data<float>();
      for (size_t r = 0; r < rows; ++r) {
        const float* row = xp + r * n;
        const float lse = isa() == Isa::Avx512 ? logsumexp_avx512(row, n)
                          : isa() == Isa::Avx2 ? logsumexp_avx2(row, n)
                                               : logsumexp_scalar(row, n);
        if (lse_only) {
          o[r] = lse;
        } else {
          for (int j = 0; j < n; ++j) o[r * n + j] = row[j] - lse;
        }
      }
    });
  }

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("[laya_log_softmax] runs on the CPU only");
  }

  const char* name() const override { return "LayaLogSoftmax"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto* o = dynamic_cast<const LayaLogSoftmax*>(&other);
    return o && o->lse_only_ == lse_only_;
  }

 private:
  bool lse_only_;
};

mx::array make_log_softmax(const mx::array& x, bool lse_only) {
  if (x.dtype() != mx::float32 || x.ndim() < 1 || x.shape(-1) < 1)
    throw std::invalid_argument("x must be float32 with a non-empty last axis");
  auto shape = x.shape();
  if (lse_only) shape.back() = 1;
  auto s = mx::default_stream(mx::Device::cpu);
  return mx::array(std::move(shape), mx::float32, std::make_shared<LayaLogSoftmax>(s, lse_only), {x});
}

// ---------------------------------------------------------------------------------------------
// A whole transformer block as one MLX primitive, for short query blocks (keystrokes, decode
// steps, scoring). On MLX's CPU backend each graph node costs ~10-15 us of bookkeeping and a
// decode step had ~30 nodes per layer: most of its time. Inside, the block runs the same math
// as the unfused graph with the kernels above; the KV buffers are written in place when MLX can
// donate them (nobody else holds them), else copied first (a fork keeps its own).

struct QLinear {
  const uint32_t* w = nullptr;
  const float* s = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;  // [N] or null
  int N = 0, K = 0, group = 0, bits = 0;
};

struct BlockParams {
  int B, L, D, H, KVH, HD, I;   // batch, queries, hidden, heads, kv heads, head dim, intermediate
  int offset, cap;              // cached positions before this block; buffer capacity
  float eps, rope_base, rope_scale;
  bool rope_traditional, qk_norm, qkv_bias;
  int qkv_group, qkv_bits, o_group, o_bits, gu_group, gu_bits, down_group, down_bits;
};

void rms_norm_rows(const float* x, const float* w, float* out, int rows, int n, float eps) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * n;
    float* o = out + static_cast<size_t>(r) * n;
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / n) + eps);
    for (int i = 0; i < n; ++i) o[i] = w[i] * (xr[i] * inv);
  }
}

void linear(const QLinear& l, const float* x, float* out, int M) {
  qmm(Qmm{x, reinterpret_cast<const uint8_t*>(l.w), l.s, l.b, out, M, l.N, l.K, l.group, l.bits});
  if (l.bias)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < l.N; ++n) out[static_cast<size_t>(m) * l.N + n] += l.bias[n];
}

// cos and sin of every rotation angle at position `pos` (shared by all heads of a position).
void rope_table(int hd, int pos, const BlockParams& p, const float* periods, float* cs, float* sn) {
  for (int i = 0; i < hd / 2; ++i) {
    const float inv_freq = periods ? 1.0f / periods[i] : std::pow(p.rope_base, -2.0f * i / hd);
    const float theta = static_cast<float>(pos) * p.rope_scale * inv_freq;
    cs[i] = std::cos(theta);
    sn[i] = std::sin(theta);
  }
}

// Rotates one head vector in place: interleaved pairs (2i, 2i+1) or halves (i, i + hd/2).
void rope(float* v, int hd, bool traditional, const float* cs, const float* sn) {
  const int half = hd / 2;
  for (int i = 0; i < half; ++i) {
    const int a = traditional ? 2 * i : i, b = traditional ? 2 * i + 1 : i + half;
    const float x0 = v[a], x1 = v[b];
    v[a] = x0 * cs[i] - x1 * sn[i];
    v[b] = x0 * sn[i] + x1 * cs[i];
  }
}

// out[j] = silu(g[j]) * u[j], vectorized where AVX-512 is there.
__attribute__((target("avx512f"))) void swiglu_avx512(const float* g, const float* u, float* out, int n) {
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 x = _mm512_loadu_ps(g + j);
    const __m512 e = exp512(_mm512_sub_ps(_mm512_setzero_ps(), x));  // exp(-x); clamped below -87
    const __m512 sig = _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    _mm512_storeu_ps(out + j, _mm512_mul_ps(sig, _mm512_loadu_ps(u + j)));
  }
  for (; j < n; ++j) out[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
}

void swiglu(const float* g, const float* u, float* out, int n) {
  if (isa() == Isa::Avx512) return swiglu_avx512(g, u, out, n);
  for (int j = 0; j < n; ++j) out[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
}

struct BlockIo {
  const float* x;         // [B, L, D]
  const float *attn_norm, *mlp_norm, *q_norm, *k_norm, *periods;
  QLinear qkv, o, gate_up, down;
  float* kbuf;            // [B, KVH, cap, HD], written at [offset, offset + L)
  float* vbuf;
  float* out;             // [B, L, D]
};

void run_block(const BlockParams& p, const BlockIo& io) {
  const int M = p.B * p.L, QKV = (p.H + 2 * p.KVH) * p.HD;
  std::vector<float> h(static_cast<size_t>(M) * p.D), qkv(static_cast<size_t>(M) * QKV);
  std::vector<float> q(static_cast<size_t>(M) * p.H * p.HD), att(static_cast<size_t>(M) * p.H * p.HD);
  // Attention half.
  rms_norm_rows(io.x, io.attn_norm, h.data(), M, p.D, p.eps);
  linear(io.qkv, h.data(), qkv.data(), M);
  for (int b = 0; b < p.B; ++b)
    for (int i = 0; i < p.L; ++i) {
      float* row = qkv.data() + (static_cast<size_t>(b) * p.L + i) * QKV;
      const int pos = p.offset + i;
      std::vector<float> cs(p.HD / 2), sn(p.HD / 2);
      rope_table(p.HD, pos, p, io.periods, cs.data(), sn.data());
      for (int hh = 0; hh < p.H + p.KVH; ++hh) {  // queries, then keys: norm (Qwen3) and rope
        float* v = row + hh * p.HD;
        if (p.qk_norm) rms_norm_rows(v, hh < p.H ? io.q_norm : io.k_norm, v, 1, p.HD, p.eps);
        rope(v, p.HD, p.rope_traditional, cs.data(), sn.data());
      }
      for (int hh = 0; hh < p.H; ++hh)  // q to [B, H, L, HD]
        std::memcpy(q.data() + ((static_cast<size_t>(b) * p.H + hh) * p.L + i) * p.HD, row + hh * p.HD,
                    sizeof(float) * p.HD);
      for (int kv = 0; kv < p.KVH; ++kv) {  // k and v into the cache at pos
        const size_t at = ((static_cast<size_t>(b) * p.KVH + kv) * p.cap + pos) * p.HD;
        std::memcpy(io.kbuf + at, row + (p.H + kv) * p.HD, sizeof(float) * p.HD);
        std::memcpy(io.vbuf + at, row + (p.H + p.KVH + kv) * p.HD, sizeof(float) * p.HD);
      }
    }
  const int64_t ts = p.HD, hs = static_cast<int64_t>(p.cap) * p.HD, bs = hs * p.KVH;
  std::vector<float> att_bhld(att.size());
  attend(Attn{q.data(), io.kbuf, io.vbuf, att_bhld.data(), p.B, p.H, p.KVH, p.L, p.HD, p.offset + p.L, bs, hs, ts,
              bs, hs, ts, 1.0f / std::sqrt(static_cast<float>(p.HD))});
  for (int b = 0; b < p.B; ++b)  // [B, H, L, HD] -> [B, L, H * HD]
    for (int hh = 0; hh < p.H; ++hh)
      for (int i = 0; i < p.L; ++i)
        std::memcpy(att.data() + ((static_cast<size_t>(b) * p.L + i) * p.H + hh) * p.HD,
                    att_bhld.data() + ((static_cast<size_t>(b) * p.H + hh) * p.L + i) * p.HD, sizeof(float) * p.HD);
  linear(io.o, att.data(), io.out, M);
  for (size_t j = 0; j < static_cast<size_t>(M) * p.D; ++j) io.out[j] += io.x[j];
  // MLP half: out += down(silu(gate) * up).
  std::vector<float> gu(static_cast<size_t>(M) * 2 * p.I), act(static_cast<size_t>(M) * p.I), down(h.size());
  rms_norm_rows(io.out, io.mlp_norm, h.data(), M, p.D, p.eps);
  linear(io.gate_up, h.data(), gu.data(), M);
  for (int m = 0; m < M; ++m) {
    const float* g = gu.data() + static_cast<size_t>(m) * 2 * p.I;
    const float* u = g + p.I;
    swiglu(g, u, act.data() + static_cast<size_t>(m) * p.I, p.I);
  }
  linear(io.down, act.data(), down.data(), M);
  for (size_t j = 0; j < down.size(); ++j) io.out[j] += down[j];
}

class LayaBlock : public mx::Primitive {
 public:
  LayaBlock(mx::Stream s, BlockParams p) : mx::Primitive(s), p_(p) {}

  // inputs: 0 x, 1 attn_norm, 2 mlp_norm, 3 q_norm, 4 k_norm, 5 rope periods ([1]-sized dummies
  // when absent), 6-9 qkv (w, s, b, bias), 10-12 o, 13-15 gate_up, 16-18 down (w, s, b),
  // 19 kbuf, 20 vbuf.
  void eval_cpu(const std::vector<mx::array>& in, std::vector<mx::array>& out) override {
    out[0].set_data(mx::allocator::malloc(out[0].nbytes()));
    // The KV buffers: take them over when nobody else holds them, else fill fresh ones.
    bool copy[2];
    for (int i = 0; i < 2; ++i) {
      const auto& buf = in[in.size() - 2 + i];
      copy[i] = !(buf.is_donatable() && buf.flags().row_contiguous);
      if (copy[i])
        out[1 + i].set_data(mx::allocator::malloc(out[1 + i].nbytes()));
      else
        out[1 + i].copy_shared_buffer(buf);
    }
    auto& enc = mx::cpu::get_command_encoder(stream());
    for (const auto& a : in) enc.set_input_array(a);
    for (auto& a : out) enc.set_output_array(a);
    std::vector<mx::array> ins, outs;
    for (const auto& a : in) ins.push_back(mx::array::unsafe_weak_copy(a));
    for (const auto& a : out) outs.push_back(mx::array::unsafe_weak_copy(a));
    enc.dispatch([ins = std::move(ins), outs = std::move(outs), p = p_, copy0 = copy[0], copy1 = copy[1]]() mutable {
      const bool copies[2] = {copy0, copy1};
      // Buffers that could not be taken over (shared with a fork, or one row broadcast to a
      // scoring batch) are copied: only the positions already cached, row by row, by strides.
      for (int i = 0; i < 2; ++i)
        if (copies[i]) {
          const auto& src = ins[ins.size() - 2 + i];
          const auto& st = src.strides();
          const float* sp = src.data<float>();
          float* dp = outs[1 + i].data<float>();
          for (int b = 0; b < p.B; ++b)
            for (int kv = 0; kv < p.KVH; ++kv) {
              const float* from = sp + b * st[0] + kv * st[1];
              float* to = dp + (static_cast<size_t>(b) * p.KVH + kv) * p.cap * p.HD;
              if (st[2] == p.HD && st[3] == 1) {
                std::memcpy(to, from, sizeof(float) * p.offset * p.HD);
              } else {
                for (int t = 0; t < p.offset; ++t)
                  for (int d = 0; d < p.HD; ++d) to[t * p.HD + d] = from[t * st[2] + d * st[3]];
              }
            }
        }
      std::vector<float> xs;
      auto lin = [&](int at, int N, int K, int group, int bits, bool bias) {
        QLinear l;
        l.w = ins[at].data<uint32_t>();
        l.s = ins[at + 1].data<float>();
        l.b = ins[at + 2].data<float>();
        l.bias = bias ? ins[at + 3].data<float>() : nullptr;
        l.N = N, l.K = K, l.group = group, l.bits = bits;
        return l;
      };
      const int QKV = (p.H + 2 * p.KVH) * p.HD;
      BlockIo io{row_major(ins[0], xs),
                 ins[1].data<float>(),
                 ins[2].data<float>(),
                 p.qk_norm ? ins[3].data<float>() : nullptr,
                 p.qk_norm ? ins[4].data<float>() : nullptr,
                 ins[5].size() == static_cast<size_t>(p.HD / 2) ? ins[5].data<float>() : nullptr,
                 lin(6, QKV, p.D, p.qkv_group, p.qkv_bits, p.qkv_bias),
                 lin(10, p.D, p.H * p.HD, p.o_group, p.o_bits, false),
                 lin(13, 2 * p.I, p.D, p.gu_group, p.gu_bits, false),
                 lin(16, p.D, p.I, p.down_group, p.down_bits, false),
                 outs[1].data<float>(),
                 outs[2].data<float>(),
                 outs[0].data<float>()};
      run_block(p, io);
    });
  }

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("[laya_block] runs on the CPU only");
  }

  const char* name() const override { return "LayaBlock"; }

 private:
  BlockParams p_;
};

// ---------------------------------------------------------------------------------------------
// C ABI for Rust. Arrays cross as mlx-c's handles: `struct mlx_array { void* ctx; }` where ctx
// points to a heap `mlx::core::array` (mlx-c 0.7's representation, pinned through mlx-sys 0.7.0).

// The arguments of laya_block, one #[repr(C)] struct on the Rust side (cpu_kernels.rs,
// `BlockArgs`) with the same fields in the same order: 21 array handles (mlx-c ctx pointers;
// [1]-sized dummies for the norms, rope periods and bias a model lacks), 20 ints (flags 0/1),
// 3 floats. laya_block_args_size() lets Rust check the two agree.
struct LayaBlockArgs {
  const void* x;
  const void* attn_norm;
  const void* mlp_norm;
  const void* q_norm;
  const void* k_norm;
  const void* rope_periods;
  const void* qkv_w;
  const void* qkv_scales;
  const void* qkv_biases;
  const void* qkv_bias;
  const void* o_w;
  const void* o_scales;
  const void* o_biases;
  const void* gate_up_w;
  const void* gate_up_scales;
  const void* gate_up_biases;
  const void* down_w;
  const void* down_scales;
  const void* down_biases;
  const void* kbuf;
  const void* vbuf;
  int32_t batch;
  int32_t len;
  int32_t hidden;
  int32_t heads;
  int32_t kv_heads;
  int32_t head_dim;
  int32_t intermediate;
  int32_t offset;
  int32_t cap;
  int32_t rope_traditional;
  int32_t qk_norm;
  int32_t has_qkv_bias;
  int32_t qkv_group;
  int32_t qkv_bits;
  int32_t o_group;
  int32_t o_bits;
  int32_t gate_up_group;
  int32_t gate_up_bits;
  int32_t down_group;
  int32_t down_bits;
  float eps;
  float rope_base;
  float rope_scale;
};

extern "C" {

size_t laya_block_args_size() { return sizeof(LayaBlockArgs); }

// Returns 0 and stores a new mlx-c array handle's ctx in *out, or returns 1 with a message.
int laya_quantized_matmul(void** out, const void* x, const void* w, const void* scales, const void* biases,
                          int group, int bits, char* err, size_t err_len) {
  try {
    auto r = laya_quantized_matmul(*static_cast<const mx::array*>(x), *static_cast<const mx::array*>(w),
                                   *static_cast<const mx::array*>(scales), *static_cast<const mx::array*>(biases),
                                   group, bits);
    *out = new mx::array(std::move(r));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return 1;
  }
}

// Row-wise log-softmax of x [..., V] f32, or with lse_only each row's logsumexp ([..., 1]).
int laya_log_softmax(void** out, const void* x, int lse_only, char* err, size_t err_len) {
  try {
    *out = new mx::array(make_log_softmax(*static_cast<const mx::array*>(x), lse_only != 0));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return 1;
  }
}

// Causal attention of q [B, H, L, D] over k, v [B, KVH, T, D] (query i sees keys 0..T-L+i).
int laya_attention(void** out, const void* q, const void* k, const void* v, float scale, char* err, size_t err_len) {
  try {
    auto r = make_attention(*static_cast<const mx::array*>(q), *static_cast<const mx::array*>(k),
                            *static_cast<const mx::array*>(v), scale);
    *out = new mx::array(std::move(r));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return 1;
  }
}

// One transformer block (see LayaBlock) over 21 input handles in the documented order; stores
// three new handles: the block's output and the two KV buffers.
int laya_block(void** outs, const LayaBlockArgs* a, char* err, size_t err_len) {
  try {
    BlockParams p{};
    p.B = a->batch, p.L = a->len, p.D = a->hidden, p.H = a->heads, p.KVH = a->kv_heads, p.HD = a->head_dim;
    p.I = a->intermediate, p.offset = a->offset, p.cap = a->cap;
    p.rope_traditional = a->rope_traditional, p.qk_norm = a->qk_norm, p.qkv_bias = a->has_qkv_bias;
    p.qkv_group = a->qkv_group, p.qkv_bits = a->qkv_bits, p.o_group = a->o_group, p.o_bits = a->o_bits;
    p.gu_group = a->gate_up_group, p.gu_bits = a->gate_up_bits, p.down_group = a->down_group, p.down_bits = a->down_bits;
    p.eps = a->eps, p.rope_base = a->rope_base, p.rope_scale = a->rope_scale;
    // LayaBlock's inputs, in the order its eval_cpu reads them.
    std::vector<mx::array> in;
    for (const void* h : {a->x, a->attn_norm, a->mlp_norm, a->q_norm, a->k_norm, a->rope_periods, a->qkv_w,
                          a->qkv_scales, a->qkv_biases, a->qkv_bias, a->o_w, a->o_scales, a->o_biases, a->gate_up_w,
                          a->gate_up_scales, a->gate_up_biases, a->down_w, a->down_scales, a->down_biases, a->kbuf, a->vbuf}) {
      if (h == nullptr) throw std::invalid_argument("a block input is missing");
      in.push_back(*static_cast<const mx::array*>(h));
    }
    const auto& kbuf = in[19];
    if (in[0].dtype() != mx::float32 || in[0].ndim() != 3 || in[0].shape(0) != p.B || in[0].shape(1) != p.L ||
        in[0].shape(2) != p.D)
      throw std::invalid_argument("x must be [B, L, D] float32");
    if (kbuf.ndim() != 4 || kbuf.shape(0) != p.B || kbuf.shape(1) != p.KVH || kbuf.shape(2) != p.cap ||
        kbuf.shape(3) != p.HD || in[20].shape() != kbuf.shape() || p.offset + p.L > p.cap)
      throw std::invalid_argument("KV buffers must be [B, KVH, cap, HD] with room for the block");
    for (int bits : {p.qkv_bits, p.o_bits, p.gu_bits, p.down_bits})
      if (bits != 4 && bits != 8) throw std::invalid_argument("linear layers must be 4- or 8-bit");
    if (p.H % p.KVH != 0 || p.HD % 2 != 0) throw std::invalid_argument("bad head configuration");
    auto s = mx::default_stream(mx::Device::cpu);
    auto res = mx::array::make_arrays({in[0].shape(), kbuf.shape(), kbuf.shape()},
                                      {mx::float32, mx::float32, mx::float32}, std::make_shared<LayaBlock>(s, p), in);
    for (int i = 0; i < 3; ++i) outs[i] = new mx::array(std::move(res[i]));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return 1;
  }
}

// 0 scalar, 2 AVX2+FMA, 3 AVX-512.
int laya_cpu_isa() { return static_cast<int>(isa()); }

int laya_cpu_threads() { return Pool::get().threads(); }

}  // extern "C"
