// elementwise.cpp — broadcasting elementwise kernels.
//
// Scalar math: out[i] = f(a[ia], b[ib]) where ia, ib are i's multi-index with broadcast
// dims pinned to 0 (stride 0). The fast path (both inputs contiguous, same shape) is a flat
// loop; the general path walks rows of the output (strided.h).
#include <omp.h>

#include <cmath>

#include "tensor/backend.h"
#include "tensor/scalar_ops.h"
#include "tensor/strided.h"

namespace poslab::kernel {
namespace {

const char* name_of(BinaryOp op) {
  const char* names[] = {"add", "sub", "mul", "div", "maximum", "gt", "lt", "eq"};
  return names[static_cast<int>(op)];
}

// out (contiguous, shape) = f(a, b) with a, b broadcast to shape.
template <class T, class F>
void map2(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const Shape& shape = out.shape();
  int64_t n = out.numel();
  if (n == 0) return;
  T* o = out.data<T>();
  const T* pa = static_cast<const T*>(a.storage()->data());
  const T* pb = static_cast<const T*>(b.storage()->data());
  if (a.is_contiguous() && b.is_contiguous() && a.shape() == shape && b.shape() == shape) {
    pa += a.offset();
    pb += b.offset();
#pragma omp parallel for simd if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
    return;
  }
  Shape sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  int64_t inner = shape.empty() ? 1 : shape.back(), rows = n / inner;
  int64_t ia = shape.empty() ? 0 : sa.back(), ib = shape.empty() ? 0 : sb.back();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const T* ra = pa + row_offset(r, shape, sa, a.offset());
    const T* rb = pb + row_offset(r, shape, sb, b.offset());
    T* ro = o + r * inner;
    for (int64_t i = 0; i < inner; ++i) ro[i] = f(ra[i * ia], rb[i * ib]);
  }
}

// out (contiguous) = f(x) for any strides of x.
template <class T, class F>
void map1(const Tensor& out, const Tensor& x, F f) {
  map2<T>(out, x, x, [&](T u, T) { return f(u); });
}

}  // namespace

// ---- the wrappers: checks, then the kernel of the inputs' device (backend.h) ----

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = name_of(op);
  check_same(name, a, b);
  broadcast_shapes(name, a.shape(), b.shape());
  return backend(a.device()).binary(op, a, b);
}

Tensor unary(UnaryOp op, const Tensor& x) {
  check_defined("unary", x, "x");
  return backend(x.device()).unary(op, x);
}

Tensor pow_scalar(const Tensor& x, double p) {
  check_defined("pow", x, "x");
  return backend(x.device()).pow_scalar(x, p);
}

Tensor affine(const Tensor& x, double scale, double shift) {
  check_defined("affine", x, "x");
  return backend(x.device()).affine(x, scale, shift);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same("where", a, b);
  check_same("where", cond, a);
  broadcast_shapes("where", broadcast_shapes("where", cond.shape(), a.shape()), b.shape());
  return backend(a.device()).where(cond, a, b);
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  check_same("add_", dst, src);
  if (broadcast_shapes("add_", dst.shape(), src.shape()) != dst.shape())
    fail("add_: cannot add shape ", shape_str(src.shape()), " into ", shape_str(dst.shape()));
  for (int64_t d = 0; d < dst.dim(); ++d)
    if (dst.strides()[d] == 0 && dst.shape()[d] > 1)
      fail("add_: the destination ", shape_str(dst.shape()), " with strides ",
           shape_str(dst.strides()), " repeats elements (an expanded view): no in-place add");
  backend(dst.device()).add_(dst, src, alpha);
}

void scale_(const Tensor& dst, double alpha) {
  if (!dst.is_contiguous()) fail("scale_: expected a contiguous tensor");
  backend(dst.device()).scale_(dst, alpha);
}

bool all_finite(const Tensor& x) {
  return backend(x.device()).all_finite(x);
}

// A list op runs as one call of its device's kernel when the list is of one device and one
// dtype (a model's weights and gradients are), and contiguous where the GPU kernel walks raw
// spans; on the GPU that is one launch (and one read-back) for the whole list. Any other list
// is handled one tensor at a time.
static bool uniform(const std::vector<Tensor>& xs, bool need_contiguous) {
  for (const Tensor& x : xs)
    if (x.device() != xs[0].device() || x.dtype() != xs[0].dtype() ||
        (need_contiguous && !x.is_contiguous()))
      return false;
  return !xs.empty();
}

int64_t first_non_finite(const std::vector<Tensor>& xs) {
  if (uniform(xs, false)) return backend(xs[0].device()).first_non_finite(xs);
  for (size_t i = 0; i < xs.size(); ++i)
    if (!all_finite(xs[i])) return static_cast<int64_t>(i);
  return -1;
}

