// elementwise.cu — broadcasting elementwise kernels on the GPU (CPU: elementwise.cpp).
//
// Scalar math: out[i] = f(a[ia], b[ib]) where ia, ib are i's multi-index with broadcast dims
// pinned to 0 (stride 0). One thread per output element in a grid-stride loop; out is
// contiguous; inputs are read through a Layout (cuda_util.cuh), so any strides and any
// broadcast work, and a plain flat loop is what it compiles to when both are contiguous.
// The op is a kernel argument (a uniform branch): these kernels are bound by memory, not by
// the switch, and one kernel per dtype keeps the build small.
#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"
#include "tensor/scalar_ops.h"
#include "tensor/strided.h"

namespace poslab::kernel::cuda {
namespace {

// Unary maps: UnaryOp's cases (scalar_ops.h), then pow (x^p) and affine (x*p + q).
enum class Map { neg, exp, log, tanh, sqrt, abs, pow, affine };

template <class T>
__device__ __forceinline__ T apply_map(Map op, T x, T p, T q) {
  if (op == Map::pow) return pow(x, p);
  if (op == Map::affine) return x * p + q;
  return kernel::apply(static_cast<UnaryOp>(op), x);
}

// out[i] = a[ia] op b[ib]
template <class T>
__global__ void binary_kernel(BinaryOp op, T* out, const T* a, gpu::Layout la, const T* b,
                              gpu::Layout lb, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    out[i] = kernel::apply(op, a[la.at(i)], b[lb.at(i)]);
}

// out[i] = f(x[ix])   (out may be x itself when x is contiguous: each element read, then written)
template <class T>
__global__ void map_kernel(Map op, T p, T q, T* out, const T* x, gpu::Layout lx, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    out[i] = apply_map(op, x[lx.at(i)], p, q);
}

// out[i] = c[ic] != 0 ? a[ia] : b[ib]
template <class T>
__global__ void where_kernel(T* out, const T* c, gpu::Layout lc, const T* a, gpu::Layout la,
                             const T* b, gpu::Layout lb, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    out[i] = c[lc.at(i)] != T(0) ? a[la.at(i)] : b[lb.at(i)];
}

// dst[i] += alpha * src[is]   (dst contiguous)
template <class T>
__global__ void axpy_kernel(T* dst, T alpha, const T* src, gpu::Layout ls, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    dst[i] += alpha * src[ls.at(i)];
}

// dst[id] += alpha * src[is]   (dst a strided view: element i of the shape is at ld.at(i), a
// different place for every i, so no two threads write one element)
template <class T>
__global__ void axpy_strided_kernel(T* dst, gpu::Layout ld, T alpha, const T* src, gpu::Layout ls,
                                    int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    dst[ld.at(i)] += alpha * src[ls.at(i)];
}

// One launch checks a whole list of tensors (the ~50 weights of a model after each update):
// block row y walks tensor y of the table, and bad[y] = 1 if any of its elements is NaN or
// +-inf (every writer writes the same 1: a benign race). One read-back for the whole list.
template <class T>
struct FiniteEntry {
  const T* x;
  gpu::Layout l;
  int64_t n;
};
template <class T>
__global__ void finite_kernel(const FiniteEntry<T>* table, int* bad) {
  const FiniteEntry<T>& e = table[blockIdx.y];
  for (int64_t i = gpu::thread_index(); i < e.n; i += gpu::thread_count())
    if (!isfinite(e.x[e.l.at(i)])) bad[blockIdx.y] = 1;
}

// x = 0 for every tensor of a table (block row y zeroes tensor y): zero_grad in one launch
// instead of one memset per parameter.
template <class T>
__global__ void zero_kernel(const gpu::Span<T>* table) {
  const gpu::Span<T>& e = table[blockIdx.y];
  for (int64_t i = gpu::thread_index(); i < e.n; i += gpu::thread_count()) e.x[i] = T(0);
}

// out (contiguous) = f(x) for any strides of x; out may be x itself.
void map_into(const char* name, Map op, const Tensor& out, const Tensor& x, double p, double q) {
  int64_t n = x.numel();
  if (n == 0) return;
  auto l = gpu::make_layouts(name, x.shape(), {&x});
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    map_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        op, T(p), T(q), out.data<T>(), gpu::storage_ptr<T>(x), l[0], n);
  });
  gpu::check_launch(name);
}

