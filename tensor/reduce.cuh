// reduce.cuh — the two reduction shapes the GPU kernels need (used by reduce.cu, layer_norm.cu,
// softmax.cu). Sums accumulate in double, as on the CPU, and in a fixed order: the results are
// the same from run to run (no atomics).
//
//   rows:     out[r] = reduce_{i < inner} map(x[r, i])       x contiguous (rows, inner)
//   columns:  out_k[c] = sum_{r < R} f_k(r, c)               k < kOut outputs per column
//
// Rows: one block per (row, chunk of the row); when rows are few and long (a sum of
// everything), the row is split into chunks whose partial results a second pass combines.
// Columns: blocks of 32 columns x 8 row lanes walk a chunk of rows each; coalesced along the
// columns; a second pass sums the chunks' partials.
#pragma once
#include <cmath>

#include "tensor/cuda_util.cuh"

namespace poslab::gpu {

// What a row reduction does with each element, and how partial results combine.
struct SumOp {  // sum x, in double
  using Acc = double;
  template <class T>
  __device__ static double map(T x) {
    return x;
  }
  __device__ static double combine(double a, double b) { return a + b; }
  __host__ __device__ static constexpr double identity() { return 0; }
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct SumSquaresOp {  // sum x^2, in double
  using Acc = double;
  template <class T>
  __device__ static double map(T x) {
    return double(x) * double(x);
  }
  __device__ static double combine(double a, double b) { return a + b; }
  __host__ __device__ static constexpr double identity() { return 0; }
  __device__ double operator()(double a, double b) const { return a + b; }
};
template <class T>
struct MaxOp {  // max x, in T
  using Acc = T;
  __device__ static T map(T x) { return x; }
  __device__ static T combine(T a, T b) { return b > a ? b : a; }
  __host__ __device__ static constexpr T identity() { return -INFINITY; }
  __device__ T operator()(T a, T b) const { return combine(a, b); }
};
// The second pass over partial results: they are already mapped.
template <class Op>
struct CombineOp {
  using Acc = typename Op::Acc;
  __device__ static Acc map(Acc x) { return x; }
  __device__ static Acc combine(Acc a, Acc b) { return Op::combine(a, b); }
  __host__ __device__ static constexpr Acc identity() { return Op::identity(); }
  __device__ Acc operator()(Acc a, Acc b) const { return Op::combine(a, b); }
};

// Block (r, c) reduces x[r, c*chunk .. min((c+1)*chunk, inner)) into out[r*chunks + c],
// times `scale` (1 except for a mean).
template <class Op, class In, class Out>
__global__ void reduce_rows_kernel(const In* x, int64_t inner, int64_t chunk, Out* out,
                                   double scale) {
  int64_t r = blockIdx.x, c = blockIdx.y;
  const In* row = x + r * inner;
  int64_t end = min(inner, (c + 1) * chunk);
  typename Op::Acc acc = Op::identity();
  for (int64_t i = c * chunk + threadIdx.x; i < end; i += blockDim.x)
    acc = Op::combine(acc, Op::map(row[i]));
  acc = block_reduce(acc, Op{}, Op::identity());
  if (threadIdx.x == 0) out[r * gridDim.y + c] = static_cast<Out>(acc * scale);
}

// out[r] = scale * reduce_i map(x[r, i]) for x contiguous (rows, inner); out has `rows` values.
template <class Op, class T, class Out>
void reduce_rows(const T* x, int64_t rows, int64_t inner, Out* out, double scale, const char* op) {
  constexpr int64_t kChunk = 16384;  // elements per block when a row is split
  int64_t chunks = rows >= 2 * sm_count() ? 1 : std::clamp<int64_t>(inner / kChunk, 1, 1024);
  if (chunks == 1) {
    reduce_rows_kernel<Op, T, Out>
        <<<dim3(rows, 1), kThreads, 0, stream()>>>(x, inner, inner, out, scale);
    check_launch(op);
    return;
  }
  using Acc = typename Op::Acc;
  Storage partial(rows * chunks * sizeof(Acc), Device::cuda);
  Acc* p = static_cast<Acc*>(partial.data());
  int64_t chunk = (inner + chunks - 1) / chunks;
  reduce_rows_kernel<Op, T, Acc>
      <<<dim3(rows, chunks), kThreads, 0, stream()>>>(x, inner, chunk, p, 1.0);
  reduce_rows_kernel<CombineOp<Op>, Acc, Out>
      <<<dim3(rows, 1), kThreads, 0, stream()>>>(p, chunks, chunks, out, scale);
  check_launch(op);
}

// ---- columns ----

constexpr int kColTile = 32;   // columns per block (one warp wide)
constexpr int kRowLanes = 8;   // row lanes per block
constexpr int kRowChunk = 64;  // rows per block

// Block (bx, by) sums f(r, c, acc) over rows [by*kRowChunk, ...) for its 32 columns into
// partial[by][k][c]. F::operator()(r, c, double* acc) adds its kOut values into acc.
template <int kOut, class F>
__global__ void column_partials_kernel(F f, int64_t R, int64_t K, double* partial) {
  __shared__ double tile[kOut][kRowLanes][kColTile];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t c = int64_t(blockIdx.x) * kColTile + tx;
  int64_t r0 = int64_t(blockIdx.y) * kRowChunk, r1 = min(R, r0 + kRowChunk);
  double acc[kOut] = {};
  if (c < K)
    for (int64_t r = r0 + ty; r < r1; r += kRowLanes) f(r, c, acc);
  for (int k = 0; k < kOut; ++k) tile[k][ty][tx] = acc[k];
  __syncthreads();
  if (ty == 0 && c < K)
    for (int k = 0; k < kOut; ++k) {
      double s = 0;
      for (int y = 0; y < kRowLanes; ++y) s += tile[k][y][tx];
      partial[(int64_t(blockIdx.y) * kOut + k) * K + c] = s;
    }
}

// The kOut output arrays, passed by value; with add, the sums are added into what they hold
// (a parameter's gradient buffer).
template <class T, int kOut>
struct Outputs {
  T* p[kOut];
  bool add = false;
};

// out[k][c] (+)= sum over chunks of partial[chunk][k][c]
template <class T, int kOut>
__global__ void column_finish_kernel(const double* partial, int64_t chunks, int64_t K,
                                     Outputs<T, kOut> out) {
  for (int64_t i = thread_index(); i < K * kOut; i += thread_count()) {
    int64_t k = i / K, c = i % K;
    double s = 0;
    for (int64_t b = 0; b < chunks; ++b) s += partial[(b * kOut + k) * K + c];
    out.p[k][c] = out.add ? out.p[k][c] + static_cast<T>(s) : static_cast<T>(s);
  }
}

// x (R, K) contiguous: acc[0] += x[r, c]
template <class T>
struct ColumnOf {
  const T* x;
  int64_t K;
  __device__ void operator()(int64_t r, int64_t c, double* acc) const { acc[0] += x[r * K + c]; }
};

// out[k][c] (+)= sum_{r < R} f_k(r, c) for the kOut device arrays out[k] of K values each.
template <class T, int kOut, class F>
void column_sums(const F& f, int64_t R, int64_t K, Outputs<T, kOut> out, const char* op) {
  int64_t chunks = std::max<int64_t>((R + kRowChunk - 1) / kRowChunk, 1);
  if (chunks > 65535)
    fail(op, ": the CUDA column sum handles at most ", 65535 * kRowChunk, " rows");
  Storage partial(chunks * kOut * std::max<int64_t>(K, 1) * sizeof(double), Device::cuda);
  double* p = static_cast<double*>(partial.data());
  dim3 grid((K + kColTile - 1) / kColTile, chunks), block(kColTile, kRowLanes);
  column_partials_kernel<kOut, F><<<grid, block, 0, stream()>>>(f, R, K, p);
  column_finish_kernel<T, kOut><<<grid_for(K * kOut), kThreads, 0, stream()>>>(p, chunks, K, out);
  check_launch(op);
}

}  // namespace poslab::gpu
