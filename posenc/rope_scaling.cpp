#include "posenc/rope_scaling.h"

#include <algorithm>
#include <cmath>

namespace poslab {

static const std::vector<std::string>& scaling_names() {
  static const std::vector<std::string> names{"none", "linear", "ntk", "dynamic", "yarn"};
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

// YaRN's two constants: a pair that turns more than kBetaFast times over T0 keeps its
// frequency, one that turns fewer than kBetaSlow times is interpolated by s.
constexpr double kBetaFast = 32, kBetaSlow = 1;

std::vector<double> yarn_keep(int64_t D, double theta, int64_t T0) {
  // d(n): the (fractional) pair index whose frequency turns n times over T0,
  // from T0 theta^(-2i/D) / (2 pi) = n.
  auto pair_turning = [&](double n) {
    return D * std::log(T0 / (2 * M_PI * n)) / (2 * std::log(theta));
  };
  double low = std::max(std::floor(pair_turning(kBetaFast)), 0.0);
  double high = std::min(std::ceil(pair_turning(kBetaSlow)), static_cast<double>(D - 1));
  if (low == high) high += 0.001;  // as the reference code: no division by zero
  std::vector<double> keep(D / 2);
  for (int64_t i = 0; i < D / 2; ++i) keep[i] = 1 - std::clamp((i - low) / (high - low), 0.0, 1.0);
  return keep;
}

std::vector<double> yarn_keep_paper(int64_t D, double theta, int64_t T0) {
  std::vector<double> keep = rope_base_frequencies(D, theta);
  for (double& k : keep) {
    double turns = T0 * k / (2 * M_PI);  // r_i
    k = std::clamp((turns - kBetaSlow) / (kBetaFast - kBetaSlow), 0.0, 1.0);
  }
  return keep;
}

std::vector<double> yarn_frequencies(int64_t D, double theta, double s, int64_t T0) {
  std::vector<double> f = rope_base_frequencies(D, theta), keep = yarn_keep(D, theta, T0);
  for (size_t i = 0; i < f.size(); ++i) f[i] = keep[i] * f[i] + (1 - keep[i]) * f[i] / s;
  return f;
}

double yarn_mscale(double s) {
  return 0.1 * std::log(s) + 1;
}

RopeFrequencies rope_frequencies(int64_t D, double theta, const RopeScaling& sc, int64_t L) {
  RopeFrequencies r;
  if (sc.pair >= 0 && sc.kind != ScalingKind::linear)
    fail("rope scaling: one pair alone is interpolated with linear scaling only, but got ",
         scaling_name(sc.kind));
  switch (sc.kind) {
    case ScalingKind::none:
      r.freq = rope_base_frequencies(D, theta);
      break;
    case ScalingKind::linear:
      r.freq = rope_base_frequencies(D, theta);
      if (sc.pair < 0) {
        r.pos_scale = 1 / rope_scale_factor(sc, L);
      } else {  // one pair interpolated alone: its angle p freq_i / s, the others as trained
        if (sc.pair >= D / 2)
          fail("rope scaling: pair ", sc.pair, " out of range: a head rotates ", D / 2, " pairs");
        r.freq[sc.pair] /= rope_scale_factor(sc, L);
      }
      break;
    case ScalingKind::ntk:
      r.freq = rope_base_frequencies(D, ntk_theta(theta, D, rope_scale_factor(sc, L)));
      break;
    case ScalingKind::yarn: {
      double s = rope_scale_factor(sc, L);
      r.freq = yarn_frequencies(D, theta, s, sc.train_len);
      r.mscale = yarn_mscale(s);
      break;
    }
    case ScalingKind::dynamic:
      fail("rope_frequencies: dynamic scaling has per-row frequencies");
  }
  return r;
}

Tensor dynamic_row_frequencies(int64_t D, int64_t r, double theta, int64_t T0, int64_t q_pos0,
                               int64_t Tq) {
  if (T0 <= 0) fail("rope scaling: the training length T0 is unknown");
  int64_t half = D / 2;
  std::vector<double> w(Tq * half, 0.0);  // pairs from r/2 on: the unrotated dims, w = 0
  for (int64_t i = 0; i < Tq; ++i) {
    double s = std::max(1.0, static_cast<double>(q_pos0 + i + 1) / T0);
    std::vector<double> f = rope_base_frequencies(r, ntk_theta(theta, r, s));
    std::copy(f.begin(), f.end(), w.begin() + i * half);
  }
  return Tensor::from_vector(w, {Tq, half}, DType::f64);
}

}  // namespace poslab
