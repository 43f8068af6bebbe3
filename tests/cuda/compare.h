// compare.h — GPU against CPU on the same inputs, for tests/cuda.
//
// Every comparison is |gpu - cpu| <= rtol |cpu| + atol max_k |cpu_k|: a relative part for each
// element plus an absolute part scaled by the tensor's largest value, so that an element that
// cancels to near zero (a sum of terms of mixed sign) is judged against the magnitude of the
// terms that made it, not against itself. On failure: the worst element, its index, both values.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tensor/device.h"

namespace poslab::testing {

inline Tensor on_gpu(const Tensor& t) {
  return t.to(Device::cuda);
}

// A random f32 tensor on the CPU, N(0, stddev^2), seeded.
inline Tensor randn(const Shape& shape, uint64_t seed, double stddev = 1.0) {
  Generator g(seed);
  return Tensor::randn(shape, g, stddev);
}

// A leaf that requires grad with the values of t, on `device`.
inline Tensor leaf(const Tensor& t, Device device) {
  Tensor l = t.detach().to(device).clone();
  l.set_requires_grad(true);
  return l;
}

struct Closeness {
  bool ok = true;
  std::string message;
};

inline Closeness compare(const Tensor& gpu, const Tensor& cpu, double rtol, double atol) {
  if (gpu.shape() != cpu.shape())
    return {false,
            "shapes differ: gpu " + shape_str(gpu.shape()) + ", cpu " + shape_str(cpu.shape())};
  if (gpu.device() != Device::cuda || cpu.device() != Device::cpu)
    return {false, "expected (gpu, cpu) tensors"};
  std::vector<double> a = gpu.to_vector(), b = cpu.to_vector();
  double scale = 0;
  for (double x : b) scale = std::max(scale, std::abs(x));
  double worst = 0;
  size_t at = 0;
  bool ok = true;
  for (size_t i = 0; i < a.size(); ++i) {
    double err = std::abs(a[i] - b[i]), allowed = rtol * std::abs(b[i]) + atol * scale;
    bool bad = !(err <= allowed) && !(a[i] == b[i]);  // NaN fails; equal infinities pass
    if (bad && (ok || err - allowed > worst)) worst = err - allowed, at = i, ok = false;
  }
  if (ok) return {};
  std::ostringstream os;
  os << "element " << at << " of " << shape_str(cpu.shape()) << ": gpu " << a[at] << ", cpu "
     << b[at] << " (rtol " << rtol << ", atol " << atol << " x max|cpu| = " << scale << ")";
  return {false, os.str()};
}

}  // namespace poslab::testing

// REQUIRE_CLOSE(gpu, cpu, rtol, atol): see compare() above.
#define REQUIRE_CLOSE(gpu, cpu, rtol, atol)                                 \
  do {                                                                      \
    auto close_ = ::poslab::testing::compare((gpu), (cpu), (rtol), (atol)); \
    INFO(#gpu " vs " #cpu ": " << close_.message);                          \
    REQUIRE(close_.ok);                                                     \
  } while (0)
