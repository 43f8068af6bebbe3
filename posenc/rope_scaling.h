// rope_scaling.h — stretching RoPE past its training length T0, zero-shot (docs/model.md).
//
// A window of length L > T0 asks for angles p * freq_i that training never produced. Each
// method reshapes the frequencies (or positions) with a factor s = max(1, L / T0), unless
// --factor fixes s. Here D stands for r, the rotated dims of a head (= D unless
// --rope-fraction < 1; rope.h): with freq_i = theta^(-2i/r), i = 0..r/2-1:
//
//   linear   Position Interpolation (Chen et al., 2023, "Extending Context Window of Large
//            Language Models via Positional Interpolation"): use p / s in place of p.
//   ntk      "NTK-aware" scaling (bloc97, 2023; as in YaRN paper section 3.1):
//            theta' = theta * s^(r / (r - 2)). High frequencies barely change, the lowest
//            one is divided by exactly s.
//   dynamic  dynamic NTK: the prediction at position i is made with s = max(1, (i+1)/T0)
//            and the ntk rule, for the query and every key j <= i. Rows i < T0 equal plain
//            RoPE. This is what decoding with a cache of un-rotated keys gives, so the
//            whole-window evaluation equals token-by-token decoding. No single rotation of
//            the keys serves every row, so the scheme hands attention each row's own
//            frequencies (dynamic_row_frequencies) and the attention kernels rotate each key
//            relative to its query: (R(P w) q) . (R(j w) k) = q . R((j - P) w) k.
//   yarn     YaRN (Peng et al., 2023, "YaRN: Efficient Context Window Extension", eq. 15-20):
//            wavelength lambda_i = 2 pi / freq_i, r_i = T0 / lambda_i,
//            gamma_i = clamp((r_i - alpha) / (beta - alpha), 0, 1), alpha = 1, beta = 32,
//            freq_i' = (1 - gamma_i) freq_i / s + gamma_i freq_i   (interpolate only the
//            dims that complete less than alpha turns in T0), and logits scaled by
//            (0.1 ln s + 1)^2, applied as 0.1 ln s + 1 on both cos and sin. The ramp is the
//            paper's continuous one (HF rounds its ends to whole dims; we do not).
// At s = 1 every method is plain RoPE (tests: "every scaling at s = 1 equals plain RoPE").
#pragma once
#include <vector>

#include "posenc/posenc.h"

namespace poslab {

// What a cos/sin table needs: angle = (p * pos_scale) * freq[i], amplitude mscale.
// The functions below take r, the rotated dims, as their D (the last takes both).
struct RopeFrequencies {
  std::vector<double> freq;  // r/2
  double pos_scale = 1;
  double mscale = 1;
};

std::vector<double> rope_base_frequencies(int64_t D, double theta);  // theta^(-2i/D)
double rope_scale_factor(const RopeScaling& sc, int64_t L);          // s
double ntk_theta(double theta, int64_t D, double s);                 // theta s^(D/(D-2))
std::vector<double> yarn_frequencies(int64_t D, double theta, double s, int64_t T0);
double yarn_mscale(double s);  // 0.1 ln s + 1
// Frequencies for a context of length L under `sc` (not for dynamic: see below).
RopeFrequencies rope_frequencies(int64_t D, double theta, const RopeScaling& sc, int64_t L);

// Dynamic scaling's frequencies, one row per query: (Tq, D/2) f64 on the CPU, for q and k in
// the interleaved layout (rope.h: a half-layout head is permuted into it first). Row i (query
// position P = q_pos0 + i) holds w[i, p] = theta'^(-2p/r) for the r/2 rotated pairs, with
// theta' = ntk_theta(theta, r, s) and s = max(1, (P+1)/T0): the frequencies query i and every key
// j <= P are rotated with; w[i, p] = 0 for p >= r/2 (dims r..D-1: a rotation by 0).
Tensor dynamic_row_frequencies(int64_t D, int64_t r, double theta, int64_t T0, int64_t q_pos0,
                               int64_t Tq);

}  // namespace poslab
