// reduce.cpp — differentiable reductions.
#include "autograd/ops.h"

namespace poslab {

// The output's shape with the reduced axes kept as size 1, so a gradient can broadcast back.
static Shape keepdim_shape(const Shape& in, std::vector<int64_t> axes) {
  Shape s = in;
  if (axes.empty())
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  for (int64_t a : axes) s[a < 0 ? a + in.size() : a] = 1;
  return s;
}

// y = sum_r x[k, r]:  dx[k, r] = dy[k]   (dy broadcast back over the reduced axes)
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  Tensor y = kernel::sum(x, axes, keepdim);
  Shape kshape = keepdim_shape(x.shape(), axes), xs = x.shape();
  return record("sum", y, {&x}, [kshape, xs](const Tensor& dy) {
    return std::vector<Tensor>{dy.reshape(kshape).expand(xs).contiguous()};
  });
}

// y = (1/R) sum_r x[k, r]:  dx[k, r] = dy[k] / R
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  int64_t R = 1;
  if (axes.empty())
    R = x.numel();
  else
    for (int64_t a : axes) R *= x.size(a);
  return scale(sum(x, axes, keepdim), R ? 1.0 / R : 0.0);
}

// y = max_r x[k, r]:  dx[k, r] = dy[k] [x[k,r] == y[k]] / (number of ties)
// (ties share the gradient equally, so sum_r dx[k, r] = dy[k] as for a unique maximum)
Tensor max(const Tensor& x, int64_t axis, bool keepdim) {
  Tensor y = kernel::max(x, axis, keepdim);
  Shape kshape = keepdim_shape(x.shape(), {axis});
  Tensor sx = x.detach(), sy = y.detach();
  return record("max", y, {&x}, [sx, sy, kshape, axis](const Tensor& dy) {
    Tensor hit = kernel::binary(kernel::BinaryOp::eq, sx, sy.reshape(kshape));
    Tensor ties = kernel::sum(hit, {axis}, true);
    Tensor share = kernel::binary(kernel::BinaryOp::div, dy.reshape(kshape), ties);
    return std::vector<Tensor>{kernel::binary(kernel::BinaryOp::mul, hit, share)};
  });
}

}  // namespace poslab
