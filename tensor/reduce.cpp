// reduce.cpp — sums and maxima along axes.
//
// Scalar math: out[k] = sum_r x[k, r] where k runs over the kept dims and r over the reduced
// ones. Sums accumulate in double so that f32 reductions over B*T rows stay accurate.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/backend.h"
#include "tensor/strided.h"

namespace poslab::kernel {

std::vector<bool> reduced_mask(const char* op, const Tensor& x, const std::vector<int64_t>& axes) {
  std::vector<bool> red(x.dim(), axes.empty());
  for (int64_t a : axes) {
    if (a < -x.dim() || a >= x.dim())
      fail(op, ": axis ", a, " out of range for shape ", shape_str(x.shape()));
    red[a < 0 ? a + x.dim() : a] = true;
  }
  return red;
}

Shape out_shape(const Tensor& x, const std::vector<bool>& red, bool keepdim) {
  Shape s;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!red[d])
      s.push_back(x.shape()[d]);
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

// x as (outer, inner) with the reduced dims last, contiguous.
Tensor reduced_last(const Tensor& x, const std::vector<bool>& red, int64_t* outer, int64_t* inner) {
  std::vector<int64_t> order;
  *outer = *inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!red[d]) order.push_back(d), *outer *= x.shape()[d];
  for (int64_t d = 0; d < x.dim(); ++d)
    if (red[d]) order.push_back(d), *inner *= x.shape()[d];
  return x.permute(order).contiguous();
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  if (broadcast_shapes("sum_to", x.shape(), shape) != x.shape())
    fail("sum_to: shape ", shape_str(shape), " does not broadcast to ", shape_str(x.shape()));
  int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) axes.push_back(d);
  if (axes.empty()) return x.reshape(shape);
  return sum(x, axes, true).reshape(shape);
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  check_defined("sum", x, "x");
  reduced_mask("sum", x, axes);  // checks the axes
  return backend(x.device()).sum(x, axes, keepdim);
}

Tensor max(const Tensor& x, int64_t axis, bool keepdim) {
  check_defined("max", x, "x");
  if (x.dim() == 0) fail("max: expected at least one dim, but got a scalar");
  reduced_mask("max", x, {axis});  // checks the axis
  if (x.shape()[axis < 0 ? axis + x.dim() : axis] == 0)
    fail("max: cannot reduce an empty axis of shape ", shape_str(x.shape()));
  return backend(x.device()).max(x, axis, keepdim);
}

double sum_squares(const Tensor& x) {
  return backend(x.device()).sum_squares(x);
}

namespace cpu {
namespace {

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  std::vector<bool> red = reduced_mask("sum", x, axes);
  Tensor out = Tensor::empty(out_shape(x, red, keepdim), x.dtype());
  // Leading dims reduced on a contiguous x (bias gradients): column sums, no copy.
  int64_t lead = 0;
  while (lead < x.dim() && red[lead]) ++lead;
  bool leading_only =
      lead > 0 && std::none_of(red.begin() + lead, red.end(), [](bool r) { return r; });
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data<T>();
    if (leading_only && x.is_contiguous()) {
      int64_t R = 1;
      for (int64_t d = 0; d < lead; ++d) R *= x.shape()[d];
      int64_t K = x.numel() / std::max<int64_t>(R, 1);
      const T* p = x.data<T>();
#pragma omp parallel for if (x.numel() > kParallelGrain)
      for (int64_t k0 = 0; k0 < K; k0 += 64) {  // 64 columns per task, rows streamed
        int64_t k1 = std::min(K, k0 + 64);
        double acc[64] = {0};
        for (int64_t r = 0; r < R; ++r)
          for (int64_t k = k0; k < k1; ++k) acc[k - k0] += p[r * K + k];
        for (int64_t k = k0; k < k1; ++k) o[k] = static_cast<T>(acc[k - k0]);
      }
      return;
    }
    int64_t outer, inner;
    Tensor c = reduced_last(x, red, &outer, &inner);
    const T* p = c.data<T>();
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t k = 0; k < outer; ++k) {
      double acc = 0;
      for (int64_t r = 0; r < inner; ++r) acc += p[k * inner + r];
      o[k] = static_cast<T>(acc);
    }
  });
  return out;
}

Tensor max(const Tensor& x, int64_t axis, bool keepdim) {
  std::vector<bool> red = reduced_mask("max", x, {axis});
  Tensor out = Tensor::empty(out_shape(x, red, keepdim), x.dtype());
  int64_t outer, inner;
  Tensor c = reduced_last(x, red, &outer, &inner);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = c.data<T>();
    T* o = out.data<T>();
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t k = 0; k < outer; ++k) {
      T m = p[k * inner];
      for (int64_t r = 1; r < inner; ++r) m = std::max(m, p[k * inner + r]);
      o[k] = m;
    }
  });
  return out;
}

double sum_squares(const Tensor& x) {
  Tensor c = x.to(Device::cpu).contiguous();
  double acc = 0;
  dispatch(c.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = c.data<T>();
    int64_t n = c.numel();
#pragma omp parallel for reduction(+ : acc) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(p[i]) * p[i];
  });
  return acc;
}

}  // namespace

void add_reductions(Backend& k) {
  k.sum = sum;
  k.max = max;
  k.sum_squares = sum_squares;
}

}  // namespace cpu
}  // namespace poslab::kernel
