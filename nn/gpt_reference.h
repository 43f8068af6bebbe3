// gpt_reference.h — one training step of the whole model as plain loops in double: the loss and
// the gradient of every parameter, computed without tensors, threads or autograd
// (gpt_reference.cpp, the file to read first). tests/nn/test_gpt_reference.cpp checks that it
// equals GPT::loss and its autograd gradients; `make reference PE=rope` prints both.
#pragma once
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

struct ReferenceGrad {
  std::string name;           // the parameter's checkpoint name (GPT::parameters())
  std::vector<double> value;  // dL/dparameter, row-major, the parameter's shape
};

struct ReferenceStep {
  double loss = 0;                   // mean cross-entropy (nats)
  std::vector<ReferenceGrad> grads;  // one per GPT::parameters(), in that order
  // per block: its attention weights p_ij (B,H,T,T), as GPT::attention_maps gives them
  std::vector<std::vector<double>> attention;
};

// The forward and backward of `model` (its config and weights; any dtype and device) on
// ids, targets (B,T), as training runs it: positions 0..T-1, no RoPE scaling, no
// intervention. A target of -1 ignores its row, as cross_entropy does.
ReferenceStep gpt_reference_step(const GPT& model, const Ids& ids, const Ids& targets);

}  // namespace poslab
