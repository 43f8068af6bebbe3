// shape.cpp — differentiable views. A view moves no data, and neither does most of its
// backward: the gradient is the inverse view of dy (reshape back, transpose back, ...).
#include "autograd/ops.h"

namespace poslab {

// y = x viewed as `shape`:  dx = dy viewed as x's shape
Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape xs = x.shape();
  return record("reshape", x.detach().reshape(shape), {&x},
                [xs](const Tensor& dy) { return std::vector<Tensor>{dy.reshape(xs)}; });
}

// y = x with dims a, b swapped:  dx = dy with a, b swapped back
Tensor transpose(const Tensor& x, int64_t a, int64_t b) {
  return record("transpose", x.detach().transpose(a, b), {&x},
                [a, b](const Tensor& dy) { return std::vector<Tensor>{dy.transpose(a, b)}; });
}

// y = x.permute(order):  dx = dy.permute(inverse order)
Tensor permute(const Tensor& x, const std::vector<int64_t>& order) {
  Tensor y = x.detach().permute(order);
  std::vector<int64_t> inv(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inv[order[i] < 0 ? order[i] + order.size() : order[i]] = static_cast<int64_t>(i);
  return record("permute", y, {&x},
                [inv](const Tensor& dy) { return std::vector<Tensor>{dy.permute(inv)}; });
}

// y = x[start:end:step] along dim:  dx[start:end:step] += dy, zero elsewhere.
// dy is added into that slice of x's gradient buffer when the engine hands it over (into), on
// every device: q, k, v are slices of one (B,T,3C) projection, and their three gradients land
// side by side in one buffer, with no full-size zeros per slice and no full-size adds. The
// first slice to arrive finds no buffer and returns zeros holding its part, which becomes it.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Shape xs = x.shape();
  return record("slice", x.detach().slice(dim, start, end, step), {&x},
                [xs, dim, start, end, step](const Tensor& dy, const std::vector<Tensor>& into) {
                  const bool handed = into[0].defined();
                  Tensor dx = handed ? into[0] : Tensor::zeros(xs, dy.dtype(), dy.device());
                  kernel::add_(dx.slice(dim, start, end, step), dy);
                  return std::vector<Tensor>{handed ? Tensor() : dx};
                });
}

// y = x broadcast to shape:  dx = dy summed over the broadcast dims
Tensor expand(const Tensor& x, const Shape& shape) {
  Shape xs = x.shape();
  return record("expand", x.detach().expand(shape), {&x},
                [xs](const Tensor& dy) { return std::vector<Tensor>{kernel::sum_to(dy, xs)}; });
}

// y = a contiguous copy of x:  dx = dy
Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  return record("contiguous", x.detach().contiguous(), {&x},
                [](const Tensor& dy) { return std::vector<Tensor>{dy}; });
}

}  // namespace poslab
