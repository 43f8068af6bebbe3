#include "nn/gpt.h"

#include <cmath>

#include "posenc/t5.h"
#include "tensor/device.h"

namespace poslab {

// --rope-fraction f must leave at least one rotated pair: r = 2 floor(f D / 2) >= 2.
static void validate_rope_fraction(const GPTConfig& c) {
  if (!(c.rope_fraction > 0 && c.rope_fraction <= 1))
    fail("--rope-fraction: expected f in (0, 1], but got ", c.rope_fraction);
  int64_t D = c.n_embd / c.n_head, r = rope_rotated_dims(D, c.rope_fraction);
  if (r < 2)
    fail("--rope-fraction: f = ", c.rope_fraction, " rotates r = 2 floor(f D / 2) = ", r,
         " of D = ", D, " dims of a head; expected at least one pair (r >= 2)");
}

void GPTConfig::validate() const {
  if (vocab_size <= 0) fail("model: expected vocab_size > 0, but got ", vocab_size);
  if (n_layer <= 0) fail("--layers: expected at least 1 layer, but got ", n_layer);
  if (n_embd <= 0) fail("--d: expected a positive model width, but got ", n_embd);
  if (n_head <= 0 || n_embd % n_head != 0)
    fail("--heads: expected a head count that divides --d = ", n_embd, ", but got ", n_head);
  if (block_size <= 0) fail("--ctx: expected a positive context length, but got ", block_size);
  if (pe == PeKind::rope && (n_embd / n_head) % 2 != 0)
    fail("--pe rope: expected an even head dim D = d/heads (RoPE rotates pairs), but got D = ",
         n_embd / n_head, " (d = ", n_embd, ", heads = ", n_head, ")");
  if (pe == PeKind::rope && !(rope_theta > 1))
    fail("--theta: expected theta > 1, but got ", rope_theta);
  if (pe == PeKind::rope) validate_rope_fraction(*this);
  if (pe == PeKind::t5) validate_t5({t5_buckets, t5_max_distance, causal});
  if (pe == PeKind::learned && max_len != 0 && max_len < block_size)
    fail("--max-len: expected at least --ctx = ", block_size, ", but got ", max_len);
  require_device(device, "--device cuda");
}

GPT::GPT(const GPTConfig& cfg, uint64_t seed) : cfg_(cfg) {
  cfg_.validate();
  if (cfg_.pe == PeKind::learned && cfg_.max_len == 0) cfg_.max_len = cfg_.block_size;
  if (cfg_.pe != PeKind::learned) cfg_.max_len = 0;
  Generator gen(seed);
  int64_t C = cfg_.n_embd;
  wte_ = Embedding(cfg_.vocab_size, C, cfg_.embedding, gen, cfg_.dtype);
  PosencConfig pc;
  pc.kind = cfg_.pe, pc.d_model = C, pc.n_head = cfg_.n_head, pc.max_len = cfg_.max_len;
  pc.theta = cfg_.rope_theta, pc.rope_layout = cfg_.rope_layout;
  pc.rope_fraction = cfg_.rope_fraction;
  pc.t5_buckets = cfg_.t5_buckets, pc.t5_max_distance = cfg_.t5_max_distance;
  pc.causal = cfg_.causal, pc.dtype = cfg_.dtype;
  pc.init_std = embedding_init_std(cfg_.embedding, C);  // a learned wpe starts like wte
  pe_ = make_posenc(pc, gen);
  double proj_std = 0.02 / std::sqrt(2.0 * cfg_.n_layer);
  for (int64_t i = 0; i < cfg_.n_layer; ++i)
    blocks_.emplace_back(C, cfg_.n_head, cfg_.causal, gen, proj_std, cfg_.dtype);
  ln_f_ = LayerNorm(C, cfg_.dtype);
  pe_->set_scaling({ScalingKind::none, 0, cfg_.block_size});
  to(cfg_.device);
}

void GPT::to(Device device) {
  wte_.to(device);
  pe_->to(device);
  for (Block& b : blocks_) b.to(device);
  ln_f_.to(device);
  cfg_.device = device;
}

Tensor GPT::head(const Tensor& x) const {
  return matmul(ln_f_.forward(x), transpose(wte_.weight, 0, 1));  // (B,T,C) @ (C,V)
}

// The interventions as this model can take them, with T0 filled in; bad values named by flag.
static Interventions checked(const Interventions& in, const GPTConfig& cfg, int64_t T) {
  Interventions iv = in;
  iv.train_len = cfg.block_size;
  if (iv.position_offset < 0)
    fail("--position-offset: expected P >= 0, but got ", iv.position_offset);
  if (iv.attention_window < 0)
    fail("--attention-window: expected W >= 1, but got ", iv.attention_window);
  if (cfg.pe == PeKind::learned && iv.position_offset + T > cfg.max_len)
    fail("--position-offset: positions ", iv.position_offset, "..", iv.position_offset + T - 1,
         " need P + L = ", iv.position_offset + T,
         " <= max_len, but the learned table has max_len = ", cfg.max_len);
  return iv;
}

Tensor GPT::logits(const Ids& ids, const Interventions& in) const {
  if (ids.shape.size() != 2)
    fail("model: expected ids of shape (B,T), but got ", shape_str(ids.shape));
  const Interventions iv = checked(in, cfg_, ids.shape[1]);
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), iv.position_offset);
  for (const Block& b : blocks_) x = b.forward(x, *pe_, iv);
  return head(x);
}

