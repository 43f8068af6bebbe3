// module.h — what every nn module shares: named parameters (nanoGPT names, docs/formats.md).
#pragma once
#include <string>
#include <vector>

#include "autograd/ops.h"

namespace poslab {

struct NamedParam {
  std::string name;  // e.g. "transformer.h.0.attn.c_attn.weight"
  Tensor tensor;     // a leaf with requires_grad
  bool decay;        // AdamW weight decay applies (matrices of Linear layers only)
};

// Every module has `void to(Device)`, which moves its parameters (parameter_to, autograd/node.h).

// A leaf parameter initialised N(0, std^2) from gen (std = 0) means zeros), or filled.
inline Tensor make_param(const Shape& shape, Generator& gen, double stddev, DType dtype) {
  Tensor t = stddev > 0 ? Tensor::randn(shape, gen, stddev, dtype) : Tensor::zeros(shape, dtype);
  t.set_requires_grad(true);
  return t;
}
inline Tensor make_param_filled(const Shape& shape, double value, DType dtype) {
  Tensor t = Tensor::full(shape, value, dtype);
  t.set_requires_grad(true);
  return t;
}

}  // namespace poslab
