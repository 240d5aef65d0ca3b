// Attention for short query blocks (a keystroke, a decode step, scoring candidates) over the KV
// cache, read in place from its buffers: causal, grouped-query, softmax in f32 with a vectorized
// exp. MLX's CPU path copies the cache views, runs two BLAS calls and a scalar softmax per head.

#include "common.h"

namespace laya {

// One query row: scores over its visible keys, softmax, weighted sum of values.
__attribute__((target("avx512f"))) void attend_row_avx512(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const float* kr = key_row(a, b, kvh, j);
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
      const float* vr = value_row(a, b, kvh, jj) + d0;
      for (int c = 0; c < w / 16; ++c) acc[c] = _mm512_fmadd_ps(p, _mm512_loadu_ps(vr + 16 * c), acc[c]);
    }
    for (int c = 0; c < w / 16; ++c) _mm512_storeu_ps(o + d0 + 16 * c, _mm512_mul_ps(acc[c], _mm512_set1_ps(inv)));
  }
}

// attend_row_avx512 with 8 lanes (D a multiple of 8); the softmax's tail is scalar.
__attribute__((target("avx2,fma"))) void attend_row_avx2(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const float* kr = key_row(a, b, kvh, j);
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
      const float* vr = value_row(a, b, kvh, jj) + d0;
      for (int c = 0; c < w / 8; ++c) acc[c] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vr + 8 * c), acc[c]);
    }
    for (int c = 0; c < w / 8; ++c) _mm256_storeu_ps(o + d0 + 8 * c, _mm256_mul_ps(acc[c], _mm256_set1_ps(inv)));
  }
}

void attend_row_scalar(const Attn& a, int b, int h, int i, float* scores) {
  const int kvh = h / (a.H / a.KVH), n = a.T - a.L + i + 1, D = a.D;
  const float* q = a.q + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) {
    float s = 0;
    const float* kr = key_row(a, b, kvh, j);
    for (int d = 0; d < D; ++d) s += q[d] * kr[d];
    scores[j] = s * a.scale;
    mx = std::max(mx, scores[j]);
  }
  float sum = 0;
  for (int j = 0; j < n; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
  float* o = a.out + ((static_cast<int64_t>(b) * a.H + h) * a.L + i) * D;
  for (int d = 0; d < D; ++d) {
    float acc = 0;
    for (int j = 0; j < n; ++j) acc += scores[j] * value_row(a, b, kvh, j)[d];
    o[d] = acc / sum;
  }
}

void attend(const Attn& a) {
  const int rows = a.B * a.H * a.L;
  const Isa simd = avx512() && a.D % 16 == 0 ? Isa::Avx512
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
      const KvView kv = kv_view(k, ks), vv = kv_view(v, vs);
      attend(Attn{qp, kv.data, vv.data, out.data<float>(), q.shape(0), q.shape(1), k.shape(1), q.shape(2), k.shape(3),
                  k.shape(2), kv.b, kv.h, kv.t, vv.b, vv.h, vv.t, scale});
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

}  // namespace laya

using namespace laya;

extern "C" {

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

}  // extern "C"