Tensor GPT::loss(const Ids& ids, const Ids& targets, Tensor* row_loss,
                 const Interventions& iv) const {
  if (targets.shape != ids.shape)
    fail("model: expected targets of shape ", shape_str(ids.shape), ", but got ",
         shape_str(targets.shape));
  Tensor lg = logits(ids, iv);
  return cross_entropy(reshape(lg, {-1, cfg_.vocab_size}), targets, row_loss);
}

Tensor GPT::attention_map(const Ids& ids, int64_t layer) const {
  if (layer < 0 || layer >= cfg_.n_layer)
    fail("attention_map: layer ", layer, " out of range for ", cfg_.n_layer, " layers");
  NoGrad no_grad;
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), 0);
  for (int64_t i = 0; i < layer; ++i) x = blocks_[i].forward(x, *pe_);
  const Block& b = blocks_[layer];
  return b.attn.probabilities(b.ln_1.forward(x), *pe_);
}

KVCache GPT::new_cache(int64_t capacity) const {
  KVCache c;
  int64_t H = cfg_.n_head, D = cfg_.n_embd / H;
  for (int64_t i = 0; i < cfg_.n_layer; ++i)
    c.layers.push_back({Tensor::zeros({1, capacity, H, D}, cfg_.dtype, cfg_.device),
                        Tensor::zeros({1, capacity, H, D}, cfg_.dtype, cfg_.device), 0});
  return c;
}

Tensor GPT::decode(const Ids& ids, KVCache& cache) const {
  NoGrad no_grad;
  if (ids.shape.size() != 2 || ids.shape[0] != 1)
    fail("decode: expected ids of shape (1,T), but got ", shape_str(ids.shape));
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), cache.len());
  for (size_t i = 0; i < blocks_.size(); ++i)
    x = blocks_[i].forward_cached(x, *pe_, cache.layers[i]);
  return head(x);
}

std::vector<NamedParam> GPT::parameters() const {
  std::vector<NamedParam> out;
  out.push_back({"transformer.wte.weight", wte_.weight, false});
  for (auto& [name, t] : pe_->parameters()) out.push_back({name, t, false});
  for (size_t i = 0; i < blocks_.size(); ++i)
    blocks_[i].collect(out, "transformer.h." + std::to_string(i));
  ln_f_.collect(out, "transformer.ln_f");
  return out;
}

int64_t GPT::num_parameters() const {
  int64_t n = 0;
  for (const NamedParam& p : parameters()) n += p.tensor.numel();
  return n;
}

}  // namespace poslab
