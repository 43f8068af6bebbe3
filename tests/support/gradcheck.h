// gradcheck.h — compares every analytic gradient with central finite differences, in f64.
//
// The scalar loss is L = sum(f(inputs) * R) with a fixed random R (so every output element
// matters, with a different weight). For each input x that requires grad and each element i:
//   numeric_i = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)
// and the check passes iff |analytic_i - numeric_i| <= atol + rtol |numeric_i| everywhere.
// Defaults follow PyTorch's gradcheck in double: eps 1e-6, atol 1e-5, rtol 1e-3. Central
// differences have error O(eps^2 f''') + O(ulp(L)/eps) ≈ 1e-10 here, far inside atol.
//
// It refuses (fails, saying why) what it cannot perturb safely: an input that is not f64, not
// contiguous (element i would not be the i-th value in memory), not a leaf (its gradient is not
// kept), or that shares memory with another input (one nudge would move both); and a check
// that would compare no element at all. On a mismatch the message names the op, the input,
// the multi-index, both values and both losses of the worst element.
//
// Every result is also appended to gradcheck_log(), from which `make gradcheck`
// (tests/gradcheck/main.cpp) prints one table per encoding. By convention an op's name is
// "<table>: <what>", e.g. "alibi: attention H=8 T=16": the table is the encoding (or "ops").
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.h"

namespace poslab::testing {

struct GradcheckSettings {
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  int64_t max_elems = -1;  // > 0: that many elements of each input (spread over it), not all
  uint64_t seed = 1234;    // of R
  std::vector<std::string> names;  // one per input (default "input k")
};

// One input's row of the report: elements compared, the largest |analytic - numeric|, and the
// largest relative error |analytic - numeric| / max(|numeric|, atol).
struct InputReport {
  std::string name;
  int64_t checked = 0;
  double max_abs = 0, max_rel = 0;
  bool ok = true;
};

struct GradcheckResult {
  std::string op;
  bool ok = true;
  std::string message;
  double atol = 0, rtol = 0;
  std::vector<InputReport> inputs;
};

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

inline std::vector<GradcheckResult>& gradcheck_log() {
  static std::vector<GradcheckResult> log;
  return log;
}

inline Shape unravel(int64_t i, const Shape& shape) {
  Shape idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  return idx;
}

// Why input k cannot be perturbed safely, or "" when it can.
inline std::string unsafe_input(const std::vector<Tensor>& inputs, size_t k) {
  const Tensor& x = inputs[k];
  if (!x.defined()) return "is undefined";
  if (x.dtype() != DType::f64) return std::string("is ") + dtype_name(x.dtype()) + ", not f64";
  if (x.device() != Device::cpu) return "is not on the cpu";
  if (!x.is_contiguous()) return "is not contiguous (" + shape_str(x.strides()) + " strides)";
  if (x.meta() && x.meta()->grad_fn) return "is not a leaf (it has a grad_fn)";
  const double *a = x.data<double>(), *a_end = a + x.numel();
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Tensor& y = inputs[j];
    if (j == k || !y.defined() || y.dtype() != DType::f64 || y.numel() == 0 || x.numel() == 0)
      continue;
    const double *b = y.data<double>(), *b_end = b + y.numel();
    if (a < b_end && b < a_end) return "shares memory with input " + std::to_string(j);
  }
  return "";
}

// Settings naming the inputs (the rows of `make gradcheck`'s tables), optionally sampling.
inline GradcheckSettings named(std::vector<std::string> names, int64_t max_elems = -1) {
  GradcheckSettings s;
  s.names = std::move(names);
  s.max_elems = max_elems;
  return s;
}

// Input k's element i (flat), sampled evenly when only `count` of n are checked.
inline int64_t sample_index(int64_t c, int64_t count, int64_t n) {
  return count == n ? c : (c * n) / count + (c * 7919) % std::max<int64_t>(n / count, 1);
}

