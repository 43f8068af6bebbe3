// schemes.cpp — the study's schemes: a positional encoding and its options under the name the
// study's runs and tables carry (SPEC 7 v5 parts 2 and 3). See study.h.
#include <algorithm>

#include "study/study.h"

namespace poslab {
namespace {

// The six encodings of v4 as they are; the methods built for length generalisation; and RoPE
// with one option each:
//   prope         7 of 16 pairs keep turning (7/16): the pairs whose wavelength is under T0,
//                 the 9 slower ones carry no position (what the pair-by-pair surgery points to)
//   prope25       a quarter of the pairs (Gemma's global layers)
//   rope_rand     random positions up to 16 T0 (Ruoss et al. 2023)
//   learned_rand  the same for a learned table of 16 T0 rows
//   rope_nope4    the last of every 4 layers without RoPE (Llama 4's iRoPE)
const std::vector<StudyScheme>& schemes() {
  static const std::vector<StudyScheme> kSchemes{{"none", PeKind::none},
                                                 {"learned", PeKind::learned},
                                                 {"sinusoidal", PeKind::sinusoidal},
                                                 {"rope", PeKind::rope},
                                                 {"alibi", PeKind::alibi},
                                                 {"t5", PeKind::t5},
                                                 {"kerple", PeKind::kerple},
                                                 {"fire", PeKind::fire},
                                                 {"xpos", PeKind::xpos},
                                                 {"prope", PeKind::rope, 7.0 / 16},
                                                 {"prope25", PeKind::rope, 0.25},
                                                 {"rope_rand", PeKind::rope, 1, 0, 16},
                                                 {"learned_rand", PeKind::learned, 1, 0, 16},
                                                 {"rope_nope4", PeKind::rope, 1, 4}};
  return kSchemes;
}

}  // namespace

const StudyScheme& study_scheme(const std::string& name) {
  std::string valid;
  for (const StudyScheme& s : schemes()) {
    if (s.name == name) return s;
    valid += (valid.empty() ? "" : ", ") + s.name;
  }
  fail("study: unknown scheme '", name, "'; valid: ", valid);
}

void apply_scheme(const StudyScheme& s, GPTConfig& m) {
  m.pe.kind = s.pe;
  m.pe.rope_proportion = s.rope_proportion;
  m.pe.nope_every = s.nope_every;
  m.pe.random_positions = s.random_factor * m.block_size;
  if (s.pe == PeKind::learned && m.pe.random_positions > 0)  // a row for every position drawn
    m.pe.max_len = std::max(m.pe.max_len, m.pe.random_positions);
}

Interventions study_positions(const GPTConfig& m) {
  Interventions iv;
  iv.draw_max = m.pe.random_positions;  // 0: contiguous
  return iv;
}

}  // namespace poslab
