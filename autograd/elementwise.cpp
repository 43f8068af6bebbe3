// elementwise.cpp — differentiable elementwise ops.
//
// Broadcasting rule for every binary backward: the gradient of an input that was broadcast
// is summed over the broadcast dims (kernel::sum_to), so it has the input's shape again.
#include <cmath>

#include "autograd/ops.h"

namespace poslab {

using kernel::BinaryOp;
using kernel::UnaryOp;

// c = a + b:  da = dc,  db = dc
Tensor add(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("add", kernel::binary(BinaryOp::add, a, b), {&a, &b}, [sa, sb](const Tensor& dc) {
    return std::vector<Tensor>{kernel::sum_to(dc, sa), kernel::sum_to(dc, sb)};
  });
}

// c = a - b:  da = dc,  db = -dc
Tensor sub(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("sub", kernel::binary(BinaryOp::sub, a, b), {&a, &b}, [sa, sb](const Tensor& dc) {
    return std::vector<Tensor>{kernel::sum_to(dc, sa),
                               kernel::sum_to(kernel::unary(UnaryOp::neg, dc), sb)};
  });
}

// c = a * b:  da = dc * b,  db = dc * a
Tensor mul(const Tensor& a, const Tensor& b) {
  bool ga = a.requires_grad(), gb = b.requires_grad();
  Tensor sa = gb ? a.detach() : Tensor(), sb = ga ? b.detach() : Tensor();  // saved
  return record("mul", kernel::binary(BinaryOp::mul, a, b), {&a, &b},
                [sa, sb, ga, gb, shape_a = a.shape(), shape_b = b.shape()](const Tensor& dc) {
                  Tensor da, db;
                  if (ga) da = kernel::sum_to(kernel::binary(BinaryOp::mul, dc, sb), shape_a);
                  if (gb) db = kernel::sum_to(kernel::binary(BinaryOp::mul, dc, sa), shape_b);
                  return std::vector<Tensor>{da, db};
                });
}

// c = a / b:  da = dc / b,  db = -dc * a / b^2 = -dc * c / b
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor c = kernel::binary(BinaryOp::div, a, b);
  bool gb = b.requires_grad();
  Tensor sb = b.detach(), sc = gb ? c.detach() : Tensor();
  return record(
      "div", c, {&a, &b}, [sb, sc, gb, shape_a = a.shape(), shape_b = b.shape()](const Tensor& dc) {
        Tensor da = kernel::sum_to(kernel::binary(BinaryOp::div, dc, sb), shape_a);
        Tensor db;
        if (gb) {
          Tensor t = kernel::binary(BinaryOp::div, kernel::binary(BinaryOp::mul, dc, sc), sb);
          db = kernel::sum_to(kernel::unary(UnaryOp::neg, t), shape_b);
        }
        return std::vector<Tensor>{da, db};
      });
}

// y = s x:  dx = s dy
Tensor scale(const Tensor& x, double s) {
  return record("scale", kernel::affine(x, s, 0), {&x},
                [s](const Tensor& dy) { return std::vector<Tensor>{kernel::affine(dy, s, 0)}; });
}

// y = x + s:  dx = dy
Tensor shift(const Tensor& x, double s) {
  return record("shift", kernel::affine(x, 1, s), {&x},
                [](const Tensor& dy) { return std::vector<Tensor>{dy}; });
}

// y = -x:  dx = -dy
Tensor neg(const Tensor& x) {
  return record("neg", kernel::unary(UnaryOp::neg, x), {&x}, [](const Tensor& dy) {
    return std::vector<Tensor>{kernel::unary(UnaryOp::neg, dy)};
  });
}

// y = e^x:  dx = dy * y
Tensor exp(const Tensor& x) {
  Tensor y = kernel::unary(UnaryOp::exp, x);
  Tensor sy = y.detach();
  return record("exp", y, {&x}, [sy](const Tensor& dy) {
    return std::vector<Tensor>{kernel::binary(BinaryOp::mul, dy, sy)};
  });
}

// y = ln x:  dx = dy / x
Tensor log(const Tensor& x) {
  Tensor sx = x.detach();
  return record("log", kernel::unary(UnaryOp::log, x), {&x}, [sx](const Tensor& dy) {
    return std::vector<Tensor>{kernel::binary(BinaryOp::div, dy, sx)};
  });
}

// y = tanh x:  dx = dy (1 - y^2)
Tensor tanh(const Tensor& x) {
  Tensor y = kernel::unary(UnaryOp::tanh, x);
  Tensor sy = y.detach();
  return record("tanh", y, {&x}, [sy](const Tensor& dy) {
    Tensor one_minus_y2 = kernel::affine(kernel::binary(BinaryOp::mul, sy, sy), -1, 1);
    return std::vector<Tensor>{kernel::binary(BinaryOp::mul, dy, one_minus_y2)};
  });
}

// y = sqrt x:  dx = dy / (2 y)
Tensor sqrt(const Tensor& x) {
  Tensor y = kernel::unary(UnaryOp::sqrt, x);
  Tensor sy = y.detach();
  return record("sqrt", y, {&x}, [sy](const Tensor& dy) {
    return std::vector<Tensor>{kernel::binary(BinaryOp::div, dy, kernel::affine(sy, 2, 0))};
  });
}

// y = x^p:  dx = dy p x^(p-1)
Tensor pow(const Tensor& x, double p) {
  Tensor sx = x.detach();
  return record("pow", kernel::pow_scalar(x, p), {&x}, [sx, p](const Tensor& dy) {
    Tensor d = kernel::affine(kernel::pow_scalar(sx, p - 1), p, 0);
    return std::vector<Tensor>{kernel::binary(BinaryOp::mul, dy, d)};
  });
}

// y = c ? a : b:  da = dy where c, else 0;  db = dy where !c, else 0
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor sc = cond.detach();
  return record("where", kernel::where(cond, a, b), {&a, &b},
                [sc, shape_a = a.shape(), shape_b = b.shape()](const Tensor& dy) {
                  Tensor zero = Tensor::zeros({}, dy.dtype(), dy.device());
                  return std::vector<Tensor>{kernel::sum_to(kernel::where(sc, dy, zero), shape_a),
                                             kernel::sum_to(kernel::where(sc, zero, dy), shape_b)};
                });
}

Tensor gt(const Tensor& a, const Tensor& b) {
  return kernel::binary(BinaryOp::gt, a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return kernel::binary(BinaryOp::lt, a, b);
}

}  // namespace poslab
