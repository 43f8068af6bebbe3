// factory.cpp — the --pe names, the settings' checks and the factory: the one file of posenc/
// that knows every scheme.
#include "posenc/factory.h"

#include "posenc/alibi.h"
#include "posenc/learned.h"
#include "posenc/none.h"
#include "posenc/sinusoidal.h"
#include "posenc/t5.h"

namespace poslab {

const std::vector<std::string>& pe_names() {
  static const std::vector<std::string> names{"none", "learned", "sinusoidal",
                                              "rope", "alibi",   "t5"};
  return names;
}

PeKind parse_pe(const std::string& name) {
  return static_cast<PeKind>(name_index(pe_names(), name, "--pe"));
}

const char* pe_name(PeKind kind) {
  return pe_names()[static_cast<int>(kind)].c_str();
}

void PosencConfig::validate(const PosencDims& dims) const {
  if (kind == PeKind::rope) validate_rope(dims.d_model / dims.n_head, theta, rope_fraction);
  if (kind == PeKind::t5) validate_t5({t5_buckets, t5_max_distance, dims.causal});
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
                                    cfg.rope_fraction);
    case PeKind::alibi:
      return std::make_unique<ALiBi>(dims.n_head);
    case PeKind::t5:
      return std::make_unique<T5Bias>(dims.n_head,
                                      T5Options{cfg.t5_buckets, cfg.t5_max_distance, dims.causal},
                                      gen, dims.dtype);
  }
  fail("posenc: unknown kind");
}

}  // namespace poslab
