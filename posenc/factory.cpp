// factory.cpp — the --pe names, the settings' checks and the factory: the one file of posenc/
// that knows every scheme.
#include "posenc/factory.h"

#include "posenc/alibi.h"
#include "posenc/fire.h"
#include "posenc/kerple.h"
#include "posenc/learned.h"
#include "posenc/none.h"
#include "posenc/sinusoidal.h"
#include "posenc/t5.h"
#include "posenc/xpos.h"

namespace poslab {

const std::vector<std::string>& pe_names() {
  static const std::vector<std::string> names{"none", "learned", "sinusoidal", "rope", "alibi",
                                              "t5",   "kerple",  "fire",       "xpos"};
  return names;
}

PeKind parse_pe(const std::string& name) {
  return static_cast<PeKind>(name_index(pe_names(), name, "--pe"));
}

const char* pe_name(PeKind kind) {
  return pe_names()[static_cast<int>(kind)].c_str();
}

bool acts_in_attention(PeKind kind) {
  return kind != PeKind::none && kind != PeKind::learned && kind != PeKind::sinusoidal;
}

void PosencConfig::validate(const PosencDims& dims) const {
  const int64_t D = dims.d_model / dims.n_head;
  if (kind == PeKind::rope) validate_rope(D, theta, rope_fraction);
  if (kind == PeKind::rope) validate_rope_proportion(rope_proportion, rope_fraction);
  if (kind == PeKind::xpos) validate_rope(D, theta, 1);
  if (kind == PeKind::t5) validate_t5({t5_buckets, t5_max_distance, dims.causal});
  if (rope_proportion != 1 && kind != PeKind::rope)
    fail("--rope-proportion applies only to --pe rope, but got --pe ", pe_name(kind));
  if (kind == PeKind::fire && fire_width < 1)
    fail("--fire-width: expected W >= 1, but got ", fire_width);
  if (kind == PeKind::xpos && !(xpos_scale_base > 0))
    fail("--xpos-scale-base: expected B > 0, but got ", xpos_scale_base);
  if (kind == PeKind::xpos && !dims.causal) fail("--pe xpos: expected --causal true");
  if (nope_every < 0) fail("--nope-every: expected k >= 1 (0: off), but got ", nope_every);
  if (nope_every > 0 && !acts_in_attention(kind))
    fail("--nope-every applies to schemes that act inside attention (rope, xpos, alibi, t5, ",
         "kerple, fire), but got --pe ", pe_name(kind), ", which acts once, at the input");
  if (random_positions < 0)
    fail("--random-positions: expected Lmax >= --ctx (0: off), but got ", random_positions);
  if (random_positions > 0 && kind == PeKind::none)
    fail("--random-positions: --pe none has no positions to draw");
  if (random_positions > 0 && random_positions < dims.block_size)
    fail("--random-positions: expected Lmax >= --ctx = ", dims.block_size, " (T0 distinct ",
         "positions are drawn from [0, Lmax)), but got ", random_positions);
  if (random_positions > 0 && kind == PeKind::learned && max_len != 0 && max_len < random_positions)
    fail("--max-len: expected at least --random-positions = ", random_positions,
         " (drawn positions index the table), but got ", max_len);
}

std::unique_ptr<PositionalEncoding> make_posenc(const PosencConfig& cfg, const PosencDims& dims,
                                                Generator& gen) {
  switch (cfg.kind) {
    case PeKind::none:
      return std::make_unique<NoPE>();
    case PeKind::learned:
      return std::make_unique<LearnedPE>(cfg.max_len, dims.d_model, gen, dims.dtype, dims.init_std);
    case PeKind::sinusoidal:
      return std::make_unique<SinusoidalPE>(dims.d_model);
    case PeKind::rope:
      return std::make_unique<RoPE>(dims.d_model / dims.n_head, cfg.theta, cfg.rope_layout,
                                    cfg.rope_fraction, cfg.rope_proportion);
    case PeKind::alibi:
      return std::make_unique<ALiBi>(dims.n_head, dims.causal);
    case PeKind::t5:
      return std::make_unique<T5Bias>(dims.n_head,
                                      T5Options{cfg.t5_buckets, cfg.t5_max_distance, dims.causal},
                                      gen, dims.dtype);
    case PeKind::kerple:
      return std::make_unique<Kerple>(dims.n_head, gen, dims.dtype);
    case PeKind::fire:
      return std::make_unique<Fire>(dims, cfg.fire_width, gen);
    case PeKind::xpos:
      return std::make_unique<XPos>(dims.d_model / dims.n_head, cfg.theta, cfg.xpos_scale_base,
                                    cfg.rope_layout);
  }
  fail("posenc: unknown kind");
}

}  // namespace poslab
