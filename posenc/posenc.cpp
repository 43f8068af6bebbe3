// posenc.cpp — names, parsing and the factory. Each scheme is in its own file.
#include "posenc/posenc.h"

#include <cmath>

#include "posenc/alibi.h"
#include "posenc/learned.h"
#include "posenc/none.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/t5.h"

namespace poslab {

const std::vector<std::string>& pe_names() {
  static const std::vector<std::string> names{"none", "learned", "sinusoidal",
                                              "rope", "alibi",   "t5"};
  return names;
}

static std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "|" : "") + v[i];
  return s;
}

// The index of name in names, or an error naming the flag and listing the valid names.
static size_t index_of(const std::vector<std::string>& names, const std::string& name,
                       const char* what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  fail(what, " '", name, "'; valid: ", joined(names));
}

PeKind parse_pe(const std::string& name) {
  return static_cast<PeKind>(index_of(pe_names(), name, "--pe: unknown positional encoding"));
}

const char* pe_name(PeKind kind) {
  return pe_names()[static_cast<int>(kind)].c_str();
}

static const std::vector<std::string>& scaling_names() {
  static const std::vector<std::string> names{"none", "linear", "ntk", "dynamic", "yarn"};
  return names;
}

ScalingKind parse_scaling(const std::string& name) {
  return static_cast<ScalingKind>(
      index_of(scaling_names(), name, "--rope-scaling: unknown scaling"));
}

const char* scaling_name(ScalingKind kind) {
  return scaling_names()[static_cast<int>(kind)].c_str();
}

static const std::vector<std::string>& rope_layout_names() {
  static const std::vector<std::string> names{"interleaved", "half"};
  return names;
}

RopeLayout parse_rope_layout(const std::string& name) {
  return static_cast<RopeLayout>(
      index_of(rope_layout_names(), name, "--rope-layout: unknown layout"));
}

const char* rope_layout_name(RopeLayout layout) {
  return rope_layout_names()[static_cast<int>(layout)].c_str();
}

int64_t rope_rotated_dims(int64_t D, double fraction) {
  return 2 * static_cast<int64_t>(std::floor(fraction * static_cast<double>(D) / 2));
}

PositionContext PositionalEncoding::context(const PositionContext& at, DType dtype,
                                            Device device) const {
  if (at.scaling.kind != ScalingKind::none && kind() != PeKind::rope)
    fail("--rope-scaling: ", scaling_name(at.scaling.kind),
         " applies only to pe = rope, but this model has pe = ", pe_name(kind()));
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
