// attention_op.cu — the fused causal attention on the GPU, FlashAttention-2 style
// (Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism and Work
// Partitioning", arXiv:2307.08691). Semantics: nn/attention_op.h; the CPU op and its
// derivation: nn/attention_op.cpp; the tiles and the online softmax: tensor/attention_tile.cuh.
//
//   q: (B,Tq,H,D)  k, v: (B,Tk,H,D)  ->  out: (B,Tq,H,D)
//   S_ij = scale q_i . k_j + bias_ij      bias_ij = -m_h (|P_i - j| - dmin_i) (ALiBi), else 0
//   S_ij = -inf where j > P_i (causal)    P_i = q_pos0 + i
//   P = softmax_j(S);   out_i = sum_j P_ij v_j
// dmin_i is the distance from P_i to its nearest visible key: the CPU shifts each row's bias
// by that constant (softmax is unchanged by it) so that positions in the millions stay exact;
// so do we.
//
// Forward: one thread per query row, key/value tiles shared by the block, the online softmax.
// Saved for the backward: out and lse_i = log2 sum_j 2^(S_ij log2 e), (B,H,Tq) — not P.
// Backward, recomputing P_ij = 2^(S_ij log2 e - lse_i) tile by tile:
//   delta_i = sum_d dout_i,d out_i,d          (= sum_j P_ij dP_ij)
//   dP_ij = dout_i . v_j;   dS_ij = P_ij (dP_ij - delta_i)
//   dq_i = scale sum_j dS_ij k_j              one thread per query row (dq kernel)
//   dk_j = scale sum_i dS_ij q_i,  dv_j = sum_i P_ij dout_i     one thread per key row (dkv)
// Two passes instead of FlashAttention-2's atomic adds into dq: no atomics, so the gradients
// are the same bits on every run.
//
// The kernels run in f32 (f64 attention, for gradient checks, runs on the CPU) for head dims
// D <= 128, specialised for D <= 32, 64, 128 (registers hold a row of q, k, v and their
// gradients; D is padded with zeros up to the specialisation).
#include <cmath>

#include "nn/attention_op.h"
#include "tensor/attention_tile.cuh"
#include "tensor/cuda_ops.h"

