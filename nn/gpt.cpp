#include "nn/gpt.h"

#include <algorithm>
#include <cmath>

#include "posenc/none.h"
#include "tensor/device.h"

namespace poslab {

void GPTConfig::validate() const {
  if (vocab_size <= 0) fail("model: expected vocab_size > 0, but got ", vocab_size);
  if (n_layer <= 0) fail("--layers: expected at least 1 layer, but got ", n_layer);
  if (n_embd <= 0) fail("--d: expected a positive model width, but got ", n_embd);
  if (n_head <= 0 || n_embd % n_head != 0)
    fail("--heads: expected a head count that divides --d = ", n_embd, ", but got ", n_head);
  if (block_size <= 0) fail("--ctx: expected a positive context length, but got ", block_size);
  pe.validate(posenc_dims());
  if (pe.kind == PeKind::learned && pe.max_len != 0 && pe.max_len < block_size)
    fail("--max-len: expected at least --ctx = ", block_size, ", but got ", pe.max_len);
  require_device(device, "--device cuda");
  // What has no GPU kernels yet is refused, never run elsewhere in silence.
  if (device == Device::cuda) {
    if (pe.kind == PeKind::kerple || pe.kind == PeKind::fire || pe.kind == PeKind::xpos)
      fail("--pe ", pe_name(pe.kind), " runs on the CPU only (no CUDA kernels yet); use ",
           "--device cpu");
    if (pe.random_positions > 0)
      fail("--random-positions runs on the CPU only (no CUDA kernels yet); use --device cpu");
  }
}

GPT::GPT(const GPTConfig& cfg, uint64_t seed) : cfg_(cfg) {
  cfg_.validate();
  if (cfg_.pe.kind == PeKind::learned && cfg_.pe.max_len == 0)  // rows for every position drawn
    cfg_.pe.max_len = std::max(cfg_.block_size, cfg_.pe.random_positions);
  if (cfg_.pe.kind != PeKind::learned) cfg_.pe.max_len = 0;
  Generator gen(seed);
  int64_t C = cfg_.n_embd;
  wte_ = Embedding(cfg_.vocab_size, C, cfg_.embedding, gen, cfg_.dtype);
  pe_ = make_posenc(cfg_.pe, cfg_.posenc_dims(), gen);
  pe_->project();
  nope_ = std::make_unique<NoPE>();
  double proj_std = 0.02 / std::sqrt(2.0 * cfg_.n_layer);
  for (int64_t i = 0; i < cfg_.n_layer; ++i)
    blocks_.emplace_back(C, cfg_.n_head, cfg_.causal, gen, proj_std, cfg_.dtype);
  ln_f_ = LayerNorm(C, cfg_.dtype);
  to(cfg_.device);
}

PosencDims GPTConfig::posenc_dims() const {
  // a learned wpe starts like wte
  return {n_embd,     n_head,  causal,       dtype, embedding_init_std(embedding, n_embd),
          block_size, n_layer, pe.nope_every};
}

const PositionalEncoding& GPT::layer_posenc(int64_t l) const {
  return cfg_.posenc_dims().positional_layer(l) ? *pe_ : *nope_;
}

PositionContext GPT::positions(int64_t q_pos0, int64_t Tq, const Interventions& iv) const {
  PositionContext at;
  at.q_pos0 = q_pos0, at.Tq = Tq, at.Tk = q_pos0 + Tq, at.offset = iv.position_offset;
  at.scaling = iv.rope_scaling;
  at.positions = iv.positions;
  return pe_->context(at, cfg_.dtype, cfg_.device);
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
// (The position offset is checked where it is used: PositionalEncoding::context, and the
// learned table's rows in LearnedPE::add_to_embeddings.)
static Interventions checked(const Interventions& in, const GPTConfig& cfg) {
  Interventions iv = in;
  iv.train_len = cfg.block_size;
  if (iv.rope_scaling.train_len == 0) iv.rope_scaling.train_len = cfg.block_size;
  if (iv.attention_window < 0)
    fail("--attention-window: expected W >= 1, but got ", iv.attention_window);
  if (iv.rope_scaling.kind != ScalingKind::none && cfg.pe.kind != PeKind::rope)
    fail("--rope-scaling: ", scaling_name(iv.rope_scaling.kind),
         " applies only to pe = rope, but this model has pe = ", pe_name(cfg.pe.kind));
  if (!iv.positions.data.empty() && cfg.pe.kind == PeKind::none)
    fail("--positions random: pe = none has no positions");
  return iv;
}

// Drawn positions must fit the batch and be sorted, distinct and >= 0.
static void check_positions(const Ids& pos, const Ids& ids) {
  if (pos.data.empty()) return;
  if (pos.shape != ids.shape)
    fail("positions: expected one per token, ", shape_str(ids.shape), ", but got ",
         shape_str(pos.shape));
  const int64_t T = ids.shape[1];
  for (size_t n = 0; n < pos.data.size(); ++n)
    if (pos.data[n] < 0 || (n % T != 0 && pos.data[n] <= pos.data[n - 1]))
      fail("positions: expected distinct ascending positions >= 0 in each row, but got ",
           pos.data[n], " at row ", n / T, ", column ", n % T);
}

Tensor GPT::logits(const Ids& ids, const Interventions& in) const {
  if (ids.shape.size() != 2)
    fail("model: expected ids of shape (B,T), but got ", shape_str(ids.shape));
  const Interventions iv = checked(in, cfg_);
  check_positions(iv.positions, ids);
  PositionContext at = positions(0, ids.shape[1], iv);
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), at);
  for (size_t l = 0; l < blocks_.size(); ++l) {
    at.layer = static_cast<int64_t>(l);
    x = blocks_[l].forward(x, layer_posenc(at.layer), at, iv);
  }
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
  return attention_maps(ids, layer).back();
}

