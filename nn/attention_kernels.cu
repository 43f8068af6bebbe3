// attention_kernels.cu — the fused attention on the GPU, FlashAttention-2 style (Dao 2023,
// "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
// arXiv:2307.08691). Semantics: nn/attention_op.h; the CPU kernels and the derivation of the
// backward: nn/attention_kernels.cpp; the tiles and the online softmax: attention_tile.cuh.
//
//   q: (B,Tq,H,D)  k, v: (B,Tk,H,D)  ->  out: (B,Tq,H,D)
//   S_ij = scale q_i . k_j + bias[h, j - i + Tq - 1]     (bias: the scheme's table, or 0)
//     or, with per-row frequencies w (row_freqs), S_ij = scale q_i . R((j - P_i) w_i) k_j
//   S_ij = -inf where j > P_i (causal) or |P_i - j| >= W (window W > 0)    P_i = q_pos0 + i
//   S_ij *= lambda_i = max(1, ln n_i / ln T0)   (log scale T0 > 0; n_i: the keys row i sees)
//   P = softmax_j(S);   out_i = sum_j P_ij v_j
//
// Forward: kSplit threads per query row (each takes every kSplit-th key, then they merge),
// key/value tiles shared by the block, the online softmax; grid (B*H, row blocks), the longest
// blocks first (query_row).
// Saved for the backward: out and lse_i = log2 sum_j 2^(S_ij log2 e), (B,H,Tq) — not P.
// Backward, recomputing P_ij = 2^(S_ij log2 e - lse_i) tile by tile:
//   delta_i = sum_d dout_i,d out_i,d          (= sum_j P_ij dP_ij)
//   dP_ij = dout_i . v_j;   dS_ij = lambda_i P_ij (dP_ij - delta_i)
//   dq_i = scale sum_j dS_ij k_j              kSplit threads per query row (dq kernel)
//   dk_j = scale sum_i dS_ij q_i,  dv_j = sum_i P_ij dout_i     one thread per key row (dkv)
//   dbias[h, c] = sum_b sum_{j - i + Tq - 1 = c} dS_ij     summed along the diagonals of each
//                                                            dkv tile, then over tiles (dbias)
// Separate passes instead of FlashAttention-2's atomic adds into dq: no atomics, so the
// gradients are the same bits on every run.
//
// The kernels run in f32 (f64 attention, for gradient checks, runs on the CPU) for head dims
// D <= 128, specialised for D <= 32, 64, 128 (registers hold a row of q, k, v and their
// gradients; D is padded with zeros up to the specialisation).
#include <algorithm>
#include <cmath>

#include "nn/attention_kernels.h"
#include "nn/attention_tile.cuh"

