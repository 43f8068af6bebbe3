// embedding.cpp — row gather and its scatter-add.
//   forward:  out[n, :] = table[ids[n], :]
//   backward: dtable[v, :] = sum over n with ids[n] == v of dout[n, :]
// The scatter-add is parallel over columns (threads own disjoint column ranges), so repeated
// ids never race.
#include <omp.h>

#include <algorithm>

#include "tensor/backend.h"
#include "tensor/strided.h"

namespace poslab::kernel {

static void check_ids(const char* op, const Ids& ids, int64_t V) {
  if (static_cast<int64_t>(ids.data.size()) != numel_of(ids.shape))
    fail(op, ": ids hold ", ids.data.size(), " values but claim shape ", shape_str(ids.shape));
  for (size_t i = 0; i < ids.data.size(); ++i)
    if (ids.data[i] < 0 || ids.data[i] >= V)
      fail(op, ": index ", ids.data[i], " at position ", i, " is out of range for a table of ", V,
           " rows");
}

Tensor embedding(const Tensor& table, const Ids& ids) {
  check_defined("embedding", table, "table");
  if (table.dim() != 2)
    fail("embedding: expected a table (V,C), but got ", shape_str(table.shape()));
  check_ids("embedding", ids, table.size(0));
  return backend(table.device()).embedding(table, ids);
}

Tensor embedding_backward(const Tensor& dout, const Ids& ids, int64_t V) {
  check_ids("embedding_backward", ids, V);
  return backend(dout.device()).embedding_backward(dout, ids, V);
}

namespace cpu {
namespace {

Tensor embedding(const Tensor& table, const Ids& ids) {
  int64_t C = table.size(1);
  Shape shape = ids.shape;
  shape.push_back(C);
  Tensor out = Tensor::empty(shape, table.dtype());
  Tensor tc = table.contiguous();
  int64_t n = static_cast<int64_t>(ids.data.size());
  dispatch(table.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pt = tc.data<T>();
    T* po = out.data<T>();
#pragma omp parallel for if (n * C > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
      std::copy(pt + ids.data[i] * C, pt + (ids.data[i] + 1) * C, po + i * C);
  });
  return out;
}

Tensor embedding_backward(const Tensor& dout, const Ids& ids, int64_t V) {
  int64_t C = dout.size(-1), n = static_cast<int64_t>(ids.data.size());
  Tensor dc = dout.contiguous();
  Tensor dt = Tensor::zeros({V, C}, dout.dtype());
  dispatch(dout.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pd = dc.data<T>();
    T* pt = dt.data<T>();
#pragma omp parallel
    {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t c0 = C * t / nt, c1 = C * (t + 1) / nt;
      for (int64_t i = 0; i < n; ++i) {
        T* row = pt + ids.data[i] * C;
        const T* g = pd + i * C;
        for (int64_t c = c0; c < c1; ++c) row[c] += g[c];
      }
    }
  });
  return dt;
}

}  // namespace

void add_embedding(Backend& k) {
  k.embedding = embedding;
  k.embedding_backward = embedding_backward;
}

}  // namespace cpu
}  // namespace poslab::kernel