void zero_(const std::vector<Tensor>& xs) {
  if (uniform(xs, true)) return backend(xs[0].device()).zero_(xs);
  for (const Tensor& x : xs) x.fill_(0);
}

// ---- the CPU kernels ----

namespace cpu {
namespace {

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Shape shape = broadcast_shapes(name_of(op), a.shape(), b.shape());
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    switch (op) {  // one instantiation per op keeps the inner loop branch-free
      case BinaryOp::add:
        return map2<T>(out, a, b, [](T x, T y) { return x + y; });
      case BinaryOp::sub:
        return map2<T>(out, a, b, [](T x, T y) { return x - y; });
      case BinaryOp::mul:
        return map2<T>(out, a, b, [](T x, T y) { return x * y; });
      case BinaryOp::div:
        return map2<T>(out, a, b, [](T x, T y) { return x / y; });
      default:
        return map2<T>(out, a, b, [op](T x, T y) { return apply(op, x, y); });
    }
  });
  return out;
}

Tensor unary(UnaryOp op, const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    map1<T>(out, x, [op](T v) { return apply(op, v); });
  });
  return out;
}

Tensor pow_scalar(const Tensor& x, double p) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T e = static_cast<T>(p);
    map1<T>(out, x, [e](T v) { return std::pow(v, e); });
  });
  return out;
}

Tensor affine(const Tensor& x, double scale, double shift) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T s = static_cast<T>(scale), t = static_cast<T>(shift);
    map1<T>(out, x, [s, t](T v) { return v * s + t; });
  });
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Shape shape =
      broadcast_shapes("where", broadcast_shapes("where", cond.shape(), a.shape()), b.shape());
  // where(c, a, b) = b + c' * (a - b) with c' = (c != 0) would lose precision; pick instead.
  Tensor c = cond.expand(shape).contiguous(), ae = a.expand(shape).contiguous(),
         be = b.expand(shape).contiguous();
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *pc = c.data<T>(), *pa = ae.data<T>(), *pb = be.data<T>();
    T* o = out.data<T>();
    int64_t n = out.numel();
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) o[i] = pc[i] != T(0) ? pa[i] : pb[i];
  });
  return out;
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T al = static_cast<T>(alpha);
    if (dst.is_contiguous()) return map2<T>(dst, dst, src, [al](T x, T y) { return x + al * y; });
    // A view (a slice of a gradient buffer, autograd's slice backward): walk its rows. The
    // view's elements are distinct (a slice never overlaps itself), so rows can be threads.
    const Shape& shape = dst.shape();
    int64_t n = dst.numel();
    if (n == 0) return;
    Shape sd = dst.strides(), ss = broadcast_strides(src, shape);
    int64_t inner = shape.empty() ? 1 : shape.back(), rows = n / inner;
    int64_t id = shape.empty() ? 0 : sd.back(), is = shape.empty() ? 0 : ss.back();
    T* pd = static_cast<T*>(dst.storage()->data());
    const T* ps = static_cast<const T*>(src.storage()->data());
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
      T* rd = pd + row_offset(r, shape, sd, dst.offset());
      const T* rs = ps + row_offset(r, shape, ss, src.offset());
      if (id == 1 && is == 1) {
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) rd[i] += al * rs[i];
      } else {
        for (int64_t i = 0; i < inner; ++i) rd[i * id] += al * rs[i * is];
      }
    }
  });
}

void scale_(const Tensor& dst, double alpha) {
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T al = static_cast<T>(alpha);
    map1<T>(dst, dst, [al](T x) { return x * al; });
  });
}

bool all_finite(const Tensor& x) {
  Tensor c = x.contiguous();
  bool ok = true;
  dispatch(c.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = c.data<T>();
    int64_t n = c.numel();
#pragma omp parallel for reduction(&& : ok) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) ok = ok && std::isfinite(p[i]);
  });
  return ok;
}

int64_t first_non_finite(const std::vector<Tensor>& xs) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (!all_finite(xs[i])) return static_cast<int64_t>(i);
  return -1;
}

void zero_(const std::vector<Tensor>& xs) {
  for (const Tensor& x : xs) x.fill_(0);
}

}  // namespace

void add_elementwise(Backend& k) {
  k.binary = binary;
  k.unary = unary;
  k.pow_scalar = pow_scalar;
  k.affine = affine;
  k.where = where;
  k.add_ = add_;
  k.scale_ = scale_;
  k.all_finite = all_finite;
  k.first_non_finite = first_non_finite;
  k.zero_ = zero_;
}

}  // namespace cpu
}  // namespace poslab::kernel
