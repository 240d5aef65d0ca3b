// A whole transformer block as one MLX primitive, for short query blocks (keystrokes, decode
// steps, scoring). On MLX's CPU backend each graph node costs ~10-15 us of bookkeeping and a
// decode step had ~30 nodes per layer: most of its time. Inside, the block runs the same math
// as the unfused graph with the other families' kernels (qmm, attend); the KV buffers are written in place when MLX can
// donate them (nobody else holds them), else copied first (a fork keeps its own). A fork's
// first positions may sit in its parent's buffers (a shared prefix): read there in place,
// never copied, so a fork of a long context costs what its own few positions cost.

#include "common.h"

namespace laya {

struct QLinear {
  const uint32_t* w = nullptr;
  const float* s = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;  // [N] or null
  int N = 0, K = 0, group = 0, bits = 0;
};

struct BlockParams {
  int B, L, D, H, KVH, HD, I;   // batch, queries, hidden, heads, kv heads, head dim, intermediate
  int base;                     // positions in the shared prefix (0: none)
  int offset, cap;              // positions in the own buffers before this block; their capacity
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

// out[j] = silu(g[j]) * u[j] for j in [from, n): the vector versions' tails and CPUs without them.
inline void swiglu_scalar(const float* g, const float* u, float* out, int from, int n) {
  for (int j = from; j < n; ++j) out[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
}

// The same, vectorized where AVX-512 is there.
__attribute__((target("avx512f"))) void swiglu_avx512(const float* g, const float* u, float* out, int n) {
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 x = _mm512_loadu_ps(g + j);
    const __m512 e = exp512(_mm512_sub_ps(_mm512_setzero_ps(), x));  // exp(-x); clamped below -87
    const __m512 sig = _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    _mm512_storeu_ps(out + j, _mm512_mul_ps(sig, _mm512_loadu_ps(u + j)));
  }
  swiglu_scalar(g, u, out, j, n);
}

// The same with AVX2. exp256 is for arguments up to 0, so silu(x) = x * sigmoid(x) is taken from
// e = exp(-|x|): sigmoid(x) is 1 / (1 + e) for x >= 0 and e / (1 + e) below. The scalar loop
// this replaced called expf for each of a step's 46,080 elements (30 layers of 1,536): about 3%
// of a decode step on Zen 3 (perf, decode_64).
__attribute__((target("avx2,fma"))) void swiglu_avx2(const float* g, const float* u, float* out, int n) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 one = _mm256_set1_ps(1.0f);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_loadu_ps(g + j);
    const __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_and_ps(x, magnitude)));
    const __m256 num = _mm256_blendv_ps(one, e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    const __m256 sig = _mm256_div_ps(num, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_mul_ps(x, sig), _mm256_loadu_ps(u + j)));
  }
  swiglu_scalar(g, u, out, j, n);
}

void swiglu(const float* g, const float* u, float* out, int n) {
  if (avx512()) return swiglu_avx512(g, u, out, n);
  if (isa() == Isa::Avx2) return swiglu_avx2(g, u, out, n);
  swiglu_scalar(g, u, out, 0, n);
}

struct BlockIo {
  const float* x;         // [B, L, D]
  const float *attn_norm, *mlp_norm, *q_norm, *k_norm, *periods;
  QLinear qkv, o, gate_up, down;
  float* kbuf;            // [B, KVH, cap, HD], written at [offset, offset + L)
  float* vbuf;
  float* out;             // [B, L, D]
  const float* pk = nullptr;  // the shared prefix, [1, KVH, >= base, HD] (strides below)
  const float* pv = nullptr;
  int64_t pkh = 0, pkt = 0, pvh = 0, pvt = 0;
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
      const int pos = p.base + p.offset + i;  // in the sequence (rope)
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
        const size_t at = ((static_cast<size_t>(b) * p.KVH + kv) * p.cap + p.offset + i) * p.HD;
        std::memcpy(io.kbuf + at, row + (p.H + kv) * p.HD, sizeof(float) * p.HD);
        std::memcpy(io.vbuf + at, row + (p.H + p.KVH + kv) * p.HD, sizeof(float) * p.HD);
      }
    }
  const int64_t ts = p.HD, hs = static_cast<int64_t>(p.cap) * p.HD, bs = hs * p.KVH;
  std::vector<float> att_bhld(att.size());
  attend(Attn{q.data(), io.kbuf, io.vbuf, att_bhld.data(), p.B, p.H, p.KVH, p.L, p.HD, p.base + p.offset + p.L, bs, hs,
              ts, bs, hs, ts, 1.0f / std::sqrt(static_cast<float>(p.HD)), io.pk, io.pv, p.base, io.pkh, io.pkt, io.pvh,
              io.pvt});
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
  // 19-20 the shared prefix's keys and values ([1]-sized dummies without one), 21 kbuf, 22 vbuf.
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
      std::vector<float> xs, pks, pvs;
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
      if (p.base > 0) {
        const KvView pk = kv_view(ins[19], pks), pv = kv_view(ins[20], pvs);
        io.pk = pk.data, io.pkh = pk.h, io.pkt = pk.t;
        io.pv = pv.data, io.pvh = pv.h, io.pvt = pv.t;
      }
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

