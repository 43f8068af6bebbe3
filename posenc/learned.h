// learned.h — a learned absolute position table (GPT-2's wpe).
//
//   x[b, t, :] += wpe[pos0 + t, :]           wpe: (max_len, C), init N(0, s^2)
//
// s is wte's init std: 0.02 (embedding gpt2) or C^-0.5 (embedding scaled, nn/embedding.h).
//
// The lookup is an embedding of the position ids pos0..pos0+T-1, so its gradient is the
// embedding's scatter-add per position: dwpe[p] = sum_b dx[b, p - pos0]. Rows never reached in
// training keep their initial random values — which is what a window longer than T0 meets.
#pragma once
#include "posenc/posenc.h"

namespace poslab {

class LearnedPE final : public PositionalEncoding {
 public:
  LearnedPE(int64_t max_len, int64_t d_model, Generator& gen, DType dtype = DType::f32,
            double init_std = 0.02);
  PeKind kind() const override { return PeKind::learned; }
  // x: (B,T,C) -> x + wpe[P .. P+T), P = ctx.offset + ctx.q_pos0
  Tensor add_to_embeddings(const Tensor& x, const PositionContext& ctx) const override;
  std::vector<std::pair<std::string, Tensor>> parameters() const override {
    return {{"transformer.wpe.weight", wpe_}};
  }
  void to(Device device) override { wpe_ = parameter_to(wpe_, device); }

 private:
  Tensor wpe_;  // (max_len, C)
};

}  // namespace poslab
