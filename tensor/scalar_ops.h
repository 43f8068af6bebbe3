// scalar_ops.h — the scalar function of each elementwise op: one definition that the CPU loops
// (elementwise.cpp) and the CUDA kernels (elementwise.cu) both call, so that the two devices
// compute the same thing by construction.
#pragma once
#include <cmath>

#include "tensor/check.h"
#include "tensor/ops.h"

namespace poslab::kernel {

template <class T>
POSLAB_HOST_DEVICE inline T apply(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::add:
      return x + y;
    case BinaryOp::sub:
      return x - y;
    case BinaryOp::mul:
      return x * y;
    case BinaryOp::div:
      return x / y;
    case BinaryOp::maximum:
      return x > y ? x : y;
    case BinaryOp::gt:
      return x > y ? T(1) : T(0);
    case BinaryOp::lt:
      return x < y ? T(1) : T(0);
    case BinaryOp::eq:
      return x == y ? T(1) : T(0);
  }
  return 0;
}

template <class T>
POSLAB_HOST_DEVICE inline T apply(UnaryOp op, T x) {
  switch (op) {
    case UnaryOp::neg:
      return -x;
    case UnaryOp::exp:
      return std::exp(x);
    case UnaryOp::log:
      return std::log(x);
    case UnaryOp::tanh:
      return std::tanh(x);
    case UnaryOp::sqrt:
      return std::sqrt(x);
    case UnaryOp::abs:
      return std::abs(x);
  }
  return 0;
}

}  // namespace poslab::kernel