// C ABI for Rust. Arrays cross as mlx-c's handles: `struct mlx_array { void* ctx; }` where ctx
// points to a heap `mlx::core::array` (mlx-c 0.7's representation, pinned through mlx-sys 0.7.0).

// The arguments of laya_block, one #[repr(C)] struct on the Rust side (cpu_kernels.rs,
// `BlockArgs`) with the same fields in the same order: 23 array handles (mlx-c ctx pointers;
// [1]-sized dummies for the norms, rope periods and bias a model lacks), 21 ints (flags 0/1),
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
  const void* prefix_k;
  const void* prefix_v;
  const void* kbuf;
  const void* vbuf;
  int32_t batch;
  int32_t len;
  int32_t hidden;
  int32_t heads;
  int32_t kv_heads;
  int32_t head_dim;
  int32_t intermediate;
  int32_t prefix;
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

}  // namespace laya

using namespace laya;

extern "C" {

size_t laya_block_args_size() { return sizeof(LayaBlockArgs); }

// One transformer block (see LayaBlock) over 23 input handles in the documented order; stores
// three new handles: the block's output and the two KV buffers.
int laya_block(void** outs, const LayaBlockArgs* a, char* err, size_t err_len) {
  try {
    BlockParams p{};
    p.B = a->batch, p.L = a->len, p.D = a->hidden, p.H = a->heads, p.KVH = a->kv_heads, p.HD = a->head_dim;
    p.I = a->intermediate, p.base = a->prefix, p.offset = a->offset, p.cap = a->cap;
    p.rope_traditional = a->rope_traditional, p.qk_norm = a->qk_norm, p.qkv_bias = a->has_qkv_bias;
    p.qkv_group = a->qkv_group, p.qkv_bits = a->qkv_bits, p.o_group = a->o_group, p.o_bits = a->o_bits;
    p.gu_group = a->gate_up_group, p.gu_bits = a->gate_up_bits, p.down_group = a->down_group, p.down_bits = a->down_bits;
    p.eps = a->eps, p.rope_base = a->rope_base, p.rope_scale = a->rope_scale;
    // LayaBlock's inputs, in the order its eval_cpu reads them.
    std::vector<mx::array> in;
    for (const void* h : {a->x, a->attn_norm, a->mlp_norm, a->q_norm, a->k_norm, a->rope_periods, a->qkv_w,
                          a->qkv_scales, a->qkv_biases, a->qkv_bias, a->o_w, a->o_scales, a->o_biases, a->gate_up_w,
                          a->gate_up_scales, a->gate_up_biases, a->down_w, a->down_scales, a->down_biases, a->prefix_k,
                          a->prefix_v, a->kbuf, a->vbuf}) {
      if (h == nullptr) throw std::invalid_argument("a block input is missing");
      in.push_back(*static_cast<const mx::array*>(h));
    }
    const auto& kbuf = in[21];
    if (in[0].dtype() != mx::float32 || in[0].ndim() != 3 || in[0].shape(0) != p.B || in[0].shape(1) != p.L ||
        in[0].shape(2) != p.D)
      throw std::invalid_argument("x must be [B, L, D] float32");
    if (kbuf.ndim() != 4 || kbuf.shape(0) != p.B || kbuf.shape(1) != p.KVH || kbuf.shape(2) != p.cap ||
        kbuf.shape(3) != p.HD || in[22].shape() != kbuf.shape() || p.offset + p.L > p.cap)
      throw std::invalid_argument("KV buffers must be [B, KVH, cap, HD] with room for the block");
    if (p.base < 0) throw std::invalid_argument("the shared prefix's length is negative");
    if (p.base > 0)
      for (int i : {19, 20})
        if (in[i].dtype() != mx::float32 || in[i].ndim() != 4 || in[i].shape(0) != 1 || in[i].shape(1) != p.KVH ||
            in[i].shape(2) < p.base || in[i].shape(3) != p.HD)
          throw std::invalid_argument("the shared prefix must be [1, KVH, >= prefix, HD] float32");
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

}  // extern "C"
