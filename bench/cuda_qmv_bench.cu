// Laya's one-row 4-bit matmul kernel (server/model/src/gpu_qmv/), built with nvcc and timed alone
// on a decode step's shapes, against the first kernel of cuda_qmv_kernel.py (integer-to-float
// conversions), with each row checked against a host reference. No MLX: a kernel's variants can be
// tried in one short call (docs/benchmarks.md, "On the H200").
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/qmv bench/cuda_qmv_bench.cu && /tmp/qmv
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../server/model/src/gpu_qmv/header.cuh"

template <typename T, int K, int N, int G, int R, int U>
__global__ void laya_qmv(const T* x, const uint32_t* w, const T* scales, const T* biases, T* out) {
#include "../server/model/src/gpu_qmv/body.cuh"
}

// Gate and up with silu(gate) * up in one kernel (gate_up.cuh).
template <typename T, int K, int N, int G, int R, int U>
__global__ void laya_gate_up(const T* x, const uint32_t* w, const T* scales, const T* biases, const uint32_t* w2, const T* scales2,
                             const T* biases2, T* out) {
#include "../server/model/src/gpu_qmv/gate_up.cuh"
}

// The first kernel (bench/cuda_qmv_kernel.py, R4xW4): an integer-to-float conversion a value.
template <typename T, int K, int N, int G, int R, int U>
__global__ void first_qmv(const T* x, const uint32_t* w, const T* scales, const T* biases, T* out) {
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
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
    for (int i = 0; i < 32; ++i) { xf[i] = laya_f32(xr[i]); xs += xf[i]; }
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
        acc[r] += laya_f32(scales[sg]) * qd + laya_f32(biases[sg]) * xs;
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
}

#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(err_), __LINE__); exit(1); } } while (0)

static float h2f(float v) { return v; }
static float h2f(__half v) { return __half2float(v); }
static float h2f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> static T f2h(float v) { return static_cast<T>(v); }

static uint32_t rng = 12345;
static uint32_t next() { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }
static float unif() { return (next() >> 8) * (1.f / 16777216.f) * 2.f - 1.f; }

template <typename T> const char* tname();
template <> const char* tname<float>() { return "f32"; }
template <> const char* tname<__half>() { return "f16"; }
template <> const char* tname<__nv_bfloat16>() { return "bf16"; }

// Matrices of one shape, `copies` of them (distinct, so that the L2 holds none), shared by the
// kernels timed on them.
template <typename T, int K, int N, int G>
struct Mats {
  int copies;
  std::vector<uint32_t*> w;
  std::vector<T*> s, b;
  T *x, *out;
  std::vector<double> ref;  // row outputs of copy 0
  double ref_max = 0;
  size_t bytes;
  Mats(int c) : copies(c) {
    const size_t nw = (size_t)N * K / 8, ng = (size_t)N * K / G;
    std::vector<uint32_t> hw(nw);
    std::vector<T> hs(ng), hb(ng), hx(K);
    for (auto& v : hx) v = f2h<T>(unif());
    CK(cudaMalloc(&x, K * sizeof(T)));
    CK(cudaMemcpy(x, hx.data(), K * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&out, (size_t)N * sizeof(T)));
    for (int c = 0; c < copies; ++c) {
      if (c < 2) {  // two distinct contents are enough for the timing; copy 0 is checked
        for (auto& v : hw) v = next();
        for (auto& v : hs) v = f2h<T>(0.002f + 0.002f * unif());
        for (auto& v : hb) v = f2h<T>(-0.015f + 0.003f * unif());
      }
      uint32_t* dw; T *ds, *db;
      CK(cudaMalloc(&dw, nw * 4)); CK(cudaMalloc(&ds, ng * sizeof(T))); CK(cudaMalloc(&db, ng * sizeof(T)));
      CK(cudaMemcpy(dw, hw.data(), nw * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(ds, hs.data(), ng * sizeof(T), cudaMemcpyHostToDevice));
      CK(cudaMemcpy(db, hb.data(), ng * sizeof(T), cudaMemcpyHostToDevice));
      w.push_back(dw); s.push_back(ds); b.push_back(db);
      if (c == 0) {
        ref.resize(N);
        for (int n = 0; n < N; ++n) {
          double y = 0;
          for (int gi = 0; gi < K / G; ++gi) {
            double sc = h2f(hs[(size_t)n * (K / G) + gi]), bi = h2f(hb[(size_t)n * (K / G) + gi]);
            for (int k = gi * G; k < gi * G + G; ++k) {
              uint32_t q = (hw[((size_t)n * K + k) / 8] >> (4 * (k % 8))) & 15;
              y += (double)h2f(hx[k]) * (sc * q + bi);
            }
          }
          ref[n] = y;
          ref_max = std::max(ref_max, std::fabs(y));
        }
      }
    }
    bytes = (nw * 4 + 2 * ng * sizeof(T)) * copies;
  }
  ~Mats() {
    for (int c = 0; c < copies; ++c) { cudaFree(w[c]); cudaFree(s[c]); cudaFree(b[c]); }
    cudaFree(x); cudaFree(out);
  }
};

template <typename T, int K, int N, int G, int R, int U, bool FIRST>
void run(Mats<T, K, N, G>& m, int warps, const char* what) {
  auto kernel = FIRST ? first_qmv<T, K, N, G, R, U> : laya_qmv<T, K, N, G, R, U>;
  const int rows_per_block = R * warps, blocks = (N + rows_per_block - 1) / rows_per_block;
  auto all = [&]() { for (int c = 0; c < m.copies; ++c) kernel<<<blocks, 32 * warps>>>(m.x, m.w[c], m.s[c], m.b[c], m.out); };
  kernel<<<blocks, 32 * warps>>>(m.x, m.w[0], m.s[0], m.b[0], m.out);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> h(N);
  CK(cudaMemcpy(h.data(), m.out, N * sizeof(T), cudaMemcpyDeviceToHost));
  double err = 0;
  for (int n = 0; n < N; ++n) err = std::max(err, std::fabs(h2f(h[n]) - m.ref[n]));
  // Captured as one CUDA graph, as MLX runs a step's kernels.
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaGraph_t graph; cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int c = 0; c < m.copies; ++c) kernel<<<blocks, 32 * warps, 0, st>>>(m.x, m.w[c], m.s[c], m.b[c], m.out);
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int rep = 0; rep < 25; ++rep) {
    cudaEventRecord(e0, st);
    CK(cudaGraphLaunch(exec, st));
    cudaEventRecord(e1, st);
    CK(cudaEventSynchronize(e1));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (rep >= 5) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  const float med = ts[ts.size() / 2];
  printf("%-18s %-5s %-22s R%d U%d W%-2d %8.3f ms %6.0f GB/s  err %.1e\n", what, tname<T>(), FIRST ? "first (I2F)" : "laya (mantissa)", R, U, warps,
         med, m.bytes / med / 1e6, err / std::max(1.0, m.ref_max));
  cudaGraphExecDestroy(exec); cudaGraphDestroy(graph); cudaStreamDestroy(st);
  (void)all;
}

