// What Laya's CPU kernel families share: the instruction set chosen once per process, the thread
// pool, vector helpers (horizontal sums, exp), reading MLX arrays in row-major order, and the two
// problems one family hands another (a quantized matmul, an attention).
//
// Files: pool.cpp (instruction set, threads, their C entries), qmm.cpp (quantized matmul),
// attention.cpp, softmax.cpp (log-softmax over the vocabulary), block.cpp (a whole transformer
// block). Each family's file holds its kernels, its MLX primitive and its C entry for Rust
// (server/model/src/cpu_kernels.rs).
#pragma once

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

namespace laya {

// ---------------------------------------------------------------------------------------------
// Instruction set, chosen once (pool.cpp).

// In order: each level's kernels need the levels below it. Avx512Vnni adds the one-row matmul
// with 8-bit inputs (vpdpbusd).
enum class Isa { Scalar = 0, Avx2 = 2, Avx512 = 3, Avx512Vnni = 4 };

Isa isa();

// Whether the chosen ISA has AVX-512 (with or without VNNI).
inline bool avx512() { return isa() >= Isa::Avx512; }

// Vector width in floats of the chosen ISA (the 4-bit kernels read x in an order that matches it).
int lanes();

// ---------------------------------------------------------------------------------------------
// A small pool. Work is cut into more chunks than threads and every thread, the caller included,
// takes chunks from a shared counter: if a helper is slow to wake (another process holds its
// core on a shared machine), the caller simply does its chunks and never waits for a chunk that
// has not started. Helpers spin briefly before sleeping, because a forward calls the kernel ~200
// times a few microseconds apart.

class Pool {
 public:
  static Pool& get();  // started on first use (pool.cpp)

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
  Pool();

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

// Work is split across the pool when it is big enough to pay for the hand-off (multiply-adds).
constexpr double kParallelMacs = 2e5;

// ---------------------------------------------------------------------------------------------
// Vector helpers.

__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

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

// Copies `msg` into the caller's buffer of `len` bytes, cut and terminated.
inline void set_error(char* err, size_t len, const char* msg) {
  if (err && len) {
    std::strncpy(err, msg, len - 1);
    err[len - 1] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// What one family asks of another: the block runs its linear layers through qmm (qmm.cpp) and
// its attention through attend (attention.cpp).

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
  // When M is 1 (AVX-512 VNNI): x in 8 bits by pairs of 32-blocks and what they missed in 8 bits
  // again, x[k] ~ dx[k / 32] * x8[...] + dr[k / 32] * x8r[...], and for wide blocks a third
  // time, + dw[k / 32] * x8w[...] (see quantize_row_q8).
  const int8_t* x8 = nullptr;
  const int8_t* x8r = nullptr;
  const int8_t* x8w = nullptr;
  const float* dw = nullptr;
  size_t row_bytes() const { return static_cast<size_t>(K) * bits / 8; }
};

void qmm(Qmm q);

// A [B, H, T, D] float array read through its strides where its last dimension is contiguous
// (a view of a KV buffer), else gathered in row-major order into `buf`: its data and the strides
// of its batch, head and position axes.
struct KvView {
  const float* data;
  int64_t b, h, t;
};

inline KvView kv_view(const mx::array& a, std::vector<float>& buf) {
  if (a.strides(3) == 1) return {a.data<float>(), a.strides(0), a.strides(1), a.strides(2)};
  const int64_t T = a.shape(2), D = a.shape(3);
  return {row_major(a, buf), a.shape(1) * T * D, T * D, D};
}

struct Attn {
  const float* q;  // [B, H, L, D] row-major
  const float* k;  // [B, KVH, >= T, D] with strides below (last dim contiguous)
  const float* v;
  float* out;      // [B, H, L, D]
  int B, H, KVH, L, D, T;  // T = keys visible to the last query (prefix + cache offset + L)
  int64_t kb, kh, kt, vb, vh, vt;  // strides of k and v (batch, head, position)
  float scale;
  // Keys and values 0..P of every row from a shared prefix (a fork's parent: one row for the
  // whole batch, read in place), the rest from k and v at position j - P.
  const float* pk = nullptr;
  const float* pv = nullptr;
  int P = 0;
  int64_t pkh = 0, pkt = 0, pvh = 0, pvt = 0;  // the prefix's strides (head, position)
};

// Where key / value j of batch row b, KV head kvh starts.
inline const float* key_row(const Attn& a, int b, int kvh, int j) {
  return j < a.P ? a.pk + kvh * a.pkh + j * a.pkt : a.k + b * a.kb + kvh * a.kh + (j - a.P) * a.kt;
}
inline const float* value_row(const Attn& a, int b, int kvh, int j) {
  return j < a.P ? a.pv + kvh * a.pvh + j * a.pvt : a.v + b * a.vb + kvh * a.vh + (j - a.P) * a.vt;
}

void attend(const Attn& a);

}  // namespace laya