Tensor map(const char* name, Map op, const Tensor& x, double p, double q) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  map_into(name, op, out, x, p, q);
  return out;
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Shape shape = broadcast_shapes("binary", a.shape(), b.shape());
  Tensor out = Tensor::empty(shape, a.dtype(), Device::cuda);
  int64_t n = out.numel();
  if (n == 0) return out;
  auto l = gpu::make_layouts("binary", shape, {&a, &b});
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    binary_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        op, out.data<T>(), gpu::storage_ptr<T>(a), l[0], gpu::storage_ptr<T>(b), l[1], n);
  });
  gpu::check_launch("binary");
  return out;
}

Tensor unary(UnaryOp op, const Tensor& x) {
  return map("unary", static_cast<Map>(op), x, 0, 0);  // Map lists UnaryOp's cases first
}
Tensor pow_scalar(const Tensor& x, double p) {
  return map("pow", Map::pow, x, p, 0);
}
Tensor affine(const Tensor& x, double scale, double shift) {
  return map("affine", Map::affine, x, scale, shift);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Shape shape =
      broadcast_shapes("where", broadcast_shapes("where", cond.shape(), a.shape()), b.shape());
  Tensor out = Tensor::empty(shape, a.dtype(), Device::cuda);
  int64_t n = out.numel();
  if (n == 0) return out;
  auto l = gpu::make_layouts("where", shape, {&cond, &a, &b});
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    where_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        out.data<T>(), gpu::storage_ptr<T>(cond), l[0], gpu::storage_ptr<T>(a), l[1],
        gpu::storage_ptr<T>(b), l[2], n);
  });
  gpu::check_launch("where");
  return out;
}

// A strided destination is a slice's gradient added into its part of the input's buffer
// (autograd/shape.cpp: the q, k, v blocks of one projection).
void add_(const Tensor& dst, const Tensor& src, double alpha) {
  int64_t n = dst.numel();
  if (n == 0) return;
  const bool packed = dst.is_contiguous();
  auto l = gpu::make_layouts("add_", dst.shape(), {&dst, &src});
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (packed)
      axpy_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
          dst.data<T>(), T(alpha), gpu::storage_ptr<T>(src), l[1], n);
    else
      axpy_strided_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
          static_cast<T*>(dst.storage()->data()), l[0], T(alpha), gpu::storage_ptr<T>(src), l[1],
          n);
  });
  gpu::check_launch("add_");
}

void scale_(const Tensor& dst, double alpha) {
  map_into("scale_", Map::affine, dst, dst, alpha, 0);
}

int64_t first_non_finite(const std::vector<Tensor>& xs) {
  if (xs.empty()) return -1;
  std::vector<int> host(xs.size(), 0);
  gpu::DeviceArray<int> bad = gpu::to_device(host);
  dispatch(xs[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<FiniteEntry<T>> table;
    for (const Tensor& x : xs) {
      table.push_back({gpu::storage_ptr<T>(x),
                       gpu::make_layouts("first_non_finite", x.shape(), {&x})[0], x.numel()});
    }
    auto d_table = gpu::to_device(table);
    finite_kernel<T>
        <<<gpu::table_grid(xs), gpu::kThreads, 0, gpu::stream()>>>(d_table.data(), bad.data());
  });
  gpu::check_launch("first_non_finite");
  gpu::download(host.data(), bad.data(), host.size() * sizeof(int));
  for (size_t i = 0; i < host.size(); ++i)
    if (host[i]) return static_cast<int64_t>(i);
  return -1;
}

bool all_finite(const Tensor& x) {
  return first_non_finite({x}) < 0;
}

void zero_(const std::vector<Tensor>& xs) {
  if (xs.empty()) return;
  dispatch(xs[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto table = gpu::span_table<T>(xs);  // data<T>() checks each dtype
    zero_kernel<T><<<gpu::table_grid(xs), gpu::kThreads, 0, gpu::stream()>>>(table.data());
  });
  gpu::check_launch("zero_");
}

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

}  // namespace poslab::kernel::cuda
