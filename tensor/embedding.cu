// embedding.cu — row gather and its scatter-add on the GPU (CPU: embedding.cpp).
//   forward:  out[n, :] = table[ids[n], :]
//   backward: dtable[v, :] = sum over n with ids[n] == v of dout[n, :]
// The backward needs no atomics: the host (which holds the ids) sorts the positions by id
// (a counting sort, O(N + V)), and one thread per (v, c) sums the rows of its id in
// increasing n: the same order as the CPU loop, hence the same float result, run after run.
#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"

namespace poslab::kernel::cuda {
namespace {

template <class T>
__global__ void gather_kernel(const T* table, const int32_t* ids, T* out, int64_t n, int64_t C) {
  for (int64_t i = gpu::thread_index(); i < n * C; i += gpu::thread_count())
    out[i] = table[int64_t(ids[i / C]) * C + i % C];
}

// csr[0..V]: where each id's positions start in csr[V+1 ..] (positions sorted by id, then n)
template <class T>
__global__ void scatter_add_kernel(const T* dout, const int32_t* csr, T* dtable, int64_t V,
                                   int64_t C) {
  const int32_t* order = csr + V + 1;
  for (int64_t i = gpu::thread_index(); i < V * C; i += gpu::thread_count()) {
    int64_t v = i / C, c = i % C;
    T acc = 0;
    for (int32_t k = csr[v]; k < csr[v + 1]; ++k) acc += dout[int64_t(order[k]) * C + c];
    dtable[i] = acc;
  }
}

}  // namespace

Tensor embedding(const Tensor& table, const Ids& ids) {
  int64_t C = table.size(1), n = static_cast<int64_t>(ids.data.size());
  Shape shape = ids.shape;
  shape.push_back(C);
  Tensor out = Tensor::empty(shape, table.dtype(), Device::cuda);
  if (n * C == 0) return out;
  Tensor tc = table.contiguous();
  gpu::DeviceArray<int32_t> d_ids = gpu::to_device(ids.data);
  dispatch(table.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gather_kernel<T><<<gpu::grid_for(n * C), gpu::kThreads, 0, gpu::stream()>>>(
        tc.data<T>(), d_ids.data(), out.data<T>(), n, C);
  });
  gpu::check_launch("embedding");
  return out;
}

Tensor embedding_backward(const Tensor& dout, const Ids& ids, int64_t V) {
  int64_t C = dout.size(-1), n = static_cast<int64_t>(ids.data.size());
  Tensor dt = Tensor::empty({V, C}, dout.dtype(), Device::cuda);
  if (V * C == 0) return dt;
  // counting sort of the positions by id: csr = [start of each id (V+1) | positions (n)]
  std::vector<int32_t> csr(V + 1 + n, 0);
  for (int32_t id : ids.data) ++csr[id + 1];
  for (int64_t v = 0; v < V; ++v) csr[v + 1] += csr[v];
  std::vector<int32_t> next(csr.begin(), csr.begin() + V);
  for (int64_t i = 0; i < n; ++i) csr[V + 1 + next[ids.data[i]]++] = static_cast<int32_t>(i);
  gpu::DeviceArray<int32_t> d_csr = gpu::to_device(csr);
  Tensor dc = dout.contiguous();
  dispatch(dout.dtype(), [&](auto zero) {
    using T = decltype(zero);
    scatter_add_kernel<T><<<gpu::grid_for(V * C), gpu::kThreads, 0, gpu::stream()>>>(
        dc.data<T>(), d_csr.data(), dt.data<T>(), V, C);
  });
  gpu::check_launch("embedding_backward");
  return dt;
}

void add_embedding(Backend& k) {
  k.embedding = embedding;
  k.embedding_backward = embedding_backward;
}

}  // namespace poslab::kernel::cuda
