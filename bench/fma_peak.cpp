// fma_peak.cpp — this machine's FP32 fused multiply-add peak: the rate the training step's
// GFLOP/s is divided by in `make bench` (the "share of FMA peak" column).
//
// Every thread runs 12 independent chains acc_i = acc_i * b + c held in registers (no loads or
// stores in the loop): enough chains to cover the FMA latency (4-5 cycles) on two FMA pipes, so
// the loop runs at the pipes' throughput. One FMA counts 2 flops per lane. Measured for each
// vector width the CPU has (AVX2 ymm: 8 lanes, AVX-512 zmm: 16 lanes), with OMP_NUM_THREADS
// threads (all cores by default), for about half a second each.
// Prints lines `fma_peak <isa> <threads> <GFLOP/s>`; the widest ISA is the peak.
// Usage: bench_fma_peak
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "tensor/cpu_isa.h"

using namespace poslab;

namespace {

constexpr int kChains = 12;

// Runs `iters` rounds of 12 FMAs on ymm registers; returns a value depending on all of them
// (so that nothing is optimised away).
__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iters) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.f + 0.01f * i);
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], b, c);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) float fma_loop_avx512(long iters) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.f + 0.01f * i);
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], b, c);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  return lanes[0] + lanes[15];
}

// GFLOP/s of all threads together running the loop for `iters` rounds each.
double measure(kernel::Isa isa, long iters, int* threads) {
  const int lanes = isa == kernel::Isa::avx512 ? 16 : 8;
  volatile float sink = 0;
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
  {
    float r = isa == kernel::Isa::avx512 ? fma_loop_avx512(iters) : fma_loop_avx2(iters);
#pragma omp critical
    sink = sink + r;
#pragma omp single
    *threads = omp_get_num_threads();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * lanes * kChains * static_cast<double>(iters) * *threads / s / 1e9;
}

}  // namespace

int main() {
  const kernel::Isa have = kernel::cpu_isa_supported();
  if (have == kernel::Isa::generic) {
    std::printf("fma_peak none 0 0  # this CPU has neither AVX2+FMA nor AVX-512\n");
    return 0;
  }
  for (kernel::Isa isa : {kernel::Isa::avx2, kernel::Isa::avx512}) {
    if (isa > have) break;
    int threads = 1;
    measure(isa, 1000000, &threads);  // warm-up: clocks up, threads started
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {  // best of 3 (~0.2 s each at 4 GHz)
      double g = measure(isa, 20000000, &threads);
      best = g > best ? g : best;
    }
    std::printf("fma_peak %s %d %.1f\n", kernel::isa_name(isa), threads, best);
  }
  return 0;
}
