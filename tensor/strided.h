// strided.h — walking a strided view in row-major order without per-element division.
//
// A view (shape, strides, offset) is split into rows along its last dim; for each row we
// compute the starting element offset once (a division per dim), then step by the last
// stride. OpenMP splits the rows across threads when there is enough work.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace poslab {

// Offset of the first element of row `row` (rows = numel / shape.back()).
inline int64_t row_offset(int64_t row, const Shape& shape, const Shape& strides, int64_t offset) {
  int64_t off = offset;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    int64_t i = row % shape[d];
    row /= shape[d];
    off += i * strides[d];
  }
  return off;
}

// Strides of `t` broadcast to `shape` (size-1 or missing leading dims get stride 0).
Shape broadcast_strides(const Tensor& t, const Shape& shape);

// The shape two shapes broadcast to, or an error naming the op and both shapes.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// Reductions (reduce.cpp; reduce.cu uses them too): which dims of x `axes` reduce ({} = all),
// the result's shape, and x as a contiguous (outer, inner) with the reduced dims last.
namespace kernel {
// How BLAS sees the last two dims (rows, cols) of a view (matmul.cpp; matmul.cu too): a view
// with strides (ld, 1) is a row-major matrix (NoTrans), one with strides (1, ld) its transpose
// (Trans). False when neither holds (the caller makes it contiguous).
struct Operand {
  bool trans = false;
  int64_t ld = 0;
};
bool blas_layout(const Tensor& t, Operand* op);

std::vector<bool> reduced_mask(const char* op, const Tensor& x, const std::vector<int64_t>& axes);
Shape out_shape(const Tensor& x, const std::vector<bool>& red, bool keepdim);
Tensor reduced_last(const Tensor& x, const std::vector<bool>& red, int64_t* outer, int64_t* inner);
}  // namespace kernel

// Work above this many elements is split across OpenMP threads.
constexpr int64_t kParallelGrain = 1 << 14;

}  // namespace poslab
