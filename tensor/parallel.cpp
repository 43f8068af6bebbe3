// parallel.cpp — WorkRanges and PackedOperand (parallel.h).
#include "tensor/parallel.h"

#include <type_traits>

#include "tensor/ops.h"

namespace poslab::kernel {
namespace {

uint64_t pack(int64_t lo, int64_t hi) {
  return uint64_t(lo) << 32 | uint64_t(hi);
}

}  // namespace

WorkRanges::WorkRanges(int64_t n, int nt)
    : nt_(nt), ok_(nt >= 1 && nt <= kMaxThreads && n < (int64_t(1) << 31)) {
  if (!ok_) return;
  for (int t = 0; t < nt; ++t) range_[t].v.store(pack(n * t / nt, n * (t + 1) / nt));
}

int64_t WorkRanges::next(int t) {
  int64_t item;
  if (t < nt_ && take(t, true, &item)) return item;
  for (int k = 1; k <= nt_; ++k)
    if (take((t + k) % nt_, false, &item)) return item;
  return -1;
}

// One item from the front (the owner) or the back (another thread) of range t, by a
// compare-and-swap of its packed [lo, hi): no lock, and no item taken twice.
bool WorkRanges::take(int t, bool front, int64_t* item) {
  uint64_t v = range_[t].v.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t lo = int64_t(v >> 32), hi = int64_t(v & 0xffffffffu);
    if (lo >= hi) return false;
    const uint64_t taken = front ? pack(lo + 1, hi) : pack(lo, hi - 1);
    if (range_[t].v.compare_exchange_weak(v, taken, std::memory_order_relaxed)) {
      *item = front ? lo : hi - 1;
      return true;
    }
  }
}

template <class T>
void PackedOperand<T>::set(const T* b, int64_t ld_, bool trans_, int64_t K_, int64_t N_) {
  B = b, ld = ld_, trans = trans_, K = K_, N = N_;
  if constexpr (std::is_same_v<T, float>) {
    if (const SgemmKernel* uk = sgemm_kernel()) {
      ours = true;
      if (sgemm_in_place(*uk, trans, N, ld)) {
        packed = {B, K, N, ld};
        return;
      }
      static thread_local std::vector<float> buffers[5];
      std::vector<float>& buf = buffers[slot];
      buf.resize(static_cast<size_t>(sgemm_packed_floats(*uk, K, N)));
      sgemm_pack(*uk, trans, K, N, B, ld, buf.data());
      packed = {buf.data(), K, N};
    }
  }
}

template <class T>
void packed_gemm(bool ta, int64_t M, int64_t n, int64_t kc, T alpha, const T* A, int64_t lda,
                 const PackedOperand<T>& b, T beta, T* C, int64_t ldc, CausalBand band) {
  if constexpr (std::is_same_v<T, float>) {
    if (b.ours)
      return sgemm_prepacked(*sgemm_kernel(), ta, M, n, kc, alpha, A, lda, b.packed, beta, C, ldc,
                             band);
  }
  gemm<T>(ta, b.trans, M, n, kc, alpha, A, lda, b.B, b.ld, beta, C, ldc);
}

template struct PackedOperand<float>;
template struct PackedOperand<double>;
template void packed_gemm<float>(bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                                 const PackedOperand<float>&, float, float*, int64_t, CausalBand);
template void packed_gemm<double>(bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                  const PackedOperand<double>&, double, double*, int64_t,
                                  CausalBand);

}  // namespace poslab::kernel
