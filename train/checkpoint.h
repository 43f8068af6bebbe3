// checkpoint.h — the model as a safetensors file with nanoGPT names (docs/formats.md).
//
// model.safetensors holds every parameter (F32) and, in __metadata__, the config:
// pe, n_layer, n_head, n_embd, vocab_size, block_size, max_len (learned only), rope_theta,
// rope_layout and rope_fraction (rope only; absent: interleaved, 1), t5_buckets and
// t5_max_distance (t5 only), causal, step, embedding (gpt2|scaled; a file without it is gpt2).
// The head is tied to wte, so lm_head.weight is not stored.
// Loading trusts nothing: data/safetensors.cpp validates the container (lengths, JSON,
// offsets, overlap); here we check that the metadata forms a valid config and that every
// tensor the config implies is present with exactly the implied shape, and nothing else.
#pragma once
#include <memory>
#include <string>

#include "data/safetensors.h"
#include "nn/gpt.h"
#include "posenc/t5.h"

namespace poslab {

struct Checkpoint {
  std::unique_ptr<GPT> model;
  int64_t step = 0;
};

// Writes model.safetensors atomically (temporary file, fsync, rename).
void save_checkpoint(const GPT& model, int64_t step, const std::string& path);
// The model is built on `device` (its parameters copied there from the file).
Checkpoint load_checkpoint(const std::string& path, Device device = Device::cpu);

// A t5 checkpoint's options: t5_buckets and t5_max_distance from __metadata__, checked against
// the table transformer.rel_bias.weight, which must be there with shape [t5_buckets, n_head].
// Errors name the key (or the tensor) and the file.
T5Options read_t5_options(const StFile& f, const std::string& path, int64_t n_head, bool causal);

// The same conversions, on tensors in memory (the optimizer state reuses them).
StTensor to_st(const std::string& name, const Tensor& t);
void from_st(const StTensor& st, const Tensor& dst, const std::string& what);

}  // namespace poslab