// Gate and up of `m`'s matrices (copies 2c and 2c + 1) in one kernel each, checked against the
// reference's silu(gate) * up for copy 0 as both (both matrices hold the same values then).
template <typename T, int K, int N, int G, int R, int U>
void run_gate_up(Mats<T, K, N, G>& m, int warps) {
  const int rows_per_block = R * warps, blocks = (N + rows_per_block - 1) / rows_per_block;
  laya_gate_up<T, K, N, G, R, U><<<blocks, 32 * warps>>>(m.x, m.w[0], m.s[0], m.b[0], m.w[0], m.s[0], m.b[0], m.out);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> h(N);
  CK(cudaMemcpy(h.data(), m.out, N * sizeof(T), cudaMemcpyDeviceToHost));
  double err = 0, top = 0;
  for (int n = 0; n < N; ++n) {
    const double g = h2f(f2h<T>((float)m.ref[n])), want = g / (1 + std::exp(-g)) * g;
    err = std::max(err, std::fabs(h2f(h[n]) - want));
    top = std::max(top, std::fabs(want));
  }
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaGraph_t graph; cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int c = 0; c + 1 < m.copies; c += 2)
    laya_gate_up<T, K, N, G, R, U><<<blocks, 32 * warps, 0, st>>>(m.x, m.w[c], m.s[c], m.b[c], m.w[c + 1], m.s[c + 1], m.b[c + 1], m.out);
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int rep = 0; rep < 25; ++rep) {
    cudaEventRecord(e0, st);
    CK(cudaGraphLaunch(exec, st));
    cudaEventRecord(e1, st);
    CK(cudaEventSynchronize(e1));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (rep >= 5) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  const float med = ts[ts.size() / 2];
  printf("%-18s %-5s %-22s R%d U%d W%-2d %8.3f ms %6.0f GB/s  err %.1e\n", "gate+up+silu", tname<T>(), "laya gate/up (pairs)", R, U, warps, med,
         m.bytes / med / 1e6, err / std::max(1e-30, top));
  cudaGraphExecDestroy(exec); cudaGraphDestroy(graph); cudaStreamDestroy(st);
}

template <typename T, int K, int N, int G>
void shape(const char* what, int copies, bool all_variants) {
  Mats<T, K, N, G> m(copies);
  run<T, K, N, G, 4, 4, true>(m, 4, what);
  run<T, K, N, G, 4, 4, false>(m, 4, what);
  if (!all_variants) return;
  run<T, K, N, G, 4, 4, false>(m, 2, what);
  run<T, K, N, G, 4, 4, false>(m, 8, what);
  run<T, K, N, G, 2, 4, false>(m, 4, what);
  run<T, K, N, G, 2, 8, false>(m, 4, what);
  run<T, K, N, G, 4, 8, false>(m, 4, what);
  run<T, K, N, G, 8, 2, false>(m, 4, what);
  run<T, K, N, G, 1, 8, false>(m, 8, what);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  {
    // The 36 gate/up matrices as 18 pairs: the same bytes as 18 layers' gate and up.
    Mats<__half, 4096, 12288, 64> m(36);
    run<__half, 4096, 12288, 64, 8, 2, false>(m, 4, "qwen3-8b gate/up");
    run_gate_up<__half, 4096, 12288, 64, 4, 2>(m, 4);
    run_gate_up<__half, 4096, 12288, 64, 2, 4>(m, 4);
    run_gate_up<__half, 4096, 12288, 64, 4, 4>(m, 4);
  }
  if (getenv("QMV_QUICK")) return 0;
  shape<__half, 4096, 12288, 64>("qwen3-8b gate/up", 36, true);
  shape<__half, 12288, 4096, 64>("qwen3-8b down", 36, true);
  shape<__half, 4096, 4096, 64>("qwen3-8b q/o", 36, true);
  shape<__half, 4096, 1024, 64>("qwen3-8b k/v", 36, true);
  shape<__half, 4096, 151936, 64>("qwen3-8b head", 2, true);
  shape<__nv_bfloat16, 4096, 12288, 64>("qwen3-8b gate/up", 36, false);
  shape<float, 4096, 12288, 64>("qwen3-8b gate/up", 36, false);
  shape<float, 576, 1536, 32>("smollm2 gate/up", 30, false);
  shape<float, 1536, 576, 32>("smollm2 down", 30, false);
  return 0;
}
