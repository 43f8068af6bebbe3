// mlp.h — the feed-forward block: c_fc C->4C, GELU (tanh form), c_proj 4C->C.
//   x: (B,T,C) -> (B,T,C)
#pragma once
#include "nn/linear.h"

namespace poslab {

struct MLP {
  Linear c_fc, c_proj;
  MLP() = default;
  MLP(int64_t C, Generator& gen, double proj_std, DType dtype)
      : c_fc(C, 4 * C, gen, 0.02, dtype), c_proj(4 * C, C, gen, proj_std, dtype) {}
  Tensor forward(const Tensor& x) const { return c_proj.forward(gelu(c_fc.forward(x))); }
  void to(Device d) { c_fc.to(d), c_proj.to(d); }
  void collect(std::vector<NamedParam>& out, const std::string& prefix) const {
    c_fc.collect(out, prefix + ".c_fc");
    c_proj.collect(out, prefix + ".c_proj");
  }
};

}  // namespace poslab
