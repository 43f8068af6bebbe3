// rope_scaling.cu — causal attention with dynamic-NTK RoPE on the GPU, evaluation only
// (CPU and semantics: rope_scaling.h, rope_scaling.cpp).
//
// Query row i at position P uses its own theta: s = max(1, (P+1)/T0), theta' = theta
// s^(r/(r-2)), w_p = theta'^(-2p/r) for the r/2 rotated pairs (lo_p, hi_p) of the layout
// (posenc/rope.h), and rotates itself and every key j <= P with it. Since a
// rotation by P w followed by the transpose of one by j w is one rotation by (j - P) w,
//   (R(P w) q) . (R(j w) k) = q . R((j - P) w) k,
// each score needs only the relative angle (j - P) w_p per pair, computed in double and
// reduced to [-pi, pi] before a float sincos:
//   score_j = sum_p [q_lo, q_hi] . R((j - P) w_p) [k_lo, k_hi] / sqrt(D)
// Slots p >= r/2 are the unrotated dims (lo, hi) = (r + 2(p - r/2), lo + 1) with w_p = 0: a
// rotation by 0, the plain product. The query is held in slot order (qa = q_lo, qb = q_hi).
//   out_i = sum_j softmax(score)_j v_j
// The rest is the tiled online softmax of nn/attention_op.cu (tensor/attention_tile.cuh):
// one thread per query row, key/value tiles in shared memory, no T x T matrix.
#include <cmath>

#include "tensor/attention_tile.cuh"
#include "tensor/cuda_ops.h"

namespace poslab::kernel::cuda {
namespace {

constexpr int kRows = 64;  // query rows per block: one per thread

struct Dims {
  int64_t Tq, Tk, H, q_pos0, T0;
  int D, r;
  bool half_layout;
  int64_t q[3], k[3], v[3];  // strides (batch, time, head); unit stride along D
  double theta;
  float scale2;  // log2 e / sqrt(D)
};

// The dims (lo, hi) of slot p (see the top of this file).
__device__ inline void slot_dims(const Dims& a, int p, int* lo, int* hi) {
  int half = a.r / 2;
  if (p >= half)
    *lo = a.r + 2 * (p - half), *hi = *lo + 1;
  else
    *lo = a.half_layout ? p : 2 * p, *hi = a.half_layout ? p + half : 2 * p + 1;
}

template <int kMaxD, int kCols>
__global__ void __launch_bounds__(kRows)
    dynamic_kernel(Dims a, const float* Q, const float* K, const float* V, float* out) {
  constexpr double kTwoPi = 6.283185307179586;
  __shared__ gpu::RowTile<float, kCols, kMaxD> kt, vt;
  gpu::QueryRow r = gpu::query_row(a.H, a.Tq, a.Tk, a.q_pos0, true);
  float qa[kMaxD / 2] = {}, qb[kMaxD / 2] = {};
  double w[kMaxD / 2] = {};
  if (r.active) {
    const float* qi = Q + r.b * a.q[0] + r.i * a.q[1] + r.h * a.q[2];
    double s = ::max(1.0, double(r.P + 1) / a.T0);
    double th = a.theta * pow(s, double(a.r) / (a.r - 2));  // ntk_theta
#pragma unroll
    for (int p = 0; p < kMaxD / 2; ++p) {
      int lo, hi;
      slot_dims(a, p, &lo, &hi);
      qa[p] = lo < a.D ? qi[lo] : 0.f, qb[p] = hi < a.D ? qi[hi] : 0.f;
      w[p] = 2 * p < a.r ? pow(th, -2.0 * p / a.r) : 0.0;
    }
  }
  gpu::OnlineSoftmax<float, kMaxD> row;
  gpu::for_each_visible_key(
      kt, vt, K + r.b * a.k[0] + r.h * a.k[2], a.k[1], V + r.b * a.v[0] + r.h * a.v[2], a.v[1],
      a.Tk, a.D, r, [&](int c, int64_t j) {
        double delta = double(j - r.P);  // j - P <= 0
        float dot = 0;
#pragma unroll
        for (int p = 0; p < kMaxD / 2; ++p) {
          double ang = delta * w[p];
          ang -= kTwoPi * rint(ang / kTwoPi);  // into [-pi, pi] before the float sincos
          float sn, cs;
          sincosf(static_cast<float>(ang), &sn, &cs);
          int lo, hi;
          slot_dims(a, p, &lo, &hi);
          float k0 = kt.x[c][lo], k1 = kt.x[c][hi];
          dot += qa[p] * (k0 * cs - k1 * sn) + qb[p] * (k0 * sn + k1 * cs);
        }
        row.add(dot * a.scale2, vt.x[c]);
      });
  if (r.active) row.finish(out + ((r.b * a.Tq + r.i) * a.H + r.h) * a.D, a.D);
}

}  // namespace

Tensor dynamic_rope_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                              double theta, int64_t T0, int64_t q_pos0, int64_t r,
                              bool half_layout) {
  if (q_in.dtype() != DType::f32)
    fail("dynamic_rope_attention: the CUDA kernel runs in f32, but got ", dtype_name(q_in.dtype()),
         " q ", shape_str(q_in.shape()), " on cuda");
  int64_t B = q_in.size(0), Tq = q_in.size(1), H = q_in.size(2), D = q_in.size(3);
  if (D > 128 || B * H > 65535)
    fail("dynamic_rope_attention: the CUDA kernel takes D <= 128 and B*H <= 65535, but got q ",
         shape_str(q_in.shape()));
  auto rows = [](const Tensor& x) { return x.strides()[3] == 1 ? x : x.contiguous(); };
  Tensor q = rows(q_in), k = rows(k_in), v = rows(v_in);
  Tensor out = Tensor::empty({B, Tq, H, D}, DType::f32, Device::cuda);
  if (out.numel() == 0) return out;
  Dims a{Tq,
         k.size(1),
         H,
         q_pos0,
         T0,
         static_cast<int>(D),
         static_cast<int>(r),
         half_layout,
         {},
         {},
         {},
         theta,
         static_cast<float>(gpu::kLog2e / std::sqrt(double(D)))};
  for (int s = 0; s < 3; ++s)
    a.q[s] = q.strides()[s], a.k[s] = k.strides()[s], a.v[s] = v.strides()[s];
  dim3 grid((Tq + kRows - 1) / kRows, B * H);
  auto run = [&]<int kMaxD, int kCols>() {
    dynamic_kernel<kMaxD, kCols><<<grid, kRows, 0, gpu::stream()>>>(
        a, q.data<float>(), k.data<float>(), v.data<float>(), out.data<float>());
  };
  if (D <= 32)
    run.template operator()<32, 32>();
  else if (D <= 64)
    run.template operator()<64, 32>();
  else
    run.template operator()<128, 16>();
  gpu::check_launch("dynamic_rope_attention");
  return out;
}

}  // namespace poslab::kernel::cuda
