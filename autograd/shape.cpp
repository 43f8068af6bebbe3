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

// y = x[start:end:step] along dim:  dx = zeros with dy written into that slice.
// The engine adds dy into that slice of x's gradient buffer instead (add_into), on every
// device: q, k, v are slices of one (B,T,3C) projection, and their three gradients land side
// by side in one buffer, with no full-size zeros per slice and no full-size adds.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Shape xs = x.shape();
  Tensor y = record("slice", x.detach().slice(dim, start, end, step), {&x},
                    [xs, dim, start, end, step](const Tensor& dy) {
                      Tensor dx = Tensor::zeros(xs, dy.dtype(), dy.device());
                      dx.slice(dim, start, end, step).copy_(dy);
                      return std::vector<Tensor>{dx};
                    });
  if (y.meta() && y.meta()->grad_fn)
    y.meta()->grad_fn->add_into = [dim, start, end, step](const Tensor& dx, const Tensor& dy) {
      kernel::add_(dx.slice(dim, start, end, step), dy);
    };
  return y;
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
