// optimizer.cu — AdamW and gradient clipping on the GPU, each one launch over every parameter
// (CPU and the formulas: optimizer.h, optimizer.cpp). The arithmetic is the CPU's, in double:
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr ((m / bc1) / (sqrt(v / bc2) + eps) + wd p)      bc = 1 - b^t;  wd only on decayed
// A launch walks a table of tensors (pointers and sizes, uploaded once per call): block row y
// serves tensor y, its blocks striding over the elements. A model has some 50 parameter
// tensors; one launch instead of 50 (or 100 with the clipping) keeps the GPU busy.
#include <cmath>

#include "tensor/reduce.cuh"
#include "train/optimizer_kernels.h"

namespace poslab::kernel::cuda {
namespace {

template <class T>
struct AdamWEntry {
  T *p, *m, *v;
  const T* g;
  int64_t n;
  double wd;
};

template <class T>
__global__ void adamw_kernel(const AdamWEntry<T>* table, AdamWArgs a) {
  AdamWEntry<T> e = table[blockIdx.y];
  for (int64_t i = gpu::thread_index(); i < e.n; i += gpu::thread_count()) {
    double gi = e.g[i];
    double mi = a.beta1 * e.m[i] + (1 - a.beta1) * gi;
    double vi = a.beta2 * e.v[i] + (1 - a.beta2) * gi * gi;
    e.m[i] = static_cast<T>(mi);
    e.v[i] = static_cast<T>(vi);
    double update = (mi / a.bc1) / (sqrt(vi / a.bc2) + a.eps) + e.wd * e.p[i];
    e.p[i] = static_cast<T>(e.p[i] - a.lr * update);
  }
}

// partial[y * gridDim.x + x] = sum of squares of the elements block (x, y) visits
template <class T>
__global__ void sum_squares_kernel(const gpu::Span<T>* table, double* partial) {
  gpu::Span<T> e = table[blockIdx.y];
  double acc = 0;
  for (int64_t i = gpu::thread_index(); i < e.n; i += gpu::thread_count())
    acc += double(e.x[i]) * double(e.x[i]);
  acc = gpu::block_reduce(acc, gpu::Plus{}, 0.0);
  if (threadIdx.x == 0) partial[blockIdx.y * gridDim.x + blockIdx.x] = acc;
}

template <class T>
__global__ void scale_kernel(const gpu::Span<T>* table, T factor) {
  gpu::Span<T> e = table[blockIdx.y];
  for (int64_t i = gpu::thread_index(); i < e.n; i += gpu::thread_count()) e.x[i] *= factor;
}

}  // namespace

void adamw_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& m, const std::vector<Tensor>& v,
                  const std::vector<double>& decay, const AdamWArgs& a) {
  if (params.empty()) return;
  dispatch(params[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<AdamWEntry<T>> table;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!grads[i].is_contiguous() || !params[i].is_contiguous())
        fail("adamw: expected contiguous parameters and gradients on cuda");
      table.push_back({params[i].data<T>(), m[i].data<T>(), v[i].data<T>(), grads[i].data<T>(),
                       params[i].numel(), decay[i]});
    }
    auto d_table = gpu::to_device(table);
    dim3 grid = gpu::table_grid(params);
    adamw_kernel<T><<<grid, gpu::kThreads, 0, gpu::stream()>>>(d_table.data(), a);
  });
  gpu::check_launch("adamw");
}

double clip_grad_norm(const std::vector<Tensor>& grads, double max_norm) {
  if (grads.empty()) return 0;
  double norm = 0;
  dispatch(grads[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (const Tensor& g : grads)
      if (!g.is_contiguous()) fail("clip_grad_norm: expected contiguous gradients on cuda");
    auto table = gpu::span_table<T>(grads);
    dim3 grid = gpu::table_grid(grads);
    Storage partial(grid.x * grid.y * sizeof(double), Device::cuda),
        total(sizeof(double), Device::cuda);
    sum_squares_kernel<T><<<grid, gpu::kThreads, 0, gpu::stream()>>>(
        table.data(), static_cast<double*>(partial.data()));
    gpu::check_launch("clip_grad_norm");
    gpu::reduce_rows<gpu::SumOp>(static_cast<const double*>(partial.data()), 1,
                                 int64_t(grid.x) * grid.y, static_cast<double*>(total.data()), 1.0,
                                 "clip_grad_norm");
    double sq = 0;
    gpu::download(&sq, total.data(), sizeof sq);  // the one read-back of the step's gradients
    norm = std::sqrt(sq);
    if (std::isfinite(norm) && max_norm > 0 && norm > max_norm) {
      scale_kernel<T><<<grid, gpu::kThreads, 0, gpu::stream()>>>(table.data(),
                                                                 static_cast<T>(max_norm / norm));
      gpu::check_launch("clip_grad_norm");
    }
  });
  return norm;
}

}  // namespace poslab::kernel::cuda
