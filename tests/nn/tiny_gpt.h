// tiny_gpt.h — the small f64 model the nn tests share: V 7, 2 layers, 2 heads, C 8, T0 6,
// a learned table of 8 rows.
#pragma once
#include "nn/gpt.h"

namespace poslab::test {

inline GPTConfig tiny(PeKind pe, bool causal = true,
                      EmbeddingKind embedding = EmbeddingKind::gpt2) {
  GPTConfig c;
  c.vocab_size = 7;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.block_size = 6;
  c.pe.max_len = 8;
  c.pe.kind = pe;
  c.causal = causal;
  c.embedding = embedding;
  c.dtype = DType::f64;
  return c;
}

}  // namespace poslab::test