namespace poslab::kernel::cuda {
namespace {

using gpu::dot;
using gpu::RowTile;

// Threads per block: kRows / kSplit query rows of kSplit threads each (forward, dq), or kRows
// key rows of one thread each (dkv). Splitting a row keeps the block at 64 threads, so a block
// holds as many registers as with one thread per row and as many blocks fit on an SM, while a
// grid has kSplit times the blocks (more warps where a batch is small: one long window).
constexpr int kRows = 64;

struct Dims {
  int64_t B, Tq, Tk, H;
  int D;
  int64_t q[3], k[3], v[3];  // strides (batch, time, head) of q, k, v; unit stride along D
  float scale2;              // scale * log2 e: scores in log2 units
  float scale;
  gpu::KeyMask mask;      // causal, q_pos0, window: which keys each row sees
  int64_t log_scale_len;  // T0 of the log scale, or 0
  const float* bias;      // (H, Tq+Tk-1) in natural units, or null
  const double* freqs;    // (Tq, D/2) per-row rotation frequencies, or null
};

// lambda_i of a row that sees the keys s: max(1, ln n / ln T0), in double as on the CPU; 1
// without a log scale. Multiplying by 1 changes no bit, so rows are always multiplied.
__device__ __forceinline__ float row_lambda(const Dims& a, gpu::KeySpan s) {
  int64_t n = s.hi - s.lo;
  if (a.log_scale_len <= 0 || n <= a.log_scale_len) return 1.f;
  return static_cast<float>(::log(double(n)) / ::log(double(a.log_scale_len)));
}

// The bias of (query row i, key j) of head h in log2 units; 0 without a table.
__device__ __forceinline__ float bias2(const Dims& a, int64_t h, int64_t i, int64_t j) {
  if (!a.bias) return 0.f;
  return a.bias[h * (a.Tq + a.Tk - 1) + (j - i + a.Tq - 1)] * static_cast<float>(gpu::kLog2e);
}

template <int kMaxD>
__device__ __forceinline__ void load_row(float* dst, const float* src, int D, float scale) {
#pragma unroll
  for (int d = 0; d < kMaxD; ++d) dst[d] = d < D ? src[d] * scale : 0.f;
}

// q . R(delta w) k over the pairs (2p, 2p+1): key k rotated by the relative angle delta w_p,
// computed in double and reduced to [-pi, pi] before a float sincos.
template <int kMaxD>
__device__ __forceinline__ float rotary_dot(const float* q, const float* k, const double* w,
                                            double delta) {
  constexpr double kTwoPi = 6.283185307179586;
  float s = 0;
#pragma unroll
  for (int p = 0; p < kMaxD / 2; ++p) {
    double ang = delta * w[p];
    ang -= kTwoPi * rint(ang / kTwoPi);
    float sn, cs;
    sincosf(static_cast<float>(ang), &sn, &cs);
    float k0 = k[2 * p], k1 = k[2 * p + 1];
    s += q[2 * p] * (k0 * cs - k1 * sn) + q[2 * p + 1] * (k0 * sn + k1 * cs);
  }
  return s;
}

// Grid (B*H, ceil(Tq / (kRows / kSplit))), kRows threads. out: (B,Tq,H,D) contiguous; lse2:
// (B,H,Tq) or null. With kRotary, q is kept unscaled and each score is rotary_dot with the
// row's frequencies.
template <int kMaxD, int kCols, int kSplit, bool kRotary>
__global__ void __launch_bounds__(kRows) forward_kernel(Dims a, const float* Q, const float* K,
                                                        const float* V, float* out, float* lse2) {
  __shared__ RowTile<float, kCols, kMaxD> kt, vt;
  gpu::QueryRow r = gpu::query_row<kSplit>(a.H, a.Tq, a.mask);
  const float lambda = row_lambda(a, r.keys);
  float q[kMaxD];
  double w[kRotary ? kMaxD / 2 : 1] = {};
  if (r.active) {
    load_row<kMaxD>(q, Q + r.b * a.q[0] + r.i * a.q[1] + r.h * a.q[2], a.D,
                    kRotary ? 1.f : a.scale2);
    if constexpr (kRotary)
      for (int p = 0; 2 * p < a.D; ++p) w[p] = a.freqs[r.i * (a.D / 2) + p];
  }
  gpu::OnlineSoftmax<float, kMaxD> row;
  gpu::for_each_visible_key(kt, vt, K + r.b * a.k[0] + r.h * a.k[2], a.k[1],
                            V + r.b * a.v[0] + r.h * a.v[2], a.v[1], a.Tk, a.D, r,
                            [&](int c, int64_t j) {
                              float s;
                              if constexpr (kRotary)
                                s = rotary_dot<kMaxD>(q, kt.x[c], w, double(j - r.P)) * a.scale2;
                              else
                                s = dot<float, kMaxD>(q, kt.x[c]);
                              row.add((s + bias2(a, r.h, r.i, j)) * lambda, vt.x[c]);
                            });
  row.template merge_lanes<kSplit>();
  if (!r.active || r.part != 0) return;
  float lse = row.finish(out + ((r.b * a.Tq + r.i) * a.H + r.h) * a.D, a.D);
  if (lse2) lse2[r.bh * a.Tq + r.i] = lse;
}

// dq, and delta for the dkv kernel. Grid (B*H, ceil(Tq / (kRows / kSplit))), kRows threads (each
// row's lanes sum their keys' terms, then each other's). dout, out, dq: contiguous.
template <int kMaxD, int kCols, int kSplit>
__global__ void __launch_bounds__(kRows)
    dq_kernel(Dims a, const float* Q, const float* K, const float* V, const float* out,
              const float* lse2, const float* dout, float* dq, float* delta) {
  __shared__ RowTile<float, kCols, kMaxD> kt, vt;
  gpu::QueryRow r = gpu::query_row<kSplit>(a.H, a.Tq, a.mask);
  const float lambda = row_lambda(a, r.keys);
  int64_t row_at = ((r.b * a.Tq + r.i) * a.H + r.h) * a.D;
  float q[kMaxD], go[kMaxD], g[kMaxD] = {}, lse = 0, dlt = 0;
  if (r.active) {
    float o[kMaxD];
    load_row<kMaxD>(q, Q + r.b * a.q[0] + r.i * a.q[1] + r.h * a.q[2], a.D, a.scale2);
    load_row<kMaxD>(go, dout + row_at, a.D, 1.f);
    load_row<kMaxD>(o, out + row_at, a.D, 1.f);
    dlt = dot<float, kMaxD>(go, o);
    lse = lse2[r.bh * a.Tq + r.i];
    if (r.part == 0) delta[r.bh * a.Tq + r.i] = dlt;
  }
  gpu::for_each_visible_key(
      kt, vt, K + r.b * a.k[0] + r.h * a.k[2], a.k[1], V + r.b * a.v[0] + r.h * a.v[2], a.v[1],
      a.Tk, a.D, r, [&](int c, int64_t j) {
        float p = exp2f((dot<float, kMaxD>(q, kt.x[c]) + bias2(a, r.h, r.i, j)) * lambda - lse);
        float ds = lambda * p * (dot<float, kMaxD>(go, vt.x[c]) - dlt);
#pragma unroll
        for (int d = 0; d < kMaxD; ++d) g[d] += ds * kt.x[c][d];
      });
#pragma unroll
  for (int off = 1; off < kSplit; off *= 2)  // the row's lanes: each other's sums
#pragma unroll
    for (int d = 0; d < kMaxD; ++d) g[d] += __shfl_xor_sync(0xffffffffu, g[d], off);
  if (!r.active || r.part != 0) return;
#pragma unroll
  for (int d = 0; d < kMaxD; ++d)
    if (d < a.D) dq[row_at + d] = g[d] * a.scale;
}

// Adds the diagonals of one dkv tile's dS (ds_t[t][c]: key first + t, query i0 + c; 0 where
// masked or outside) to this block's row of dbias partial sums: the diagonal t - c fixed is
// one j - i, summed by one thread in order of c. The caller syncs before and after.
template <int kCols>
__device__ void add_tile_diagonals(const Dims& a, const float (*ds_t)[kCols + 1],
                                   int64_t first_minus_i0, float* row) {
  int64_t W = a.Tq + a.Tk - 1;
  for (int dl = threadIdx.x; dl < kRows + kCols - 1; dl += blockDim.x) {
    float sum = 0;
    for (int c = 0; c < kCols; ++c) {
      int t = dl - (kCols - 1) + c;
      if (t >= 0 && t < kRows) sum += ds_t[t][c];
    }
    int64_t col = first_minus_i0 + dl - (kCols - 1) + a.Tq - 1;  // j - i + Tq - 1
    if (col >= 0 && col < W) row[col] += sum;  // outside: every term of the sum was 0
  }
}

// dk, dv. Grid (B*H, ceil(Tk/kRows)), kRows threads. dout, dk, dv: contiguous.
// With kBias, also this block's share of dbias: thread t puts dS of (key t, query c) into
// ds_t[t][c], and add_tile_diagonals sums the tile's diagonals into this block's row of
// dbias_part (B*H, blocks, Tq+Tk-1), zeroed by the caller; dbias_sum_kernel adds the rows.
// Every sum runs in a fixed order, so dbias too is the same bits on every run.
template <int kMaxD, int kCols, bool kBias>
__global__ void __launch_bounds__(kRows)
    dkv_kernel(Dims a, const float* Q, const float* K, const float* V, const float* lse2,
               const float* delta, const float* dout, float* dk, float* dv, float* dbias_part) {
  __shared__ RowTile<float, kCols, kMaxD> qt, ot;
  __shared__ float lse_t[kCols], delta_t[kCols], lambda_t[kCols];
  __shared__ float ds_t[kBias ? kRows : 1][kCols + 1];  // +1: column c of rows t, no conflicts
  // grid (B*H, key blocks): block y = 0, issued first, takes the first keys, which the most
  // query rows see under a causal mask (longest blocks first, as in query_row)
  int64_t bh = blockIdx.x, b = bh / a.H, h = bh % a.H;
  int64_t j = int64_t(blockIdx.y) * kRows + threadIdx.x, first = int64_t(blockIdx.y) * kRows;
  float k[kMaxD], v[kMaxD], gk[kMaxD] = {}, gv[kMaxD] = {};
  if (j < a.Tk) {
    load_row<kMaxD>(k, K + b * a.k[0] + j * a.k[1] + h * a.k[2], a.D, 1.f);
    load_row<kMaxD>(v, V + b * a.v[0] + j * a.v[1] + h * a.v[2], a.D, 1.f);
  }
  // the query rows that may see this block's keys: from the first that sees its first key
  // (causal: P_i >= first; window: P_i > first - W) to the last that sees its last key
  // (window: P_i < last + W)
  const gpu::KeyMask& m = a.mask;
  int64_t last = ::min(first + kRows, a.Tk) - 1;
  int64_t p_start = m.causal ? first : m.window > 0 ? first - m.window + 1 : 0;
  int64_t i_start = ::max(int64_t(0), p_start - m.q_pos0);
  int64_t i_end = m.window > 0 ? ::min(a.Tq, last + m.window - m.q_pos0) : a.Tq;
  const float* Qh = Q + b * a.q[0] + h * a.q[2];
  const float* Oh = dout + b * a.Tq * a.H * a.D + h * a.D;
  for (int64_t i0 = i_start; i0 < i_end; i0 += kCols) {
    __syncthreads();
    gpu::load_rows(qt, Qh, a.q[1], i0, a.Tq, a.D);
    gpu::load_rows(ot, Oh, a.H * a.D, i0, a.Tq, a.D);
    for (int c = threadIdx.x; c < kCols; c += blockDim.x) {
      bool in = i0 + c < a.Tq;
      lse_t[c] = in ? lse2[bh * a.Tq + i0 + c] : 0.f;
      delta_t[c] = in ? delta[bh * a.Tq + i0 + c] : 0.f;
      lambda_t[c] = in ? row_lambda(a, gpu::key_span(m, m.q_pos0 + i0 + c)) : 1.f;
    }
    if constexpr (kBias)
      for (int c = 0; c < kCols; ++c) ds_t[threadIdx.x][c] = 0.f;
    __syncthreads();
    if (j < a.Tk) {
#pragma unroll 1
      for (int c = 0; c < kCols; ++c) {
        int64_t i = i0 + c, P = m.q_pos0 + i;
        if (i >= a.Tq) break;
        if ((m.causal && j > P) || (m.window > 0 && (j - P >= m.window || P - j >= m.window)))
          continue;  // masked: P_ij = 0
        float s = (dot<float, kMaxD>(qt.x[c], k) * a.scale2 + bias2(a, h, i, j)) * lambda_t[c];
        float p = exp2f(s - lse_t[c]);
        float ds = lambda_t[c] * p * (dot<float, kMaxD>(ot.x[c], v) - delta_t[c]);
        if constexpr (kBias) ds_t[threadIdx.x][c] = ds;
#pragma unroll
        for (int d = 0; d < kMaxD; ++d) {
          gv[d] += p * ot.x[c][d];
          gk[d] += ds * qt.x[c][d];
        }
      }
    }
    if constexpr (kBias) {
      __syncthreads();
      add_tile_diagonals<kCols>(a, ds_t, first - i0,
                                dbias_part + (bh * gridDim.y + blockIdx.y) * (a.Tq + a.Tk - 1));
    }
  }
  if (j >= a.Tk) return;
  int64_t row_at = ((b * a.Tk + j) * a.H + h) * a.D;
#pragma unroll
  for (int d = 0; d < kMaxD; ++d)
    if (d < a.D) dk[row_at + d] = gk[d] * a.scale, dv[row_at + d] = gv[d];
}

// dbias[h, c] = sum over b and key blocks of dbias_part[b, h, block, c], in that order.
__global__ void dbias_sum_kernel(int64_t B, int64_t H, int64_t blocks, int64_t W, const float* part,
                                 float* dbias) {
  for (int64_t e = gpu::thread_index(); e < H * W; e += gpu::thread_count()) {
    int64_t h = e / W, c = e % W;
    float acc = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t blk = 0; blk < blocks; ++blk) acc += part[((b * H + h) * blocks + blk) * W + c];
    dbias[e] = acc;
  }
}

// Threads per query row in the forward and dq kernels: 4 (16 rows a block) for head dims up to
// 64, 2 (32 rows) for 128, whose blocks already hold many registers a thread.
constexpr int split_for(int max_d) {
  return max_d <= 64 ? 4 : 2;
}

// Runs f.template operator()<kMaxD, kCols>() for the smallest specialisation that holds D.
template <class F>
void with_head_dim(int D, F&& f) {
  if (D <= 32) return f.template operator()<32, 32>();
  if (D <= 64) return f.template operator()<64, 32>();
  return f.template operator()<128, 16>();
}

Dims dims_of(const AttentionTensors& t, const AttentionOptions& o) {
  const Tensor &q = t.q, &k = t.k, &v = t.v;
  if (q.dtype() != DType::f32)
    fail("attention: the CUDA kernels run in f32, but got ", dtype_name(q.dtype()), " q ",
         shape_str(q.shape()), " on cuda (f64 gradient checks run on the cpu)");
  if (q.size(3) > 128)
    fail("attention: the CUDA kernels take head dims D <= 128, but got q ", shape_str(q.shape()));
  if (q.size(1) > int64_t(65535) * (kRows / 4) || k.size(1) > int64_t(65535) * kRows)
    fail("attention: the CUDA grid takes at most ", 65535 * (kRows / 4), " query rows and ",
         65535 * kRows, " key rows (65535 blocks), but got q ", shape_str(q.shape()), " and k ",
         shape_str(k.shape()));
  Dims a{};
  a.B = q.size(0), a.Tq = q.size(1), a.Tk = k.size(1), a.H = q.size(2);
  a.D = static_cast<int>(q.size(3));
  for (int s = 0; s < 3; ++s)
    a.q[s] = q.strides()[s], a.k[s] = k.strides()[s], a.v[s] = v.strides()[s];
  a.scale = static_cast<float>(o.scale);
  a.scale2 = static_cast<float>(o.scale * gpu::kLog2e);
  a.mask = {a.Tk, o.q_pos0, o.window, o.causal};
  a.log_scale_len = o.log_scale_len;
  a.bias = o.rel_bias.defined() ? o.rel_bias.data<float>() : nullptr;
  a.freqs = o.row_freqs.defined() ? o.row_freqs.data<double>() : nullptr;
  return a;
}

}  // namespace

