// gpt_reference_adapter.h — a GPT as the plain arrays of nn/gpt_reference.h: its config, its
// weights (any dtype and device, read as doubles) and a batch, so that the tests can run the
// one-file reference on the framework's model and compare the two. The reference itself knows
// nothing of the framework.
#pragma once
#include "nn/gpt.h"
#include "nn/gpt_reference.h"

namespace poslab::test {

namespace ref = poslab::reference;

// The model's config for the reference; `scaling` is a RoPE scaling the model trains or runs
// under, of which the reference models linear scaling with a given factor (a fine-tune).
inline ref::Config reference_config(const GPTConfig& c, const RopeScaling& scaling = {}) {
  if (scaling.kind != ScalingKind::none &&
      (scaling.kind != ScalingKind::linear || !(scaling.factor > 0) || scaling.pair >= 0))
    fail("reference_config: the reference models linear scaling with a factor, but got ",
         scaling_name(scaling.kind));
  ref::Config r;
  r.vocab_size = c.vocab_size, r.n_layer = c.n_layer, r.n_head = c.n_head, r.n_embd = c.n_embd;
  r.block_size = c.block_size;
  r.pe = static_cast<ref::Pe>(static_cast<int>(c.pe.kind));
  r.causal = c.causal, r.scaled_embedding = c.embedding == EmbeddingKind::scaled;
  r.max_len = c.pe.max_len, r.theta = c.pe.theta,
  r.rope_half = c.pe.rope_layout == RopeLayout::half;
  r.rope_fraction = c.pe.rope_fraction, r.rope_proportion = c.pe.rope_proportion;
  r.rope_linear_factor = scaling.kind == ScalingKind::linear ? scaling.factor : 1;
  r.t5_buckets = c.pe.t5_buckets, r.t5_max_distance = c.pe.t5_max_distance;
  r.fire_width = c.pe.fire_width, r.xpos_scale_base = c.pe.xpos_scale_base;
  r.nope_every = c.pe.nope_every, r.random_positions = c.pe.random_positions;
  return r;
}

// The model's weights, name by name (the two lists must name the same tensors in one order).
inline ref::Params reference_params(const GPT& m) {
  const ref::Config c = reference_config(m.config());
  ref::Params p;
  p.h.resize(c.n_layer);
  std::vector<ref::NamedArray> arrays = ref::named_arrays(c, p);
  const std::vector<NamedParam> params = m.parameters();
  if (arrays.size() != params.size())
    fail("reference_params: the reference names ", arrays.size(), " arrays, the model ",
         params.size(), " parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    if (arrays[i].name != params[i].name || arrays[i].decay != params[i].decay)
      fail("reference_params: parameter ", i, " is ", params[i].name, " in the model but ",
           arrays[i].name, " in the reference (or their weight decay differs)");
    *arrays[i].value = params[i].tensor.to_vector();
  }
  return p;
}

// ids, targets (B,T) and the positions (B,T) of Interventions::positions (empty: 0..T-1).
inline ref::Batch reference_batch(const Ids& ids, const Ids& targets, const Ids& positions = {}) {
  if (ids.shape.size() != 2 || targets.shape != ids.shape)
    fail("reference_batch: expected ids and targets of one shape (B,T), but got ",
         shape_str(ids.shape), " and ", shape_str(targets.shape));
  return {ids.shape[0], ids.shape[1], ids.data, targets.data, positions.data};
}

}  // namespace poslab::test
