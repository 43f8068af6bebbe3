#include "posenc/learned.h"

namespace poslab {

LearnedPE::LearnedPE(int64_t max_len, int64_t d_model, Generator& gen, DType dtype,
                     double init_std) {
  if (max_len <= 0) fail("learned: expected max_len > 0, but got ", max_len);
  wpe_ = Tensor::randn({max_len, d_model}, gen, init_std, dtype);
  wpe_.set_requires_grad(true);
}

// x: (B,T,C) -> x + wpe[pos0 .. pos0+T)  (broadcast over B); under random positions each
// sequence its own rows, x[b, t] + wpe[pos[b, t]].
Tensor LearnedPE::add_to_embeddings(const Tensor& x, const PositionContext& ctx) const {
  if (ctx.random()) {
    for (int32_t p : ctx.positions.data)
      if (p >= wpe_.size(0))
        fail("learned: the drawn position ", p, " is past the table's max_len = ", wpe_.size(0),
             " rows (train with --max-len at least --random-positions)");
    return add(x, embedding(wpe_, ctx.positions));  // (B,T,C) + (B,T,C)
  }
  int64_t pos0 = ctx.offset + ctx.q_pos0, T = x.size(1), L = pos0 + T, max_len = wpe_.size(0);
  if (L > max_len && ctx.offset == 0)
    fail("learned: a window of length L = ", L, " needs positions up to ", L - 1,
         ", but the table has max_len = ", max_len, " rows (train with --max-len ", L, " or more)");
  if (L > max_len)
    fail("learned: --position-offset ", ctx.offset, " puts the window at positions ", pos0, "..",
         L - 1, ", but the table has max_len = ", max_len, " rows (train with --max-len ", L,
         " or more)");
  Ids pos{std::vector<int32_t>(T), {T}};
  for (int64_t t = 0; t < T; ++t) pos.data[t] = static_cast<int32_t>(pos0 + t);
  return add(x, embedding(wpe_, pos));  // (B,T,C) + (T,C)
}

}  // namespace poslab
