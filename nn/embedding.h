// embedding.h — the token table wte (V,C): x[b,t] = wte[ids[b,t]]. Its backward is a
// scatter-add into the rows that were looked up (autograd/nn_ops.cpp). GPT ties the output
// head to it (logits = h wte^T), so wte's gradient is the sum of both uses.
#pragma once
#include "nn/module.h"

namespace poslab {

struct Embedding {
  Tensor weight;  // (V,C)
  Embedding() = default;
  Embedding(int64_t V, int64_t C, Generator& gen, double stddev, DType dtype)
      : weight(make_param({V, C}, gen, stddev, dtype)) {}
  Tensor forward(const Ids& ids) const { return embedding(weight, ids); }
  void to(Device d) { weight = parameter_to(weight, d); }
};

}  // namespace poslab
