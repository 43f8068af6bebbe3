// block.h — one pre-LayerNorm transformer block (docs/model.md):
//   x = x + attn(ln_1(x));   x = x + mlp(ln_2(x))          x: (B,T,C)
#pragma once
#include "nn/attention.h"
#include "nn/layer_norm.h"
#include "nn/mlp.h"

namespace poslab {

struct Block {
  LayerNorm ln_1, ln_2;
  CausalSelfAttention attn;
  MLP mlp;

  Block() = default;
  Block(int64_t C, int64_t H, bool causal, Generator& gen, double proj_std, DType dtype)
      : ln_1(C, dtype),
        ln_2(C, dtype),
        attn(C, H, causal, gen, proj_std, dtype),
        mlp(C, gen, proj_std, dtype) {}
  // at: the positions of the forward and the scheme's tables for them (posenc.h). Its twin in
  // plain loops: block_forward (and block_backward) in nn/gpt_reference.cpp.
  Tensor forward(const Tensor& x, const PositionalEncoding& pe, const PositionContext& at,
                 const Interventions& iv = {}) const {
    Tensor h = add(x, attn.forward(ln_1.forward(x), pe, at, iv));
    return add(h, mlp.forward(ln_2.forward(h)));
  }
  Tensor forward_cached(const Tensor& x, const PositionalEncoding& pe, const PositionContext& at,
                        LayerCache& cache) const {
    Tensor h = add(x, attn.forward_cached(ln_1.forward(x), pe, at, cache));
    return add(h, mlp.forward(ln_2.forward(h)));
  }
  void to(Device d) { ln_1.to(d), attn.to(d), ln_2.to(d), mlp.to(d); }
  void collect(std::vector<NamedParam>& out, const std::string& prefix) const {
    ln_1.collect(out, prefix + ".ln_1");
    attn.collect(out, prefix + ".attn");
    ln_2.collect(out, prefix + ".ln_2");
    mlp.collect(out, prefix + ".mlp");
  }
};

}  // namespace poslab