// Compares input x's analytic gradient ga with central differences of loss(), element by
// element (all, or s.max_elems spread over x); the worst mismatch so far (by how far it
// exceeds the tolerance) goes into *worst and *message.
template <class Loss>
InputReport compare_input(const std::string& op, const std::string& name, Tensor& x,
                          const std::vector<double>& ga, const Loss& loss,
                          const GradcheckSettings& s, double* worst, std::string* message) {
  InputReport rep{name};
  double* p = x.data<double>();
  int64_t n = x.numel(), count = s.max_elems > 0 ? std::min(n, s.max_elems) : n;
  for (int64_t c = 0; c < count; ++c) {
    int64_t i = sample_index(c, count, n);
    double keep = p[i];
    p[i] = keep + s.eps;
    double lp = loss();
    p[i] = keep - s.eps;
    double lm = loss();
    p[i] = keep;
    double num = (lp - lm) / (2 * s.eps), an = ga[i], err = std::abs(an - num);
    rep.max_abs = std::max(rep.max_abs, err);
    rep.max_rel = std::max(rep.max_rel, err / std::max(std::abs(num), s.atol));
    double excess = err - (s.atol + s.rtol * std::abs(num));
    if (excess > 0) rep.ok = false;
    if (excess > 0 && excess > *worst) {
      *worst = excess;
      std::ostringstream msg;
      msg << op << ": gradient mismatch for " << name << " " << shape_str(x.shape()) << " at index "
          << shape_str(unravel(i, x.shape())) << ": analytic " << an << ", numeric " << num
          << " (L(x+eps) = " << lp << ", L(x-eps) = " << lm << ", eps = " << s.eps << ")";
      *message = msg.str();
    }
  }
  rep.checked = count;
  return rep;
}

inline GradcheckResult gradcheck(const std::string& op, const Fn& f, std::vector<Tensor> inputs,
                                 const GradcheckSettings& s = {}) {
  GradcheckResult res{op, true, op + ": ok", s.atol, s.rtol, {}};
  auto refuse = [&](const std::string& why) {
    res.ok = false, res.message = op + ": gradcheck refuses: " + why;
    gradcheck_log().push_back(res);
    return res;
  };
  if (!s.names.empty() && s.names.size() != inputs.size())
    return refuse(std::to_string(s.names.size()) + " names for " + std::to_string(inputs.size()) +
                  " inputs");
  auto name_of = [&](size_t k) {
    return s.names.empty() ? "input " + std::to_string(k) : s.names[k];
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::string why = unsafe_input(inputs, k);
    if (!why.empty()) return refuse(name_of(k) + " " + shape_str(inputs[k].shape()) + " " + why);
    if (inputs[k].meta()) inputs[k].meta()->grad.reset();
  }
  bool any = false;
  for (const Tensor& x : inputs) any = any || (x.requires_grad() && x.numel() > 0);
  if (!any) return refuse("no element was checked (no input requires grad, or all are empty)");
  Tensor out = f(inputs);
  Generator gen(s.seed);
  Tensor R = Tensor::randn(out.shape(), gen, 1.0, DType::f64);
  std::vector<double> r = R.to_vector();
  auto loss = [&] {  // L = sum(f(inputs) * R) at the inputs' current values
    std::vector<double> a = f(inputs).to_vector();
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i) sum += a[i] * r[i];
    return sum;
  };
  backward(sum(mul(out, R)));
  NoGrad no_grad;
  double worst = -1;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k];
    if (!x.requires_grad()) continue;
    Tensor g = x.grad();
    std::vector<double> ga = g.defined() ? g.to_vector() : std::vector<double>(x.numel(), 0.0);
    res.inputs.push_back(compare_input(op, name_of(k), x, ga, loss, s, &worst, &res.message));
    res.ok = res.ok && res.inputs.back().ok;
  }
  gradcheck_log().push_back(res);
  return res;
}

// A random f64 leaf that requires grad.
inline Tensor rand_leaf(const Shape& shape, uint64_t seed, double stddev = 1.0) {
  Generator gen(seed);
  Tensor t = Tensor::randn(shape, gen, stddev, DType::f64);
  t.set_requires_grad(true);
  return t;
}

// The largest |a - b| over the elements of two tensors of the same shape (read as f64).
inline double max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) throw std::invalid_argument("max_diff: the tensors' shapes differ");
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

}  // namespace poslab::testing

// CHECK_GRADCHECK(op, f, inputs, settings) — fails the test with the worst element's report,
// and goes on with the test's other checks (CHECK), so a report lists every failure.
#define CHECK_GRADCHECK(...)                                     \
  do {                                                           \
    auto gc_result_ = ::poslab::testing::gradcheck(__VA_ARGS__); \
    INFO(gc_result_.message);                                    \
    CHECK(gc_result_.ok);                                        \
  } while (0)
