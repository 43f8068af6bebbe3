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
//
// The scalings as deployed today (HF transformers' `modeling_rope_utils.py`, whose formulas
// Meta's, Microsoft's and the YaRN authors' code share; T0 plays
// `original_max_position_embeddings`, s the `factor`). Each is a function below:
//   llama3   Llama 3.1 (Meta's `apply_scaling` in llama/model.py; HF's
//            `_compute_llama3_parameters`): with the wavelength w_i = 2 pi / freq_i and
//            lff = 1, hff = 4 (Llama 3.1's low_freq_factor, high_freq_factor),
//              w_i < T0 / hff: freq_i (fast pairs kept),  w_i > T0 / lff: freq_i / s,
//              else, g = (T0 / w_i - lff) / (hff - lff): freq_i' = (1 - g) freq_i / s + g freq_i.
//            A blend in the number of turns T0 / w_i, like the YaRN paper's. No factor on cos/sin.
//   longrope Phi-3 (Ding et al., 2024, "LongRoPE: Extending LLM Context Window Beyond 2 Million
//            Tokens"; HF's `_compute_longrope_parameters`): one rescale factor per pair, found by
//            a search and shipped in the config, freq_i' = freq_i / e_i, e the long factors for a
//            window longer than T0 (L > T0) and the short ones otherwise; cos and sin times
//            sqrt(1 + ln s / ln T0) (1 when s <= 1) unless an attention factor is given.
//   dynamic  with HF's factor f (`_compute_dynamic_ntk_parameters`): row i uses the ntk rule
//            with s = max(1, f (i+1) / T0 - (f - 1)); f = 1 is the rule above.
//   yarn     the options of the reference code and HF: beta_fast, beta_slow (the 32 and 1
//            above), truncate = false keeping low and high real (gpt-oss), and the factor on
//            cos and sin: attention_factor if given, else DeepSeek's
//            (0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1) if both are given and
//            nonzero, else 0.1 ln s + 1; a computed one is 1 when s <= 1 (yarn_attention_factor).
// At s = 1 every method is plain RoPE (tests: "every scaling at s = 1 equals plain RoPE"), and
// so is longrope's short list of all 1s.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "autograd/ops.h"

namespace poslab {

// The methods above, and none: the positions as trained (--rope-scaling).
enum class ScalingKind { none, linear, ntk, dynamic, yarn, llama3, longrope };
ScalingKind parse_scaling(const std::string& name);  // error lists the valid names
const char* scaling_name(ScalingKind kind);

// YaRN's ramp (yarn_keep): pairs turning more than beta_fast times over T0 keep their
// frequency, those turning fewer than beta_slow times are divided by s; truncate rounds the
// ramp's ends to whole pairs (floor and ceil), as the reference code and HF do by default.
struct YarnRamp {
  double beta_fast = 32, beta_slow = 1;
  bool truncate = true;
};

// One evaluation's scaling, passed with each call (nn/attention.h, Interventions). The options
// of each kind are HF's `rope_scaling` keys; the command line and its checks: train/.
struct RopeScaling {
  ScalingKind kind = ScalingKind::none;
  double factor = 0;      // s; 0: s = max(1, L / train_len). dynamic: HF's f (0: f = 1)
  int64_t train_len = 0;  // T0, the training context length (0: the model's)
  // linear only: >= 0 interpolates this one rotation pair alone (its angle divided by s), the
  // others unchanged: the study's frequency-by-frequency surgery. -1: every pair.
  int64_t pair = -1;
  double low_freq_factor = 1, high_freq_factor = 4;   // llama3: lff, hff
  std::vector<double> short_factor{}, long_factor{};  // longrope: r/2 each; short empty: all 1
  YarnRamp ramp{};                                    // yarn
  std::optional<double> attention_factor{};           // yarn, longrope: the factor on cos, sin
  std::optional<double> mscale{}, mscale_all_dim{};   // yarn (DeepSeek's configs)
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
// the pair index between low = d(beta_fast) and high = d(beta_slow) (rounded out to whole pairs
// when ramp.truncate), and the paper's, linear in r_i (see above).
std::vector<double> yarn_keep(int64_t D, double theta, int64_t T0, const YarnRamp& ramp = {});
std::vector<double> yarn_keep_paper(int64_t D, double theta, int64_t T0);
// freq_i' = keep_i freq_i + (1 - keep_i) freq_i / s with the deployed keep_i.
std::vector<double> yarn_frequencies(int64_t D, double theta, double s, int64_t T0,
                                     const YarnRamp& ramp = {});
double yarn_get_mscale(double s, double m);  // 0.1 m ln s + 1; 1 when s <= 1 (HF's get_mscale)
// YaRN's factor on cos and sin at factor s: sc.attention_factor if given, else the ratio of
// yarn_get_mscale at sc.mscale and sc.mscale_all_dim if both are given and nonzero, else
// yarn_get_mscale(s, 1).
double yarn_attention_factor(const RopeScaling& sc, double s);

// Llama 3.1's frequencies (above): T0 / hff and T0 / lff bound the blended wavelengths.
std::vector<double> llama3_frequencies(int64_t D, double theta, double s, int64_t T0, double lff,
                                       double hff);

// LongRoPE's frequencies freq_i / e_i for the D/2 rescale factors e.
std::vector<double> longrope_frequencies(int64_t D, double theta, const std::vector<double>& e);
// The factors a window of length L uses: sc.long_factor if L > T0, else sc.short_factor (all 1
// when empty). Each list must hold D/2 numbers.
std::vector<double> longrope_factors(const RopeScaling& sc, int64_t D, int64_t L);
// The factor on cos and sin: sc.attention_factor if given, else sqrt(1 + ln s / ln T0), 1 when
// s <= 1.
double longrope_attention_factor(const RopeScaling& sc, double s);

// Frequencies for a context of length L under `sc` (not for dynamic: see below), for all D/2
// pairs.
RopeFrequencies rope_frequencies(int64_t D, double theta, const RopeScaling& sc, int64_t L);

// Dynamic scaling's factor for the query at position P, with HF's factor f:
// s = max(1, f (P+1) / T0 - (f - 1)); f = 1 gives max(1, (P+1) / T0).
double dynamic_scale(double f, int64_t P, int64_t T0);
// Dynamic scaling's frequencies, one row per query: (Tq, D/2) f64 on the CPU, for q and k in
// the interleaved layout (rope.h: a half-layout head is permuted into it first). Row i (query
// position P = q_pos0 + i) holds w[i, p] = theta'^(-2p/r) for the r/2 rotated pairs, with
// theta' = ntk_theta(theta, r, s) and s = dynamic_scale(f, P, T0): the frequencies query i and
// every key j <= P are rotated with; w[i, p] = 0 for p >= r/2 (dims r..D-1: a rotation by 0).
// f is HF's factor, 0 meaning 1 (RopeScaling::factor).
Tensor dynamic_row_frequencies(int64_t D, int64_t r, double theta, int64_t T0, int64_t q_pos0,
                               int64_t Tq, double f = 1);

}  // namespace poslab
