// gpt.h — the character-level GPT of docs/model.md (nanoGPT's names, docs/formats.md).
//
//   x      = e * wte[ids]                       (B,T,C); e = 1 (gpt2) or sqrt(C) (scaled)
//   x     += PE[0:T]                            learned | sinusoidal only
//   x      = block_i(x)  for i < n_layer        pre-LN, no dropout (--nope-every k: block i
//                                               without position when (i+1) mod k = 0)
//   logits = ln_f(x) @ wte^T                    tied head (B,T,V)
//   loss   = mean over B*T of cross-entropy (nats)
//
// Initialisation (seeded by one Generator, in this order): wte, wpe (learned only), then per
// block c_attn.weight, attn c_proj.weight, c_fc.weight, mlp c_proj.weight. Linear weights
// N(0, 0.02^2), the two c_proj weights N(0, (0.02/sqrt(2 n_layer))^2), biases 0, LayerNorm
// weight 1 and bias 0; wte and wpe N(0, 0.02^2) (gpt2) or N(0, 1/C) (scaled, nn/embedding.h).
#pragma once
#include <memory>
#include <vector>

#include "nn/block.h"
#include "nn/embedding.h"
#include "posenc/factory.h"

namespace poslab {

struct GPTConfig {
  int64_t vocab_size = 0;
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  int64_t block_size = 256;  // T0, the training context length
  PosencConfig pe;           // the positional scheme and its settings (posenc/factory.h)
  bool causal = true;
  EmbeddingKind embedding = EmbeddingKind::gpt2;  // input scale and init of wte, wpe
  DType dtype = DType::f32;                       // f64 for gradient checks
  Device device = Device::cpu;  // where parameters, activations and optimizer state live

  void validate() const;  // every bad value named, with the flag that sets it
  // What the scheme takes from this model (posenc.h): C, H, the mask, dtype, and the initial
  // std of a learned table.
  PosencDims posenc_dims() const;
};

struct KVCache {
  std::vector<LayerCache> layers;
  int64_t len() const { return layers.empty() ? 0 : layers[0].len; }
};

class GPT {
 public:
  GPT(const GPTConfig& cfg, uint64_t seed);

  // ids: (B,T) -> logits (B,T,V); iv: the evaluation's interventions and RoPE scaling
  // (nn/attention.h), checked here against the model (learned: offset + T <= max_len).
  Tensor logits(const Ids& ids, const Interventions& iv = {}) const;
  // mean cross-entropy of the next-token targets (B,T); row_loss: per position (B*T). Its twin
  // in plain loops, every layer written out with its backward: model_forward and model_backward
  // in nn/gpt_reference.cpp (tested equal: tests/nn/test_gpt_reference.cpp).
  Tensor loss(const Ids& ids, const Ids& targets, Tensor* row_loss = nullptr,
              const Interventions& iv = {}) const;
  // Attention probabilities (B,H,T,T) of block `layer` for ids (B,T).
  Tensor attention_map(const Ids& ids, int64_t layer) const;
  // The same for blocks 0..last in one forward pass (element l = attention_map(ids, l)): each
  // block's input is computed once, not once per layer asked for.
  std::vector<Tensor> attention_maps(const Ids& ids, int64_t last) const;
  // Incremental decoding: feeds ids (1,T) after what the cache holds -> logits (1,T,V), under
  // RoPE's scaling (the same for every call on one cache).
  KVCache new_cache(int64_t capacity) const;
  Tensor decode(const Ids& ids, KVCache& cache, const RopeScaling& scaling = {}) const;

  // Moves every parameter to `device` (initialisation always runs on the CPU, so a seed gives
  // the same weights on every device). The constructor calls it with config().device.
  void to(Device device);

  const GPTConfig& config() const { return cfg_; }
  std::vector<NamedParam> parameters() const;  // nanoGPT names, checkpoint order
  int64_t num_parameters() const;
  const PositionalEncoding& posenc() const { return *pe_; }
  // The scheme layer l uses: the model's, or none in the layers --nope-every leaves without.
  const PositionalEncoding& layer_posenc(int64_t l) const;
  // After every optimizer step: the scheme's projection (KERPLE's clamp; posenc.h).
  void project() { pe_->project(); }

 private:
  Tensor head(const Tensor& x) const;  // ln_f then the tied projection -> (B,T,V)
  // The positions of a forward (queries at offset + q_pos0 + [0, Tq), keys at offset +
  // [0, q_pos0 + Tq)) with the scheme's tables built for them under iv's RoPE scaling, once
  // for every layer.
  PositionContext positions(int64_t q_pos0, int64_t Tq, const Interventions& iv) const;
  GPTConfig cfg_;
  Embedding wte_;
  std::unique_ptr<PositionalEncoding> pe_;
  std::unique_ptr<PositionalEncoding> nope_;  // the layers without position (--nope-every)
  std::vector<Block> blocks_;
  LayerNorm ln_f_;
};

}  // namespace poslab
