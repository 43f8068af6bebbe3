// gradcheck.h — compares every analytic gradient with central finite differences, in f64.
//
// The scalar loss is L = sum(f(inputs) * R) with a fixed random R (so every output element
// matters, with a different weight). For each input x that requires grad and each element i:
//   numeric_i = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)
// and the check passes iff |analytic_i - numeric_i| <= atol + rtol |numeric_i| everywhere.
// Defaults follow PyTorch's gradcheck in double: eps 1e-6, atol 1e-5, rtol 1e-3. Central
// differences have error O(eps^2 f''') + O(ulp(L)/eps) ≈ 1e-10 here, far inside atol.
// On failure the message names the op, the input, the multi-index, both values and both
// losses of the worst element.
#pragma once
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"

namespace poslab::testing {

struct GradcheckResult {
  bool ok = true;
  std::string message;
};

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

inline Shape unravel(int64_t i, const Shape& shape) {
  Shape idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  return idx;
}

// inputs: f64 tensors; those with requires_grad are checked. They must be contiguous leaves.
// max_elems > 0 checks that many elements of each input (spread over it) instead of all.
inline GradcheckResult gradcheck(const std::string& op, const Fn& f, std::vector<Tensor> inputs,
                                 double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3,
                                 int64_t max_elems = -1, uint64_t seed = 1234) {
  GradcheckResult res;
  for (Tensor& t : inputs) {
    if (t.dtype() != DType::f64) return {false, op + ": gradcheck needs f64 inputs"};
    if (t.meta()) t.meta()->grad.reset();
  }
  Tensor out = f(inputs);
  Generator gen(seed);
  Tensor R = Tensor::randn(out.shape(), gen, 1.0, DType::f64);
  auto loss_of = [&](const Tensor& o) {
    std::vector<double> a = o.to_vector(), r = R.to_vector();
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * r[i];
    return s;
  };
  Tensor L = sum(mul(out, R));
  backward(L);
  NoGrad no_grad;
  double worst = -1;
  std::ostringstream msg;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k];
    if (!x.requires_grad()) continue;
    Tensor g = x.grad();
    std::vector<double> ga = g.defined() ? g.to_vector() : std::vector<double>(x.numel(), 0.0);
    double* p = x.data<double>();
    // every element, or (max_elems > 0) an evenly spread sample of them for big inputs
    int64_t n = x.numel(), count = max_elems > 0 ? std::min(n, max_elems) : n;
    for (int64_t c = 0; c < count; ++c) {
      int64_t i = count == n ? c : (c * n) / count + (c * 7919) % std::max<int64_t>(n / count, 1);
      double keep = p[i];
      p[i] = keep + eps;
      double lp = loss_of(f(inputs));
      p[i] = keep - eps;
      double lm = loss_of(f(inputs));
      p[i] = keep;
      double num = (lp - lm) / (2 * eps), an = ga[i];
      double excess = std::abs(an - num) - (atol + rtol * std::abs(num));
      if (excess > 0 && excess > worst) {
        worst = excess;
        res.ok = false;
        msg.str("");
        msg << op << ": gradient mismatch for input " << k << " " << shape_str(x.shape())
            << " at index " << shape_str(unravel(i, x.shape())) << ": analytic " << an
            << ", numeric " << num << " (L(x+eps) = " << lp << ", L(x-eps) = " << lm
            << ", eps = " << eps << ")";
      }
    }
  }
  res.message = res.ok ? op + ": ok" : msg.str();
  return res;
}

// A random f64 leaf that requires grad.
inline Tensor rand_leaf(const Shape& shape, uint64_t seed, double stddev = 1.0) {
  Generator gen(seed);
  Tensor t = Tensor::randn(shape, gen, stddev, DType::f64);
  t.set_requires_grad(true);
  return t;
}

}  // namespace poslab::testing

// REQUIRE_GRADCHECK(op, f, inputs...) — fails the test with the worst element's report.
#define REQUIRE_GRADCHECK(...)                                   \
  do {                                                           \
    auto gc_result_ = ::poslab::testing::gradcheck(__VA_ARGS__); \
    INFO(gc_result_.message);                                    \
    REQUIRE(gc_result_.ok);                                      \
  } while (0)
