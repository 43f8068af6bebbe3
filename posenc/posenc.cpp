// posenc.cpp — the contexts of the interface (posenc.h). Each scheme is in its own file; the
// names and the factory are in factory.cpp.
#include "posenc/posenc.h"

#include <algorithm>
#include <cstdlib>

namespace poslab {

PositionContext PositionalEncoding::context(const PositionContext& at, DType dtype,
                                            Device device) const {
  if (at.scaling.kind != ScalingKind::none && kind() != PeKind::rope)
    fail("--rope-scaling: ", scaling_name(at.scaling.kind), " applies only to pe = rope");
  if (at.offset < 0) fail("--position-offset: expected P >= 0, but got ", at.offset);
  PositionContext ctx;  // the positions of `at`, none of its tables
  ctx.q_pos0 = at.q_pos0, ctx.Tq = at.Tq, ctx.Tk = at.Tk;
  ctx.offset = at.offset, ctx.scaling = at.scaling;
  ctx.positions = at.positions, ctx.layer = at.layer;
  if (ctx.random()) {
    if (ctx.positions.shape.size() != 2 || ctx.positions.shape[1] != at.Tk || at.q_pos0 != 0 ||
        at.Tq != at.Tk)
      fail("positions: expected (B, T) = (B, ", at.Tk, ") drawn positions for a whole window, ",
           "but got ", shape_str(ctx.positions.shape), " with q_pos0 = ", at.q_pos0);
    if (at.offset != 0 || at.scaling.kind != ScalingKind::none)
      fail("--positions random: --position-offset and --rope-scaling need contiguous positions ",
           "(--positions contiguous)");
  }
  ctx.tables = build(ctx, dtype, device);
  return ctx;
}

std::vector<double> PositionContext::distances(bool causal) const {
  const int64_t R = rows();
  std::vector<double> n(R * Tq * Tk);
  for (int64_t b = 0; b < R; ++b)
    for (int64_t i = 0; i < Tq; ++i) {
      const int64_t Pi = position(b, q_pos0 + i);
      double* row = n.data() + (b * Tq + i) * Tk;
      for (int64_t j = 0; j < Tk; ++j) {
        const int64_t d = Pi - position(b, j);
        row[j] = static_cast<double>(causal ? std::max<int64_t>(d, 0) : std::abs(d));
      }
    }
  return n;
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
