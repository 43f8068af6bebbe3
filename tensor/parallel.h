// parallel.h — the machinery of the fast CPU kernels that is not their math: items of work
// shared out among the threads (WorkRanges, parallel_items), memory asked for before it is
// read (prefetch_rows), per-thread scratch buffers, and a right-hand operand packed once for
// many products (PackedOperand). The fused attention (nn/attention_kernels.cpp) uses all four;
// the reasons for each choice are below, their measurements in bench/train_step and bench/ops.
#pragma once
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "tensor/sgemm.h"

namespace poslab::kernel {

// Items [0, n) shared out among nt threads, each thread first taking its own contiguous range
// from the front, then, once that is empty, items from the back of the others' ranges. For
// attention an item is a head bh = b H + h, so a range is whole sequences: the rows of (B T, C)
// that the same thread wrote in the q, k, v projection (sgemm gives each thread a contiguous
// range of rows) and reads in the output projection, which then stay in its core's caches.
// Taking from the back lets a faster core finish a slower one's items (cores of a VM can run
// at different speeds for seconds at a time) and keeps the answer right for a team of any
// size. Which thread computes an item must not change its bits (the callers make sure).
class WorkRanges {
 public:
  // More threads, or more items than 32 bits count: ok() is false, and callers fall back to a
  // plain dynamic loop.
  static constexpr int kMaxThreads = 64;
  WorkRanges(int64_t n, int nt);
  bool ok() const { return ok_; }
  // The next item for thread t, or -1 when every item is taken.
  int64_t next(int t);

 private:
  struct alignas(64) Range {  // [lo, hi) packed as lo << 32 | hi, one cache line each
    std::atomic<uint64_t> v{0};
  };
  bool take(int t, bool front, int64_t* item);
  int nt_;
  bool ok_;
  Range range_[kMaxThreads];
};

// Runs body(state, i) for every item i in [0, n) on the OpenMP team, with one State per thread
// (default-constructed in it: the thread's buffers, its last packed operand, ...). With
// `ranges`, items are taken through WorkRanges; otherwise (or where WorkRanges cannot) one at
// a time in order, as they come free (schedule(dynamic, 1)): for few items of unequal cost.
template <class State, class Body>
void parallel_items(int64_t n, bool ranges, Body&& body) {
  WorkRanges work(n, omp_get_max_threads());
  const bool use_ranges = ranges && work.ok();
#pragma omp parallel
  {
    State state;
    if (use_ranges) {
      for (int64_t i; (i = work.next(omp_get_thread_num())) >= 0;) body(state, i);
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < n; ++i) body(state, i);
    }
  }
}

// Asks the cache for rows [r0, r1) of a row-major matrix (row stride ld, D values a row): one
// prefetch per 64-byte line. Attention's row blocks read 48 short rows of Q (and of dO) far
// apart (a row of q is 128 bytes of every 512 or 1536), too short for the hardware's stream
// prefetchers; the kernels ask for the next block's rows while the current one works
// (bench/ops, attention forward + backward).
template <class T>
inline void prefetch_rows(const T* x, int64_t ld, int64_t r0, int64_t r1, int64_t D) {
  constexpr int64_t line = 64 / sizeof(T);
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = 0; c < D; c += line) __builtin_prefetch(x + r * ld + c);
}

// This thread's scratch buffer number `slot` (0 or 1), grown as needed and kept: a training
// step allocates nothing here once the first step has sized them.
template <class T>
T* thread_scratch(int slot, int64_t n) {
  static thread_local std::vector<T> buffers[2];
  if (static_cast<int64_t>(buffers[slot].size()) < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

// A right-hand operand op(B) (K, N) shared by several products (attention: a head's K^T and V,
// multiplied by each of its row blocks). When our sgemm multiplies (f32 with the AVX2 or
// AVX-512 kernel), set() packs B once for them all, or, where its rows already are panel rows
// (sgemm_in_place), reads it in place. Otherwise gemm<T> reads B in place each time (f64,
// POSLAB_GEMM=blas, CPUs without AVX2).
template <class T>
struct PackedOperand {
  const T* B = nullptr;
  int64_t ld = 0, K = 0, N = 0;
  bool trans = false;  // B stores op(B)^T
  bool ours = false;   // sgemm_prepacked multiplies, with `packed` below
  PackedB packed{nullptr, 0, 0};
  int slot;  // which of the thread's packing buffers (0..4) holds it
  explicit PackedOperand(int s) : slot(s) {}
  void set(const T* b, int64_t ld_, bool trans_, int64_t K_, int64_t N_);
};

// C (M,n) = alpha op(A) (M,kc) op(B)[0:kc, 0:n] + beta C: rows against a leading block of the
// packed operand. `band` (sgemm.h) tells our sgemm which tiles and terms a causal mask makes
// zero or unwanted; gemm<T> (f64, OpenBLAS) computes them all, which is the same result: the
// skipped terms are zeros, the skipped tiles are masked scores that the callers never read.
template <class T>
void packed_gemm(bool ta, int64_t M, int64_t n, int64_t kc, T alpha, const T* A, int64_t lda,
                 const PackedOperand<T>& b, T beta, T* C, int64_t ldc, CausalBand band = {});

}  // namespace poslab::kernel
