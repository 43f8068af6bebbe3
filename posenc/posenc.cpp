// posenc.cpp — the contexts of the interface (posenc.h). Each scheme is in its own file; the
// names and the factory are in factory.cpp.
#include "posenc/posenc.h"

namespace poslab {

PositionContext PositionalEncoding::context(const PositionContext& at, DType dtype,
                                            Device device) const {
  if (at.scaling.kind != ScalingKind::none && kind() != PeKind::rope)
    fail("--rope-scaling: ", scaling_name(at.scaling.kind), " applies only to pe = rope");
  if (at.offset < 0) fail("--position-offset: expected P >= 0, but got ", at.offset);
  PositionContext ctx;  // the positions of `at`, none of its tables
  ctx.q_pos0 = at.q_pos0, ctx.Tq = at.Tq, ctx.Tk = at.Tk;
  ctx.offset = at.offset, ctx.scaling = at.scaling;
  build(ctx, dtype, device);
  return ctx;
}

AttentionTerms attention_terms_at(const PositionalEncoding& pe, const Tensor& q, const Tensor& k,
                                  int64_t q_pos0, bool causal, const RopeScaling& scaling) {
  PositionContext at;
  at.q_pos0 = q_pos0, at.Tq = q.size(1), at.Tk = k.size(1), at.scaling = scaling;
  return pe.attention_terms(q, k, causal, pe.context(at, q.dtype(), q.device()));
}

Tensor add_to_embeddings_at(const PositionalEncoding& pe, const Tensor& x, int64_t pos0) {
  PositionContext at;
  at.q_pos0 = pos0, at.Tq = x.size(1), at.Tk = pos0 + x.size(1);
  return pe.add_to_embeddings(x, pe.context(at, x.dtype(), x.device()));
}

}  // namespace poslab