namespace poslab::kernel::cuda {
namespace {

using gpu::dot;
using gpu::RowTile;

constexpr int kRows = 64;  // query (or key) rows per block: one per thread

struct Dims {
  int64_t B, Tq, Tk, H;
  int D;
  int64_t q[3], k[3], v[3];  // strides (batch, time, head) of q, k, v; unit stride along D
  float scale2;              // scale * log2 e: scores in log2 units
  float scale;
  bool causal;
  int64_t q_pos0;
};

// Keys 0 .. visible-1 are seen by query row i (none when visible <= 0).
__device__ __forceinline__ int64_t visible_keys(const Dims& a, int64_t i) {
  return a.causal ? ::min(a.q_pos0 + i + 1, a.Tk) : a.Tk;
}

// The ALiBi bias of (query i, key j) in log2 units: -m (|P - j| - dmin) with slope2 = m log2 e.
__device__ __forceinline__ float alibi2(float slope2, int64_t P, int64_t j, int64_t visible) {
  int64_t nearest = ::max(int64_t(0), ::min(P, visible - 1));
  int64_t dmin = P > nearest ? P - nearest : nearest - P, dist = P > j ? P - j : j - P;
  return -slope2 * static_cast<float>(dist - dmin);
}

template <int kMaxD>
__device__ __forceinline__ void load_row(float* dst, const float* src, int D, float scale) {
#pragma unroll
  for (int d = 0; d < kMaxD; ++d) dst[d] = d < D ? src[d] * scale : 0.f;
}

// Query row r's score with key j in log2 units: q (pre-scaled by scale log2 e) . k_j + bias.
template <int kMaxD>
__device__ __forceinline__ float score2(const float* q, const float* k, const Dims& a,
                                        const float* slopes2, const gpu::QueryRow& r, int64_t j) {
  float s = dot<float, kMaxD>(q, k);
  return slopes2 ? s + alibi2(slopes2[r.h], r.P, j, r.visible) : s;
}

// Grid (ceil(Tq/kRows), B*H). out: (B,Tq,H,D) contiguous; lse2: (B,H,Tq) or null.
template <int kMaxD, int kCols>
__global__ void __launch_bounds__(kRows)
    forward_kernel(Dims a, const float* Q, const float* K, const float* V, const float* slopes2,
                   float* out, float* lse2) {
  __shared__ RowTile<float, kCols, kMaxD> kt, vt;
  gpu::QueryRow r = gpu::query_row(a.H, a.Tq, a.Tk, a.q_pos0, a.causal);
  float q[kMaxD];
  if (r.active) load_row<kMaxD>(q, Q + r.b * a.q[0] + r.i * a.q[1] + r.h * a.q[2], a.D, a.scale2);
  gpu::OnlineSoftmax<float, kMaxD> row;
  gpu::for_each_visible_key(
      kt, vt, K + r.b * a.k[0] + r.h * a.k[2], a.k[1], V + r.b * a.v[0] + r.h * a.v[2], a.v[1],
      a.Tk, a.D, r,
      [&](int c, int64_t j) { row.add(score2<kMaxD>(q, kt.x[c], a, slopes2, r, j), vt.x[c]); });
  if (!r.active) return;
  float lse = row.finish(out + ((r.b * a.Tq + r.i) * a.H + r.h) * a.D, a.D);
  if (lse2) lse2[r.bh * a.Tq + r.i] = lse;
}

// dq, and delta for the dkv kernel. Grid (ceil(Tq/kRows), B*H). dout, out, dq: contiguous.
template <int kMaxD, int kCols>
__global__ void __launch_bounds__(kRows)
    dq_kernel(Dims a, const float* Q, const float* K, const float* V, const float* slopes2,
              const float* out, const float* lse2, const float* dout, float* dq, float* delta) {
  __shared__ RowTile<float, kCols, kMaxD> kt, vt;
  gpu::QueryRow r = gpu::query_row(a.H, a.Tq, a.Tk, a.q_pos0, a.causal);
  int64_t row_at = ((r.b * a.Tq + r.i) * a.H + r.h) * a.D;
  float q[kMaxD], go[kMaxD], g[kMaxD] = {}, lse = 0, dlt = 0;
  if (r.active) {
    float o[kMaxD];
    load_row<kMaxD>(q, Q + r.b * a.q[0] + r.i * a.q[1] + r.h * a.q[2], a.D, a.scale2);
    load_row<kMaxD>(go, dout + row_at, a.D, 1.f);
    load_row<kMaxD>(o, out + row_at, a.D, 1.f);
    dlt = dot<float, kMaxD>(go, o);
    lse = lse2[r.bh * a.Tq + r.i];
    delta[r.bh * a.Tq + r.i] = dlt;
  }
  gpu::for_each_visible_key(kt, vt, K + r.b * a.k[0] + r.h * a.k[2], a.k[1],
                            V + r.b * a.v[0] + r.h * a.v[2], a.v[1], a.Tk, a.D, r,
                            [&](int c, int64_t j) {
                              float p = exp2f(score2<kMaxD>(q, kt.x[c], a, slopes2, r, j) - lse);
                              float ds = p * (dot<float, kMaxD>(go, vt.x[c]) - dlt);
#pragma unroll
                              for (int d = 0; d < kMaxD; ++d) g[d] += ds * kt.x[c][d];
                            });
  if (!r.active) return;
#pragma unroll
  for (int d = 0; d < kMaxD; ++d)
    if (d < a.D) dq[row_at + d] = g[d] * a.scale;
}

// dk, dv. Grid (ceil(Tk/kRows), B*H). dout, dk, dv: contiguous.
template <int kMaxD, int kCols>
__global__ void __launch_bounds__(kRows)
    dkv_kernel(Dims a, const float* Q, const float* K, const float* V, const float* slopes2,
               const float* lse2, const float* delta, const float* dout, float* dk, float* dv) {
  __shared__ RowTile<float, kCols, kMaxD> qt, ot;
  __shared__ float lse_t[kCols], delta_t[kCols];
  int64_t bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  int64_t j = int64_t(blockIdx.x) * kRows + threadIdx.x, first = int64_t(blockIdx.x) * kRows;
  float slope2 = slopes2 ? slopes2[h] : 0.f;
  float k[kMaxD], v[kMaxD], gk[kMaxD] = {}, gv[kMaxD] = {};
  if (j < a.Tk) {
    load_row<kMaxD>(k, K + b * a.k[0] + j * a.k[1] + h * a.k[2], a.D, 1.f);
    load_row<kMaxD>(v, V + b * a.v[0] + j * a.v[1] + h * a.v[2], a.D, 1.f);
  }
  // the first query row that sees this block's first key (causal: P_i >= first)
  int64_t i_start = a.causal ? ::max(int64_t(0), first - a.q_pos0) : 0;
  const float* Qh = Q + b * a.q[0] + h * a.q[2];
  const float* Oh = dout + b * a.Tq * a.H * a.D + h * a.D;
  for (int64_t i0 = i_start; i0 < a.Tq; i0 += kCols) {
    __syncthreads();
    gpu::load_rows(qt, Qh, a.q[1], i0, a.Tq, a.D);
    gpu::load_rows(ot, Oh, a.H * a.D, i0, a.Tq, a.D);
    for (int c = threadIdx.x; c < kCols; c += blockDim.x) {
      bool in = i0 + c < a.Tq;
      lse_t[c] = in ? lse2[bh * a.Tq + i0 + c] : 0.f;
      delta_t[c] = in ? delta[bh * a.Tq + i0 + c] : 0.f;
    }
    __syncthreads();
    if (j >= a.Tk) continue;
#pragma unroll 1
    for (int c = 0; c < kCols; ++c) {
      int64_t i = i0 + c, P = a.q_pos0 + i;
      if (i >= a.Tq) break;
      if (a.causal && j > P) continue;  // masked: P_ij = 0
      float s = dot<float, kMaxD>(qt.x[c], k) * a.scale2;
      if (slopes2) s += alibi2(slope2, P, j, visible_keys(a, i));
      float p = exp2f(s - lse_t[c]), ds = p * (dot<float, kMaxD>(ot.x[c], v) - delta_t[c]);
#pragma unroll
      for (int d = 0; d < kMaxD; ++d) {
        gv[d] += p * ot.x[c][d];
        gk[d] += ds * qt.x[c][d];
      }
    }
  }
  if (j >= a.Tk) return;
  int64_t row_at = ((b * a.Tk + j) * a.H + h) * a.D;
#pragma unroll
  for (int d = 0; d < kMaxD; ++d)
    if (d < a.D) dk[row_at + d] = gk[d] * a.scale, dv[row_at + d] = gv[d];
}

// Runs f.template operator()<kMaxD, kCols>() for the smallest specialisation that holds D.
template <class F>
void with_head_dim(int D, F&& f) {
  if (D <= 32) return f.template operator()<32, 32>();
  if (D <= 64) return f.template operator()<64, 32>();
  return f.template operator()<128, 16>();
}

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& o) {
  Dims a{};
  a.B = q.size(0), a.Tq = q.size(1), a.Tk = k.size(1), a.H = q.size(2);
  a.D = static_cast<int>(q.size(3));
  for (int s = 0; s < 3; ++s)
    a.q[s] = q.strides()[s], a.k[s] = k.strides()[s], a.v[s] = v.strides()[s];
  a.scale = static_cast<float>(o.scale);
  a.scale2 = static_cast<float>(o.scale * gpu::kLog2e);
  a.causal = o.causal;
  a.q_pos0 = o.q_pos0;
  return a;
}

Tensor unit_stride_rows(const Tensor& x) {
  return x.strides()[3] == 1 ? x : x.contiguous();
}

}  // namespace

