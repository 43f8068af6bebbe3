// rope.h — Rotary Position Embedding (Su et al., "RoFormer", 2021).
//
// Inside each head (D dims), the first r dims are cut into r/2 pairs; pair i is rotated by the
// angle a = p * freq_i with freq_i = theta^(-2i/r) (theta = 10000 by default):
//
//   x'[lo] = x[lo] cos a - x[hi] sin a              [x'_lo]   [cos a  -sin a] [x_lo]
//   x'[hi] = x[lo] sin a + x[hi] cos a              [x'_hi] = [sin a   cos a] [x_hi]
//
// applied to q and k (not v) at their own positions, before the dot product. Why it encodes
// relative position: a rotation by angle a is orthogonal, R(a)^T R(b) = R(b - a), so
//   (R(m w) q) . (R(n w) k) = q . R((n - m) w) k
// depends on m - n only (test: "RoPE keeps norms, is the identity at position 0, and is
// relative", tests/posenc/test_posenc.cpp).
//
// Which dims form pair i (--rope-layout):
//   interleaved  (lo, hi) = (2i, 2i+1)        the RoFormer paper, GPT-J, Meta's Llama code
//   half         (lo, hi) = (i, i + r/2)      GPT-NeoX, HF Llama's `rotate_half`
// D = 8, r = 8: interleaved rotates (0,1) (2,3) (4,5) (6,7), half rotates (0,4) (1,5) (2,6) (3,7),
// pair i at freq_i in both. They are the same rotation up to a renaming of dims: a half-layout
// model equals an interleaved one whose q and k rows of c_attn (weights and biases) are
// permuted by pi(i) = 2i, pi(i + r/2) = 2i + 1, since q . k sums over all dims in any order
// (test: "RoPE half layout is interleaved with permuted q/k rows", tests/nn). Converting a
// checkpoint between the two conventions permutes those rows; loading one with the other
// layout silently gives a different, worse model.
//
// How many dims (--rope-fraction f in (0, 1]): r = 2 floor(f D / 2) (GPT-NeoX `rotary_pct`);
// dims r..D-1 pass through unchanged, so they carry content only, free of position. The
// frequencies are spread over the r rotated dims (theta^(-2i/r)), and every scaling
// (rope_scaling.h) uses r in place of D. f = 1 (r = D) is the full RoPE above.
//
// p-RoPE (--rope-proportion p in [0, 1]; Barbero et al., "Round and Round We Go! What makes
// Rotary Positional Encodings useful?", 2024; Gemma's rope_proportion): the K = floor(p D / 2)
// fastest pairs keep their frequencies theta^(-2i/D), the other D/2 - K pairs get frequency 0:
// never rotated, they carry no position, only content. Not --rope-fraction: at D = 32, theta
// 1e4, f = 7/16 rotates 14 dims with frequencies spread over them, theta^(-2i/14), so its
// slowest pair turns at 1e4^(-12/14) = 3.7e-4 rad per position (a wavelength of 17,000
// positions), while p = 7/16 keeps pairs 0..6 at theta^(-2i/32): the slowest 1e4^(-12/32) =
// 0.032 rad (a wavelength of 199 < T0 = 256). f keeps slow pairs; p removes them. Scalings
// act on the kept pairs (with r = D); removed pairs stay unrotated, though a scaling's
// amplitude (YaRN's) multiplies their cos like every pair's.
//
// Backward (hand-derived). Per pair, y = R x with R = [[c, -s], [s, c]] constant, so
//   dL/dx = R^T dL/dy = [[c, s], [-s, c]] dy:
//   dx[lo] =  dy[lo] cos a + dy[hi] sin a
//   dx[hi] = -dy[lo] sin a + dy[hi] cos a
// i.e. the inverse rotation: the forward with the sine negated. The unrotated dims are the
// identity, dx = dy. One kernel, one sign (tests: "gradcheck: rope: ...",
// tests/posenc/gradcheck_posenc.cpp). It holds for any cos/sin table, including YaRN's, whose
// entries carry an amplitude (0.1 ln s + 1): R is then a scaled rotation, still R^T dy.
//
// Dynamic scaling hands attention each query row's own frequencies (rope_scaling.h), which
// the attention kernels apply to interleaved pairs: a half-layout head is first permuted
// into the interleaved order (the renaming above), at the cost of a copy of q and k.
#pragma once
#include <string>

#include "posenc/posenc.h"
#include "posenc/rope_scaling.h"

