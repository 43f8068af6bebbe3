#include "nn/attention.h"

namespace poslab {

CausalSelfAttention::CausalSelfAttention(int64_t C, int64_t H, bool causal_, Generator& gen,
                                         double proj_std, DType dtype)
    : c_attn(C, 3 * C, gen, 0.02, dtype),
      c_proj(C, C, gen, proj_std, dtype),
      n_head(H),
      causal(causal_) {
  if (H <= 0 || C % H != 0)
    fail("attention: expected heads dividing the width, but got C = ", C, " and H = ", H);
}

AttentionOptions CausalSelfAttention::options(const AttentionTerms& terms, int64_t q_pos0,
                                              const Interventions& iv) const {
  AttentionOptions o;
  o.causal = causal;
  o.q_pos0 = q_pos0;
  o.rel_bias = terms.rel_bias;
  o.bias = terms.bias;
  o.bias_rows = terms.bias_rows;
  o.row_freqs = terms.row_freqs;
  o.window = iv.attention_window;
  o.log_scale_len = iv.log_scale ? iv.train_len : 0;
  return o;
}

// q: (B,Tq,H,D) at positions at.q_pos0..; k, v: (B,Tk,H,D) at positions 0..Tk-1, before the
// scheme has acted.
Tensor CausalSelfAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const PositionalEncoding& pe, const PositionContext& at) const {
  AttentionTerms t = pe.attention_terms(q, k, causal, at);
  return attention(t.q, t.k, v, options(t, at.q_pos0));
}

Tensor CausalSelfAttention::forward(const Tensor& x, const PositionalEncoding& pe,
                                    const PositionContext& at, const Interventions& iv) const {
  int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = n_head, D = C / H;
  Tensor qkv = c_attn.forward(x);  // (B,T,3C)
  // views of qkv's column blocks; in the backward each slice adds its gradient into its block
  // of qkv's one gradient buffer (autograd/shape.cpp: slice)
  Tensor q = reshape(slice(qkv, 2, 0, C), {B, T, H, D});
  Tensor k = reshape(slice(qkv, 2, C, 2 * C), {B, T, H, D});
  Tensor v = reshape(slice(qkv, 2, 2 * C, 3 * C), {B, T, H, D});
  AttentionTerms t = pe.attention_terms(q, k, causal, at);
  Tensor y = attention(t.q, t.k, v, options(t, 0, iv));  // (B,T,H,D)
  return c_proj.forward(reshape(y, {B, T, C}));
}

Tensor CausalSelfAttention::probabilities(const Tensor& x, const PositionalEncoding& pe,
                                          const PositionContext& at) const {
  int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = n_head, D = C / H;
  Tensor qkv = c_attn.forward(x);
  Tensor q = qkv.slice(2, 0, C).reshape({B, T, H, D}),
         k = qkv.slice(2, C, 2 * C).reshape({B, T, H, D});
  AttentionTerms t = pe.attention_terms(q, k, causal, at);
  return attention_probs_reference(t.q, t.k, options(t, 0));
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, const PositionalEncoding& pe,
                                           const PositionContext& at, LayerCache& cache) const {
  int64_t T = x.size(1), C = x.size(2), H = n_head, D = C / H;
  if (x.size(0) != 1)
    fail("attention: cached decoding expects batch 1, but got ", shape_str(x.shape()));
  if (cache.len + T > cache.k.size(1))
    fail("attention: the KV cache holds ", cache.k.size(1), " positions, but ", cache.len + T,
         " are needed");
  Tensor qkv = c_attn.forward(x);
  Tensor q = qkv.slice(2, 0, C).reshape({1, T, H, D});
  cache.k.slice(1, cache.len, cache.len + T).copy_(qkv.slice(2, C, 2 * C).reshape({1, T, H, D}));
  cache.v.slice(1, cache.len, cache.len + T)
      .copy_(qkv.slice(2, 2 * C, 3 * C).reshape({1, T, H, D}));
  if (at.q_pos0 != cache.len || at.Tq != T)
    fail("attention: expected a context of the ", T, " positions after the cache's ", cache.len,
         ", but got q_pos0 = ", at.q_pos0, " and Tq = ", at.Tq);
  cache.len += T;
  // keys are cached before RoPE and rotated here for the current length (exact for dynamic)
  Tensor y = attend(q, cache.k.slice(1, 0, cache.len), cache.v.slice(1, 0, cache.len), pe, at);
  return c_proj.forward(y.reshape({1, T, C}));
}

}  // namespace poslab
