// fast_exp.h — exp for the float loops that must vectorise (GELU, softmax rows, attention).
//
// libm's expf is a function call per element, so a loop that calls it runs one element at a
// time. exp_fast is plain arithmetic and bit operations, which the compiler turns into
// 16-wide AVX-512 code inside `#pragma omp simd` loops. Method (Cody & Waite range reduction,
// as in Cephes' expf):
//   x = n ln2 + r,  n = round(x / ln2),  |r| <= ln2 / 2
//   exp(x) = 2^n exp(r),  exp(r) ~ 1 + r + r^2/2! + ... + r^6/6!
// The Taylor remainder is below |r|^7 / 7! = 1.2e-7 relative, and ln2 is split into a short
// high part (exact in n * ln2_hi) and a low part so that r keeps its precision: the result is
// within a few float ulps of the true value (tests/tensor/test_kernels.cpp checks 3e-7
// relative over the whole range). 2^n is built directly in the exponent bits; the scaling is
// done as 2^(n-1) * 2 so that n = 128 (x just under the overflow point 88.72) stays finite.
// exp(x) for x < -86.5 returns 0 (the true value is below 2.8e-38: nothing a softmax or a
// sigmoid can see), x > 88.72 gives inf, NaN stays NaN. f64 keeps std::exp (gradchecks).
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace poslab {

inline float exp_fast(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  // t = 1.5 * 2^23 + n: n sits in t's low mantissa bits, so t's bits minus kRound's are n
  // itself, as an integer, with no float -> int conversion (which is undefined past int's
  // range: x may be anything here, the selects at the end replace what falls outside).
  float t = x * kLog2e + kRound;
  float n = t - kRound;
  float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.f / 720;
  p = p * r + 1.f / 120;
  p = p * r + 1.f / 24;
  p = p * r + 1.f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  // 2^(n-1): exponent field n - 1 + 127, n in [-125, 128] for x in range (so the field is
  // 1..254); unsigned, so that any x wraps instead of overflowing
  uint32_t ni = std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kRound);
  float two_n1 = std::bit_cast<float>((ni + 126u) << 23);
  float y = p * two_n1 * 2.f;
  // Out of range, the selects give the limits; NaN has flowed through every step as NaN.
  // No clamp of x first: a clamp gives the same bits for every input but compiles to a chain
  // of masked compares, half again as many instructions.
  y = x < -86.5f ? 0.f : y;
  y = x > 88.7228f ? INFINITY : y;
  return y;
}

// exp for a kernel templated on the dtype: the fast float path, std::exp for double.
template <class T>
inline T exp_k(T x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_fast(x);
  else
    return std::exp(x);
}

}  // namespace poslab
