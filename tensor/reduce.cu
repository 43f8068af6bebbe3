// reduce.cu — sums and maxima along axes on the GPU (CPU: reduce.cpp; kernels: reduce.cuh).
//
// Scalar math: out[k] = sum_r x[k, r] where k runs over the kept dims and r over the reduced
// ones, accumulated in double. Two shapes of work, as on the CPU:
//   leading dims reduced on a contiguous x (bias gradients, broadcast adds): column sums;
//   anything else: x permuted so the reduced dims are last, then row reductions.
#include <algorithm>

#include "tensor/backend.h"
#include "tensor/reduce.cuh"
#include "tensor/strided.h"

namespace poslab::kernel::cuda {

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  std::vector<bool> red = reduced_mask("sum", x, axes);
  Tensor out = Tensor::empty(out_shape(x, red, keepdim), x.dtype(), Device::cuda);
  if (out.numel() == 0) return out;
  if (x.numel() == 0) {
    out.fill_(0);
    return out;
  }
  // the leading dims reduced and the others kept (red = 1..1 0..0): column sums
  bool columns = !red.empty() && red.front() && !red.back() &&
                 std::is_partitioned(red.begin(), red.end(), [](bool r) { return r; });
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (columns && x.is_contiguous()) {  // x viewed as (R, K)
      int64_t K = out.numel(), R = x.numel() / K;
      gpu::column_sums<T, 1>(gpu::ColumnOf<T>{x.data<T>(), K}, R, K, {{out.data<T>()}}, "sum");
      return;
    }
    int64_t outer, inner;
    Tensor c = reduced_last(x, red, &outer, &inner);
    gpu::reduce_rows<gpu::SumOp>(c.data<T>(), outer, inner, out.data<T>(), 1.0, "sum");
  });
  return out;
}

Tensor max(const Tensor& x, int64_t axis, bool keepdim) {
  std::vector<bool> red = reduced_mask("max", x, {axis});
  Tensor out = Tensor::empty(out_shape(x, red, keepdim), x.dtype(), Device::cuda);
  if (out.numel() == 0) return out;
  int64_t outer, inner;
  Tensor c = reduced_last(x, red, &outer, &inner);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gpu::reduce_rows<gpu::MaxOp<T>>(c.data<T>(), outer, inner, out.data<T>(), 1.0, "max");
  });
  return out;
}

double sum_squares(const Tensor& x) {
  if (x.numel() == 0) return 0;
  Tensor c = x.contiguous();
  Storage result(sizeof(double), Device::cuda);
  dispatch(c.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gpu::reduce_rows<gpu::SumSquaresOp>(c.data<T>(), 1, c.numel(),
                                        static_cast<double*>(result.data()), 1.0, "sum_squares");
  });
  double host = 0;
  gpu::download(&host, result.data(), sizeof host);
  return host;
}

void add_reductions(Backend& k) {
  k.sum = sum;
  k.max = max;
  k.sum_squares = sum_squares;
}

}  // namespace poslab::kernel::cuda
