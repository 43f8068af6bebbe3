// matmul.cpp — differentiable matrix products.
#include "autograd/ops.h"

namespace poslab {

// C = A B with A (...,M,K), B (...,K,N):
//   dA = dC B^T   (...,M,N)(...,N,K)
//   dB = A^T dC   (...,K,M)(...,M,N)
// then summed over batch dims that were broadcast. The transposes are views: BLAS reads them
// as Trans operands without copying.
Tensor matmul(const Tensor& a, const Tensor& b) {
  bool ga = a.requires_grad(), gb = b.requires_grad();
  Tensor sa = gb ? a.detach() : Tensor(), sb = ga ? b.detach() : Tensor();
  return record("matmul", kernel::matmul(a, b), {&a, &b},
                [sa, sb, ga, gb, shape_a = a.shape(), shape_b = b.shape()](const Tensor& dc) {
                  Tensor da, db;
                  if (ga) da = kernel::sum_to(kernel::matmul(dc, sb.transpose(-1, -2)), shape_a);
                  if (gb) db = kernel::sum_to(kernel::matmul(sa.transpose(-1, -2), dc), shape_b);
                  return std::vector<Tensor>{da, db};
                });
}

// y = x W^T + b with x (N,in), W (out,in), b (out):
//   dx = dy W        (N,out)(out,in)
//   dW = dy^T x      (out,N)(N,in)
//   db = sum_n dy[n]
// dW and db are added straight into their gradient buffers when the engine hands them over
// (`into`, node.h): the GEMM with beta = 1, the column sum's last pass. dx is returned.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  bool gx = x.requires_grad(), gw = w.requires_grad(), gb = b.defined() && b.requires_grad();
  Tensor sx = x.detach(), sw = w.detach();
  return record("linear", kernel::linear(x, w, b), {&x, &w, &b},
                [sx, sw, gx, gw, gb](const Tensor& dy, const std::vector<Tensor>& into) {
                  Tensor dx, dw = into[1], db = into[2];
                  kernel::linear_backward(sx, sw, dy, gx ? &dx : nullptr, gw ? &dw : nullptr,
                                          gb ? &db : nullptr);
                  if (into[1].defined()) dw = Tensor();  // added there already
                  if (into[2].defined()) db = Tensor();
                  return std::vector<Tensor>{dx, dw, db};
                });
}

}  // namespace poslab
