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
//   yarn     YaRN as deployed: the YaRN authors' reference code (jquesnelle/yarn), which
//            HF transformers' `_compute_yarn_parameters`, vLLM and DeepSeek's inference code
//            follow, so a model's `rope_scaling` config means the same here as there. Pair i
//            turns r_i = T0 freq_i / (2 pi) times over T0. The pair index at which a pair
//            turns n times is d(n) = r ln(T0 / (2 pi n)) / (2 ln theta) (solve r_i = n for i);
//            with beta_fast = 32 and beta_slow = 1,
//              low  = max(floor(d(32)), 0),  high = min(ceil(d(1)), r - 1)  (+0.001 if equal),
//              ramp_i = clamp((i - low) / (high - low), 0, 1),  keep_i = 1 - ramp_i,
//              freq_i' = keep_i freq_i + (1 - keep_i) freq_i / s:
//            fast pairs (i <= low) keep their frequency, slow pairs (i >= high) are divided by
//            s, and between them the share kept falls linearly in the pair index i (so
//            linearly in ln r_i). Attention logits are multiplied by (0.1 ln s + 1)^2,
//            applied as 0.1 ln s + 1 on both cos and sin.
//            The paper (Peng et al., 2023, "YaRN: Efficient Context Window Extension of Large
//            Language Models", eq. 17-19) writes the ramp linear in r_i instead:
//            gamma_i = clamp((r_i - 1) / (32 - 1), 0, 1) and keep_i = gamma_i
//            (yarn_keep_paper below). The two agree at both ends and differ between: at head
//            dims 32, T0 256, theta 1e4 the deployed ramp keeps 1 - i/7 of pairs 0..7, the
//            paper's [1, .71, .38, .20, .10, .04, .01, 0]. The code computes the deployed one.
// At s = 1 every method is plain RoPE (tests: "every scaling at s = 1 equals plain RoPE").
#pragma once
#include <string>
#include <vector>

#include "autograd/ops.h"

namespace poslab {

// The methods above, and none: the positions as trained (--rope-scaling).
enum class ScalingKind { none, linear, ntk, dynamic, yarn };
ScalingKind parse_scaling(const std::string& name);  // error lists the valid names
const char* scaling_name(ScalingKind kind);

// One evaluation's scaling, passed with each call (nn/attention.h, Interventions).
struct RopeScaling {
  ScalingKind kind = ScalingKind::none;
  double factor = 0;      // 0: s = max(1, L / train_len) for a window of length L
  int64_t train_len = 0;  // T0, the training context length (0: the model's)
  // linear only: >= 0 interpolates this one rotation pair alone (its angle divided by s), the
  // others unchanged: the study's frequency-by-frequency surgery. -1: every pair.
  int64_t pair = -1;
};

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
// YaRN's share keep_i of pair i's original frequency (r/2 values): the deployed ramp, linear in
// the pair index, and the paper's, linear in r_i (see above).
std::vector<double> yarn_keep(int64_t D, double theta, int64_t T0);
std::vector<double> yarn_keep_paper(int64_t D, double theta, int64_t T0);
// freq_i' = keep_i freq_i + (1 - keep_i) freq_i / s with the deployed keep_i.
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
