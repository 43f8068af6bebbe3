// none.h — NoPE: no positional information at all.
//
// Attention without positions is permutation-equivariant: permuting the input tokens
// permutes the output rows the same way (each row depends on its own query and the *set* of
// keys/values). With a causal mask, though, position leaks in anyway: row i sees exactly
// i+1 tokens, so a causal NoPE model can count (tests/posenc checks the equivariance
// without a mask; the study measures how well a causal NoPE model does).
#pragma once
#include "posenc/posenc.h"

namespace poslab {

class NoPE final : public PositionalEncoding {
 public:
  PeKind kind() const override { return PeKind::none; }
};

}  // namespace poslab
