// Laya's CPU kernels' instruction set and thread pool, each chosen once per process: the best the
// CPU has, every core, or less when Rust asks first (laya_cpu_configure: tests and benchmarks).

#include "common.h"

namespace laya {

namespace {

// What Rust asked for before the first kernel ran: an instruction set at most this good (-1: the
// best there is) and a thread count (0: every core).
std::atomic<int> asked_isa{-1};
std::atomic<int> asked_threads{0};
std::atomic<bool> isa_chosen{false}, pool_started{false};

Isa detect_isa() {
  __builtin_cpu_init();
  Isa best = Isa::Scalar;
  const bool f512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (f512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) best = Isa::Avx512Vnni;
  else if (f512) best = Isa::Avx512;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Isa::Avx2;
  const int cap = asked_isa.load();
  return cap >= 0 && cap < static_cast<int>(best) ? static_cast<Isa>(cap) : best;
}

}  // namespace

Isa isa() {
  static const Isa i = [] {
    isa_chosen = true;
    return detect_isa();
  }();
  return i;
}

// Vector width in floats of the chosen ISA (the 4-bit kernels read x in an order that matches it).
int lanes() {
  switch (isa()) {
    case Isa::Avx512:
    case Isa::Avx512Vnni: return 16;
    case Isa::Avx2: return 8;
    default: return 0;
  }
}

Pool& Pool::get() {
  static Pool p;
  return p;
}

Pool::Pool() {
  pool_started = true;
  int n = asked_threads.load();
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  n_ = std::clamp(n, 1, 64);
  for (int i = 1; i < n_; ++i) workers_.emplace_back([this] { work(); });
}

}  // namespace laya

using namespace laya;

extern "C" {

// Asks for an instruction set at most `isa_cap` (0 scalar, 2 AVX2+FMA, 3 AVX-512, 4 AVX-512
// with VNNI; -1 the best)
// and `threads` threads (0: every core). Returns 0, or 1 when a kernel already ran with others:
// both are chosen once per process.
int laya_cpu_configure(int isa_cap, int threads) {
  if (isa_cap != -1 && isa_cap != 0 && isa_cap != 2 && isa_cap != 3 && isa_cap != 4) return 1;
  if (threads < 0) return 1;
  if (isa_chosen || pool_started) {
    const bool same_isa = isa_cap == -1 || static_cast<int>(isa()) <= isa_cap;
    const bool same_threads = threads == 0 || Pool::get().threads() == std::clamp(threads, 1, 64);
    return same_isa && same_threads ? 0 : 1;
  }
  asked_isa = isa_cap;
  asked_threads = threads;
  return 0;
}

// 0 scalar, 2 AVX2+FMA, 3 AVX-512, 4 AVX-512 with VNNI.
int laya_cpu_isa() { return static_cast<int>(isa()); }

int laya_cpu_threads() { return Pool::get().threads(); }

}  // extern "C"
