// linear.h — y = x W^T + b, PyTorch layout: W (out,in), b (out). x: (...,in) -> (...,out).
// Forward and backward are the fused `linear` op (autograd/matmul.cpp): one GEMM each for
// y, dx and dW, with W^T read by BLAS as a transposed operand (no copy).
#pragma once
#include "nn/module.h"

namespace poslab {

struct Linear {
  Tensor weight, bias;
  Linear() = default;
  Linear(int64_t in, int64_t out, Generator& gen, double stddev, DType dtype)
      : weight(make_param({out, in}, gen, stddev, dtype)), bias(make_param({out}, gen, 0, dtype)) {}
  Tensor forward(const Tensor& x) const { return linear(x, weight, bias); }
  void to(Device d) { weight = parameter_to(weight, d), bias = parameter_to(bias, d); }
  void collect(std::vector<NamedParam>& out, const std::string& prefix) const {
    out.push_back({prefix + ".weight", weight, true});
    out.push_back({prefix + ".bias", bias, false});
  }
};

}  // namespace poslab