void attention_forward(const AttentionTensors& t, const AttentionOptions& o) {
  Dims a = dims_of(t, o);
  if (t.out.numel() == 0) return;
  float* lse = t.lse.defined() ? t.lse.data<float>() : nullptr;
  with_head_dim(a.D, [&]<int kMaxD, int kCols>() {
    constexpr int kSplit = split_for(kMaxD), kQueryRows = kRows / kSplit;
    dim3 grid(a.B * a.H, (a.Tq + kQueryRows - 1) / kQueryRows);
    const float *Q = t.q.data<float>(), *K = t.k.data<float>(), *V = t.v.data<float>();
    if (a.freqs)
      forward_kernel<kMaxD, kCols, kSplit, true>
          <<<grid, kRows, 0, gpu::stream()>>>(a, Q, K, V, t.out.data<float>(), lse);
    else
      forward_kernel<kMaxD, kCols, kSplit, false>
          <<<grid, kRows, 0, gpu::stream()>>>(a, Q, K, V, t.out.data<float>(), lse);
  });
  gpu::check_launch("attention");
}

void attention_backward(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& o,
                        const AttentionGrads& g) {
  Dims a = dims_of(t, o);
  if (a.Tq == 0 || a.Tk == 0) {  // nothing attends: zero gradients
    for (const Tensor& x : {g.dq, g.dk, g.dv, g.dbias})
      if (x.defined()) x.fill_(0);
    return;
  }
  Tensor delta = Tensor::empty({a.B, a.H, a.Tq}, DType::f32, Device::cuda);
  const float *Q = t.q.data<float>(), *K = t.k.data<float>(), *V = t.v.data<float>();
  with_head_dim(a.D, [&]<int kMaxD, int kCols>() {
    constexpr int kSplit = split_for(kMaxD), kQueryRows = kRows / kSplit;
    dim3 gq(a.B * a.H, (a.Tq + kQueryRows - 1) / kQueryRows);
    dim3 gk(a.B * a.H, (a.Tk + kRows - 1) / kRows);
    dq_kernel<kMaxD, kCols, kSplit><<<gq, kRows, 0, gpu::stream()>>>(
        a, Q, K, V, t.out.data<float>(), t.lse.data<float>(), dout.data<float>(),
        g.dq.data<float>(), delta.data<float>());
    if (!g.dbias.defined()) {
      dkv_kernel<kMaxD, kCols, false><<<gk, kRows, 0, gpu::stream()>>>(
          a, Q, K, V, t.lse.data<float>(), delta.data<float>(), dout.data<float>(),
          g.dk.data<float>(), g.dv.data<float>(), nullptr);
      return;
    }
    int64_t W = a.Tq + a.Tk - 1;
    Tensor part = Tensor::zeros({a.B * a.H, int64_t(gk.y), W}, DType::f32, Device::cuda);
    dkv_kernel<kMaxD, kCols, true><<<gk, kRows, 0, gpu::stream()>>>(
        a, Q, K, V, t.lse.data<float>(), delta.data<float>(), dout.data<float>(),
        g.dk.data<float>(), g.dv.data<float>(), part.data<float>());
    dbias_sum_kernel<<<gpu::grid_for(a.H * W), gpu::kThreads, 0, gpu::stream()>>>(
        a.B, a.H, gk.y, W, part.data<float>(), g.dbias.data<float>());
  });
  gpu::check_launch("attention backward");
}

}  // namespace poslab::kernel::cuda
