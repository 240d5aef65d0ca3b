// Log-softmax over the vocabulary, row by row (f32), vectorized with AVX-512 or AVX2. MLX's CPU
// backend has no x86 vector exp: its logsumexp over a 49,152-token vocabulary took ~1.4 ms a row,
// as much as the output head's matmul, for every head row of a decode step or a spelling check.
// `lse_only`: out [..., 1] holds each row's logsumexp instead of the whole row of log-probs.

#include "common.h"

namespace laya {

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
        const float lse = avx512() ? logsumexp_avx512(row, n)
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

}  // namespace laya

using namespace laya;

extern "C" {

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

}  // extern "C"
