#include "posenc/rope_scaling.h"

#include <algorithm>
#include <cmath>

namespace poslab {

static const std::vector<std::string>& scaling_names() {
  static const std::vector<std::string> names{"none", "linear", "ntk",     "dynamic",
                                              "yarn", "llama3", "longrope"};
  return names;
}

ScalingKind parse_scaling(const std::string& name) {
  return static_cast<ScalingKind>(name_index(scaling_names(), name, "--rope-scaling"));
}

const char* scaling_name(ScalingKind kind) {
  return scaling_names()[static_cast<int>(kind)].c_str();
}

std::vector<double> rope_base_frequencies(int64_t D, double theta) {
  std::vector<double> f(D / 2);
  for (int64_t i = 0; i < D / 2; ++i) f[i] = std::pow(theta, -2.0 * i / D);
  return f;
}

double rope_scale_factor(const RopeScaling& sc, int64_t L) {
  if (sc.factor > 0) return sc.factor;
  if (sc.train_len <= 0) fail("rope scaling: the training length T0 is unknown");
  return std::max(1.0, static_cast<double>(L) / sc.train_len);
}

double ntk_theta(double theta, int64_t D, double s) {
  if (D <= 2)
    fail(
        "rope scaling ntk/dynamic: theta s^(r/(r-2)) needs more than r = 2 rotated dims, but "
        "got r = ",
        D);
  return theta * std::pow(s, static_cast<double>(D) / (D - 2));
}

// YaRN (the reference code's `_yarn_find_correction_range` and `_yarn_linear_ramp_mask`, HF's
// `find_correction_range` and `linear_ramp_factor`): a pair that turns more than beta_fast times
// over T0 keeps its frequency, one that turns fewer than beta_slow times is interpolated by s.
std::vector<double> yarn_keep(int64_t D, double theta, int64_t T0, const YarnRamp& ramp) {
  // d(n): the (fractional) pair index whose frequency turns n times over T0,
  // from T0 theta^(-2i/D) / (2 pi) = n.
  auto pair_turning = [&](double n) {
    return D * std::log(T0 / (2 * M_PI * n)) / (2 * std::log(theta));
  };
  double low = pair_turning(ramp.beta_fast), high = pair_turning(ramp.beta_slow);
  if (ramp.truncate) low = std::floor(low), high = std::ceil(high);  // gpt-oss ships false
  low = std::max(low, 0.0), high = std::min(high, static_cast<double>(D - 1));
  if (low == high) high += 0.001;  // as the reference code: no division by zero
  std::vector<double> keep(D / 2);
  for (int64_t i = 0; i < D / 2; ++i) keep[i] = 1 - std::clamp((i - low) / (high - low), 0.0, 1.0);
  return keep;
}

// The paper's ramp (eq. 17-19), with its alpha = 1 and beta = 32.
std::vector<double> yarn_keep_paper(int64_t D, double theta, int64_t T0) {
  const double alpha = 1, beta = 32;
  std::vector<double> keep = rope_base_frequencies(D, theta);
  for (double& k : keep) {
    double turns = T0 * k / (2 * M_PI);  // r_i
    k = std::clamp((turns - alpha) / (beta - alpha), 0.0, 1.0);
  }
  return keep;
}

std::vector<double> yarn_frequencies(int64_t D, double theta, double s, int64_t T0,
                                     const YarnRamp& ramp) {
  std::vector<double> f = rope_base_frequencies(D, theta), keep = yarn_keep(D, theta, T0, ramp);
  for (size_t i = 0; i < f.size(); ++i) f[i] = keep[i] * f[i] + (1 - keep[i]) * f[i] / s;
  return f;
}

// HF's `get_mscale(scale, mscale)` (DeepSeek's `yarn_get_mscale`): 0.1 m ln s + 1, 1 when s <= 1.
double yarn_get_mscale(double s, double m) {
  return s <= 1 ? 1.0 : 0.1 * m * std::log(s) + 1;
}

// HF's `_compute_yarn_parameters`: `attention_factor`, else `get_mscale(factor, mscale) /
// get_mscale(factor, mscale_all_dim)` when `mscale and mscale_all_dim` (Python truth: a 0 falls
// through), else `get_mscale(factor)`.
double yarn_attention_factor(const RopeScaling& sc, double s) {
  if (sc.attention_factor) return *sc.attention_factor;
  if (sc.mscale.value_or(0) != 0 && sc.mscale_all_dim.value_or(0) != 0)
    return yarn_get_mscale(s, *sc.mscale) / yarn_get_mscale(s, *sc.mscale_all_dim);
  return yarn_get_mscale(s, 1);
}

// Llama 3.1 (Meta's `apply_scaling`, HF's `_compute_llama3_parameters`), with w_i = 2 pi / freq_i:
//   w_i < T0 / hff: freq_i;   w_i > T0 / lff: freq_i / s;
//   else g = (T0 / w_i - lff) / (hff - lff), freq_i' = (1 - g) freq_i / s + g freq_i.
std::vector<double> llama3_frequencies(int64_t D, double theta, double s, int64_t T0, double lff,
                                       double hff) {
  if (!(lff > 0 && hff > lff))
    fail("rope scaling llama3: expected 0 < --low-freq-factor < --high-freq-factor ",
         "(low_freq_factor, high_freq_factor), but got ", lff, " and ", hff);
  std::vector<double> f = rope_base_frequencies(D, theta);
  for (double& fi : f) {
    const double w = 2 * M_PI / fi, g = (T0 / w - lff) / (hff - lff);
    if (w > T0 / lff)
      fi = fi / s;
    else if (w >= T0 / hff)  // medium: HF's ~(w < T0/hff) and ~(w > T0/lff)
      fi = (1 - g) * fi / s + g * fi;
  }
  return f;
}

// LongRoPE (Ding et al. 2024; HF's `_compute_longrope_parameters`): inv_freq = 1 / (e_i
// theta^(2i/D)).
std::vector<double> longrope_frequencies(int64_t D, double theta, const std::vector<double>& e) {
  if (static_cast<int64_t>(e.size()) != D / 2)
    fail("rope scaling longrope: expected D/2 = ", D / 2,
         " rescale factors (one per rotated pair), but got ", e.size());
  std::vector<double> f = rope_base_frequencies(D, theta);
  for (size_t i = 0; i < f.size(); ++i) {
    if (!(e[i] > 0))
      fail("rope scaling longrope: expected rescale factors > 0, but factor ", i, " is ", e[i]);
    f[i] /= e[i];
  }
  return f;
}

// HF: `ext_factors = long_factor if seq_len > original_max_position_embeddings else short_factor`.
std::vector<double> longrope_factors(const RopeScaling& sc, int64_t D, int64_t L) {
  if (sc.long_factor.empty())
    fail("rope scaling longrope: --long-factor (long_factor) is required: ", D / 2,
         " numbers > 0, one per rotated pair");
  if (L > sc.train_len) return sc.long_factor;
  return sc.short_factor.empty() ? std::vector<double>(D / 2, 1.0) : sc.short_factor;
}

// HF: `attention_factor`, else sqrt(1 + ln(factor) / ln(original_max_position_embeddings)), 1
// when factor <= 1 (the LongRoPE paper's choice).
double longrope_attention_factor(const RopeScaling& sc, double s) {
  if (sc.attention_factor) return *sc.attention_factor;
  if (s <= 1) return 1;
  if (sc.train_len <= 1)
    fail("rope scaling longrope: sqrt(1 + ln s / ln T0) needs T0 > 1, but got T0 = ", sc.train_len);
  return std::sqrt(1 + std::log(s) / std::log(static_cast<double>(sc.train_len)));
}

// Linear: positions p / s, or one pair's angle alone divided by s (sc.pair >= 0).
static RopeFrequencies linear_frequencies(int64_t D, double theta, const RopeScaling& sc,
                                          int64_t L) {
  RopeFrequencies r{rope_base_frequencies(D, theta), 1, 1};
  if (sc.pair < 0) {
    r.pos_scale = 1 / rope_scale_factor(sc, L);
    return r;
  }
  if (sc.pair >= D / 2)
    fail("rope scaling: pair ", sc.pair, " out of range: a head rotates ", D / 2, " pairs");
  r.freq[sc.pair] /= rope_scale_factor(sc, L);
  return r;
}

RopeFrequencies rope_frequencies(int64_t D, double theta, const RopeScaling& sc, int64_t L) {
  if (sc.pair >= 0 && sc.kind != ScalingKind::linear)
    fail("rope scaling: one pair alone is interpolated with linear scaling only, but got ",
         scaling_name(sc.kind));
  if (sc.kind == ScalingKind::none) return {rope_base_frequencies(D, theta), 1, 1};
  if (sc.kind == ScalingKind::linear) return linear_frequencies(D, theta, sc, L);
  if (sc.kind == ScalingKind::dynamic)
    fail("rope_frequencies: dynamic scaling has per-row frequencies");
  const double s = rope_scale_factor(sc, L);
  const int64_t T0 = sc.train_len;
  switch (sc.kind) {
    case ScalingKind::ntk:
      return {rope_base_frequencies(D, ntk_theta(theta, D, s)), 1, 1};
    case ScalingKind::yarn:
      return {yarn_frequencies(D, theta, s, T0, sc.ramp), 1, yarn_attention_factor(sc, s)};
    case ScalingKind::llama3:
      return {llama3_frequencies(D, theta, s, T0, sc.low_freq_factor, sc.high_freq_factor), 1, 1};
    case ScalingKind::longrope:
      return {longrope_frequencies(D, theta, longrope_factors(sc, D, L)), 1,
              longrope_attention_factor(sc, s)};
    default:
      fail("rope_frequencies: unknown scaling ", static_cast<int>(sc.kind));
  }
}

// HF's `_compute_dynamic_ntk_parameters` at seq_len = P + 1:
// base' = base (f seq_len / T0 - (f - 1))^(D/(D-2)) once seq_len > T0; before, the plain base.
double dynamic_scale(double f, int64_t P, int64_t T0) {
  return std::max(1.0, f * static_cast<double>(P + 1) / T0 - (f - 1));
}

Tensor dynamic_row_frequencies(int64_t D, int64_t r, double theta, int64_t T0, int64_t q_pos0,
                               int64_t Tq, double f) {
  if (T0 <= 0) fail("rope scaling: the training length T0 is unknown");
  int64_t half = D / 2;
  std::vector<double> w(Tq * half, 0.0);  // pairs from r/2 on: the unrotated dims, w = 0
  for (int64_t i = 0; i < Tq; ++i) {
    double s = dynamic_scale(f > 0 ? f : 1, q_pos0 + i, T0);
    std::vector<double> row = rope_base_frequencies(r, ntk_theta(theta, r, s));
    std::copy(row.begin(), row.end(), w.begin() + i * half);
  }
  return Tensor::from_vector(w, {Tq, half}, DType::f64);
}

}  // namespace poslab
