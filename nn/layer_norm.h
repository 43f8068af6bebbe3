// layer_norm.h — y = (x - mean) / sqrt(var + 1e-5) * weight + bias over the last dim C,
// var biased (divided by C), as PyTorch computes it (docs/model.md). The fused op is in
// autograd/nn_ops.cpp (loops in tensor/layer_norm.cpp); its backward is derived in
// nn/gpt_reference.cpp (layernorm_backward).
#pragma once
#include "nn/module.h"

namespace poslab {

struct LayerNorm {
  Tensor weight, bias;
  LayerNorm() = default;
  LayerNorm(int64_t C, DType dtype)
      : weight(make_param_filled({C}, 1.0, dtype)), bias(make_param_filled({C}, 0.0, dtype)) {}
  Tensor forward(const Tensor& x) const { return layer_norm(x, weight, bias, 1e-5); }
  void to(Device d) { weight = parameter_to(weight, d), bias = parameter_to(bias, d); }
  void collect(std::vector<NamedParam>& out, const std::string& prefix) const {
    out.push_back({prefix + ".weight", weight, false});
    out.push_back({prefix + ".bias", bias, false});
  }
};

}  // namespace poslab
