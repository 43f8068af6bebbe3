// embedding.h — the token table wte (V,C) and how its rows enter the model.
//
//   x[b,t] = e * wte[ids[b,t]]                  x: (B,T,C), ids: (B,T)
//
// Two conventions (`--embedding`, checkpoint key `embedding`):
//   gpt2    e = 1, wte drawn N(0, 0.02^2)         (GPT-2, nanoGPT)
//   scaled  e = sqrt(C), wte drawn N(0, 1/C)      ("Attention Is All You Need", sec. 3.4;
//                                                  fairseq's embed_scale)
// With `scaled` each input vector has per-dimension std 1, the size of a sinusoidal table's
// entries (norm sqrt(C/2) per row). With `gpt2` a sinusoidal table outweighs the 0.02-std
// token vectors about 35 to 1 at C = 128 (sqrt(C/2) / (0.02 sqrt(C)) = 35.4): the model
// starts out seeing mostly positions. A learned wpe is drawn with the same std as wte, so
// both summands start at the same size in either convention.
//
// GPT ties its output head to this table, logits = h wte^T, and uses wte *unscaled* there
// (as fairseq does): e multiplies the input only.
//
// Backward (the lookup's scatter-add lives in autograd/nn_ops.cpp; the factor is `scale`):
//   forward   x = e * wte[ids]
//   dwte[v]  += e * sum over (b,t) with ids[b,t] = v of dx[b,t]
// The head adds its own term, dwte += dlogits^T h, unscaled: wte's gradient is the sum of
// both uses. Checked by "gradcheck: scaled embedding + learned/sinusoidal" (tests/nn).
#pragma once
#include <cmath>
#include <string>

#include "nn/module.h"

namespace poslab {

enum class EmbeddingKind { gpt2, scaled };
EmbeddingKind parse_embedding(const std::string& name);  // error lists the valid names
const char* embedding_name(EmbeddingKind kind);
const std::vector<std::string>& embedding_names();  // "gpt2", "scaled"

// The initial std of wte (and of a learned wpe) for model width C: 0.02 or C^-0.5.
inline double embedding_init_std(EmbeddingKind kind, int64_t C) {
  return kind == EmbeddingKind::scaled ? 1.0 / std::sqrt(static_cast<double>(C)) : 0.02;
}

// The factor e applied to the looked-up rows: 1 or sqrt(C).
inline double embedding_input_scale(EmbeddingKind kind, int64_t C) {
  return kind == EmbeddingKind::scaled ? std::sqrt(static_cast<double>(C)) : 1.0;
}

struct Embedding {
  Tensor weight;       // wte (V,C)
  double scale = 1.0;  // e
  Embedding() = default;
  Embedding(int64_t V, int64_t C, EmbeddingKind kind, Generator& gen, DType dtype)
      : weight(make_param({V, C}, gen, embedding_init_std(kind, C), dtype)),
        scale(embedding_input_scale(kind, C)) {}
  // ids: (B,T) -> (B,T,C)
  Tensor forward(const Ids& ids) const {
    Tensor x = embedding(weight, ids);
    return scale == 1.0 ? x : poslab::scale(x, scale);
  }
  void to(Device d) { weight = parameter_to(weight, d); }
};

}  // namespace poslab