Tensor attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                 const AttentionArgs& o) {
  if (q_in.dtype() != DType::f32)
    fail("attention: the CUDA kernels run in f32, but got ", dtype_name(q_in.dtype()), " q ",
         shape_str(q_in.shape()), " on cuda (f64 gradient checks run on the cpu)");
  int64_t B = q_in.size(0), Tq = q_in.size(1), H = q_in.size(2), D = q_in.size(3);
  if (D > 128)
    fail("attention: the CUDA kernels take head dims D <= 128, but got q ",
         shape_str(q_in.shape()));
  if (B * H > 65535)
    fail("attention: the CUDA grid takes B*H <= 65535, but got q ", shape_str(q_in.shape()));
  Tensor q = unit_stride_rows(q_in), k = unit_stride_rows(k_in), v = unit_stride_rows(v_in);
  Dims a = dims_of(q, k, v, o);
  // slopes in log2 units (m log2 e), one per head, on the device
  std::vector<float> s2;
  for (double m : o.alibi_slopes) s2.push_back(static_cast<float>(m * gpu::kLog2e));
  auto slopes = std::make_shared<gpu::DeviceArray<float>>(gpu::to_device(s2));
  const float* sp = s2.empty() ? nullptr : slopes->data();
  bool grad = any_requires_grad({&q_in, &k_in, &v_in});
  Tensor out = Tensor::empty({B, Tq, H, D}, DType::f32, Device::cuda);
  Tensor lse = grad ? Tensor::empty({B, H, Tq}, DType::f32, Device::cuda) : Tensor();
  if (out.numel() > 0)
    with_head_dim(a.D, [&]<int kMaxD, int kCols>() {
      dim3 grid((Tq + kRows - 1) / kRows, B * H);
      forward_kernel<kMaxD, kCols><<<grid, kRows, 0, gpu::stream()>>>(
          a, q.data<float>(), k.data<float>(), v.data<float>(), sp, out.data<float>(),
          grad ? lse.data<float>() : nullptr);
    });
  gpu::check_launch("attention");
  Tensor sq = q.detach(), sk = k.detach(), sv = v.detach(), so = out.detach();
  return record(
      "attention", out, {&q_in, &k_in, &v_in},
      [sq, sk, sv, so, lse, slopes, sp, a](const Tensor& dy) {
        Tensor dout = dy.contiguous();
        Tensor dq = Tensor::empty(sq.shape(), DType::f32, Device::cuda),
               dk = Tensor::empty(sk.shape(), DType::f32, Device::cuda),
               dv = Tensor::empty(sv.shape(), DType::f32, Device::cuda);
        Tensor delta = Tensor::empty({a.B, a.H, a.Tq}, DType::f32, Device::cuda);
        if (a.Tq == 0 || a.Tk == 0) {  // nothing attends: zero gradients
          for (Tensor* g : {&dq, &dk, &dv}) g->fill_(0);
          return std::vector<Tensor>{dq, dk, dv};
        }
        with_head_dim(a.D, [&]<int kMaxD, int kCols>() {
          dim3 gq((a.Tq + kRows - 1) / kRows, a.B * a.H);
          dim3 gk((a.Tk + kRows - 1) / kRows, a.B * a.H);
          dq_kernel<kMaxD, kCols><<<gq, kRows, 0, gpu::stream()>>>(
              a, sq.data<float>(), sk.data<float>(), sv.data<float>(), sp, so.data<float>(),
              lse.data<float>(), dout.data<float>(), dq.data<float>(), delta.data<float>());
          dkv_kernel<kMaxD, kCols><<<gk, kRows, 0, gpu::stream()>>>(
              a, sq.data<float>(), sk.data<float>(), sv.data<float>(), sp, lse.data<float>(),
              delta.data<float>(), dout.data<float>(), dk.data<float>(), dv.data<float>());
        });
        gpu::check_launch("attention backward");
        return std::vector<Tensor>{dq, dk, dv};
      });
}

}  // namespace poslab::kernel::cuda