std::vector<Tensor> GPT::attention_maps(const Ids& ids, int64_t last) const {
  if (last < 0 || last >= cfg_.n_layer)
    fail("attention_map: layer ", last, " out of range for ", cfg_.n_layer, " layers");
  NoGrad no_grad;
  PositionContext at = positions(0, ids.shape[1], checked({}, cfg_));
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), at);
  std::vector<Tensor> maps;
  for (int64_t i = 0; i <= last; ++i) {
    const Block& b = blocks_[i];
    at.layer = i;
    maps.push_back(b.attn.probabilities(b.ln_1.forward(x), layer_posenc(i), at));
    if (i < last) x = b.forward(x, layer_posenc(i), at);
  }
  return maps;
}

KVCache GPT::new_cache(int64_t capacity) const {
  KVCache c;
  int64_t H = cfg_.n_head, D = cfg_.n_embd / H;
  for (int64_t i = 0; i < cfg_.n_layer; ++i)
    c.layers.push_back({Tensor::zeros({1, capacity, H, D}, cfg_.dtype, cfg_.device),
                        Tensor::zeros({1, capacity, H, D}, cfg_.dtype, cfg_.device), 0});
  return c;
}

Tensor GPT::decode(const Ids& ids, KVCache& cache, const RopeScaling& scaling) const {
  NoGrad no_grad;
  if (ids.shape.size() != 2 || ids.shape[0] != 1)
    fail("decode: expected ids of shape (1,T), but got ", shape_str(ids.shape));
  Interventions iv;
  iv.rope_scaling = scaling;
  PositionContext at = positions(cache.len(), ids.shape[1], checked(iv, cfg_));
  Tensor x = pe_->add_to_embeddings(wte_.forward(ids), at);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    at.layer = static_cast<int64_t>(i);
    x = blocks_[i].forward_cached(x, layer_posenc(at.layer), at, cache.layers[i]);
  }
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