namespace poslab {

// Which dims of a head form rotated pairs (--rope-layout), as above.
enum class RopeLayout { interleaved, half };
RopeLayout parse_rope_layout(const std::string& name);  // error lists the valid names
const char* rope_layout_name(RopeLayout layout);
// r = 2 floor(f D / 2): the rotated dims of a head of D dims under --rope-fraction f.
int64_t rope_rotated_dims(int64_t D, double fraction);

// The differentiable RoPE op. x: (B,T,H,D) with any strides; cos, sin: (T, r/2) tables for
// the T positions of x, or (B, T, r/2) (each sequence its own positions), r <= D the rotated
// dims. Returns a contiguous (B,T,H,D).
Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin,
                   RopeLayout layout = RopeLayout::interleaved);

// cos/sin tables (T, r/2) for positions pos0..pos0+T-1 under `f` (frequencies, position
// scale and amplitude), built in double and returned in dtype.
void rope_tables(const RopeFrequencies& f, int64_t pos0, int64_t T, DType dtype, Tensor* cos,
                 Tensor* sin);
// The same for any list of positions, the tables shaped `shape` + (r/2) (shape's product: the
// number of positions; (B, T) for random positions).
void rope_tables_at(const RopeFrequencies& f, const std::vector<int64_t>& positions,
                    const Shape& shape, DType dtype, Tensor* cos, Tensor* sin);

// x: (B,T,H,D) rotated with rows [row0, row0 + T) of (Tk, r/2) tables, or with (B, T, r/2)
// tables as they are (random positions: whole windows only).
Tensor rope_rotate_rows(const Tensor& x, const Tensor& cos, const Tensor& sin, int64_t row0,
                        RopeLayout layout);

// p-RoPE (--rope-proportion p): K = floor(p D / 2) pairs keep their frequency.
int64_t rope_kept_pairs(int64_t D, double proportion);
// p in [0, 1], and not together with --rope-fraction f < 1. Errors name the flags.
void validate_rope_proportion(double proportion, double fraction);

// RoPE's options, checked here once (by the scheme, and by PosencConfig::validate before a
// model is built): D even, theta > 1, f in (0, 1] rotating at least one pair. Errors name the flag.
void validate_rope(int64_t head_dim, double theta, double fraction);

// What RoPE builds for one forward (RoPE::build), in the model's dtype and on its device, read
// by RoPE alone: the cos/sin tables of the key positions offset + [0, Tk) under the context's
// scaling (the queries' rows are among them), or, with dynamic scaling, each query row's own
// frequencies (no single rotation of the keys serves every row then).
struct RopeTables final : SchemeTables {
  Tensor cos, sin;   // (Tk, r/2), or (Bp, Tk, r/2) under random positions
  Tensor row_freqs;  // dynamic scaling: (Tq, D/2) f64, handed on as AttentionTerms::row_freqs
};

class RoPE final : public PositionalEncoding {
 public:
  RoPE(int64_t head_dim, double theta, RopeLayout layout = RopeLayout::interleaved,
       double fraction = 1, double proportion = 1);
  PeKind kind() const override { return PeKind::rope; }
  // q and k rotated at their positions (the context's tables); with dynamic scaling, q and k
  // as given and each query row's own frequencies (row_freqs), since no single rotation of
  // the keys serves every row. ctx.offset shifts the positions (q row i at offset + q_pos0 + i,
  // key j at offset + j); only without scaling (the evaluation's --position-offset).
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  // x: (B,T,H,D) (q or k) rotated with rows [row0, row0+T) of the context's tables. Not for
  // dynamic scaling.
  Tensor rotate(const Tensor& x, const PositionContext& ctx, int64_t row0) const;
  int64_t head_dim() const { return d_; }
  int64_t rotated_dims() const { return r_; }
  int64_t kept_pairs() const { return kept_; }  // pairs that turn (p-RoPE: fewer than r/2)
  RopeLayout layout() const { return layout_; }
  double theta() const { return theta_; }

 protected:
  // The RopeTables of ctx's positions: a forward rotates q and k of every layer with them, so
  // they are built (and copied to the GPU) once per forward.
  std::shared_ptr<const SchemeTables> build(const PositionContext& ctx, DType dtype,
                                            Device device) const override;

 private:
  int64_t d_, r_;  // D, and r <= D the rotated dims
  int64_t kept_;   // pairs 0..kept-1 turn; the others (p-RoPE) keep frequency 0
  double theta_;
  RopeLayout layout_;
};

// For one rotation on its own (tests): x (B,T,H,D) at positions pos0..pos0+T-1 of a context of
// L >= pos0 + T positions (from which `scaling` picks s), rotated with tables built for it.
Tensor rope_rotate_at(const RoPE& rope, const Tensor& x, int64_t pos0, int64_t L,
                      const RopeScaling& scaling = {});

}  // namespace poslab
