// attention_tile.cuh — the pieces of the GPU attention kernels (nn/attention_kernels.cu): key/
// value tiles in shared memory and the online softmax.
//
// kSplit adjacent threads of a warp own one query row i (each its q, its running max m, sum l
// and output accumulator in registers) and walk the keys it may see in tiles of kCols rows,
// which the whole block loads into shared memory together; each thread takes every kSplit-th
// key of a tile, and at the end the kSplit partial softmaxes merge through warp shuffles
// (merge_lanes). More threads per row: more warps to hide latency with, the same tiles. Scores
// never leave registers, so memory is O(T D), not O(T^2): a 4096-token window never materialises a
// T x T matrix.
//
// Online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax";
// used by FlashAttention, Dao et al. 2022, and FlashAttention-2, Dao 2023, arXiv:2307.08691).
// After the keys seen so far, m = max_j s_j, l = sum_j 2^(s_j - m), acc = sum_j 2^(s_j - m) v_j.
// A new key with score s and value v updates them to
//   m' = max(m, s);   r = 2^(m - m');   l' = r l + 2^(s - m');   acc' = r acc + 2^(s - m') v
// and at the end out = acc / l, and lse = m + log2 l (the row's log-sum-exp, base 2).
// Scores are kept in log2 units (natural-log scores times log2 e) so that each exponential
// is one exp2.
#pragma once
#include <cmath>

#include "tensor/cuda_util.cuh"

namespace poslab::gpu {

constexpr double kLog2e = 1.4426950408889634;

// kCols keys (or queries) of one (b,h), D <= kMaxD values each, zero-padded.
template <class T, int kCols, int kMaxD>
struct RowTile {
  T x[kCols][kMaxD];
};

// The whole block copies rows r0 .. r0+kCols-1 of a (T, D) matrix with row stride ld into
// `tile` (zeros past `rows` and past D). Consecutive threads read consecutive elements of a
// row: coalesced. The caller synchronises.
template <class T, int kCols, int kMaxD>
__device__ __forceinline__ void load_rows(RowTile<T, kCols, kMaxD>& tile, const T* x, int64_t ld,
                                          int64_t r0, int64_t rows, int D) {
  for (int e = threadIdx.x; e < kCols * kMaxD; e += blockDim.x) {
    int c = e / kMaxD, d = e % kMaxD;
    int64_t r = r0 + c;
    tile.x[c][d] = r < rows && d < D ? x[r * ld + d] : T(0);
  }
}

// Which keys a query sees: j <= P (causal) and |P - j| < window (window > 0; 0: no window).
struct KeyMask {
  int64_t Tk, q_pos0, window;
  bool causal;
};

// The keys [lo, hi) the query at position P sees (lo == hi: none).
struct KeySpan {
  int64_t lo, hi;
};
__device__ __forceinline__ KeySpan key_span(const KeyMask& m, int64_t P) {
  int64_t lo = 0, hi = m.causal ? P + 1 : m.Tk;
  if (m.window > 0) {
    lo = P - m.window + 1;
    if (!m.causal) hi = P + m.window;
  }
  lo = ::max(int64_t(0), ::min(lo, m.Tk));
  return {lo, ::max(lo, ::min(hi, m.Tk))};
}

// The query row a thread owns in a grid of (B*H, ceil(Tq / rows)) blocks of rows = blockDim.x /
// kSplit query rows, kSplit adjacent threads per row (part: which of them), and the keys it
// may see: [keys.lo, keys.hi) at P = q_pos0 + i (key_span). A spare
// thread of the last block (i >= Tq) sees none but still helps load the tiles its block needs
// (block: from its first row's first key to its last row's last key).
struct QueryRow {
  int64_t b, h, bh, i, P;
  KeySpan keys, block;
  bool active;
  int part, split;
};
template <int kSplit = 1>
__device__ __forceinline__ QueryRow query_row(int64_t H, int64_t Tq, const KeyMask& m) {
  QueryRow r;
  int64_t rows = blockDim.x / kSplit;
  r.part = threadIdx.x % kSplit, r.split = kSplit;
  // Longest blocks first: under a causal mask the last query rows see the most keys, so row
  // block y = 0 (issued first, for every b and h) takes the last rows; the short blocks then
  // fill the SMs' gaps at the end instead of a few long ones running alone (FlashAttention-2,
  // section 3.3). Without the mask every block has the same work and the order costs nothing.
  int64_t tile = int64_t(gridDim.y) - 1 - blockIdx.y;
  r.bh = blockIdx.x, r.b = r.bh / H, r.h = r.bh % H;
  r.i = tile * rows + threadIdx.x / kSplit;
  r.P = m.q_pos0 + r.i;
  r.active = r.i < Tq;
  int64_t first = tile * rows, last = ::min(Tq, (tile + 1) * rows) - 1;
  r.block = {key_span(m, m.q_pos0 + first).lo, key_span(m, m.q_pos0 + last).hi};
  r.keys = r.active ? key_span(m, r.P) : KeySpan{0, 0};
  return r;
}

// Walks the keys visible to the block in tiles of kCols rows, from its first key (tiles left
// of a window are skipped): the block loads each tile of K and V (rows with stride ldk, ldv)
// into shared memory, then every thread calls body(c, j) for its share of its row's visible
// keys j = j0 + c of the tile (c = part mod split), in increasing j.
template <class T, int kCols, int kMaxD, class Body>
__device__ __forceinline__ void for_each_visible_key(RowTile<T, kCols, kMaxD>& kt,
                                                     RowTile<T, kCols, kMaxD>& vt, const T* K,
                                                     int64_t ldk, const T* V, int64_t ldv,
                                                     int64_t Tk, int D, const QueryRow& r,
                                                     Body&& body) {
  for (int64_t j0 = r.block.lo; j0 < r.block.hi; j0 += kCols) {
    __syncthreads();  // every thread is done with the previous tile
    load_rows(kt, K, ldk, j0, Tk, D);
    load_rows(vt, V, ldv, j0, Tk, D);
    __syncthreads();
    int begin = static_cast<int>(::max(int64_t(0), ::min(r.keys.lo - j0, int64_t(kCols))));
    int end = static_cast<int>(::max(int64_t(0), ::min(r.keys.hi - j0, int64_t(kCols))));
    int c0 =
        begin + ((r.part - begin) % r.split + r.split) % r.split;  // first c = part (mod split)
#pragma unroll 1
    for (int c = c0; c < end; c += r.split) body(c, j0 + c);
  }
}

// sum_d a[d] b[d] over kMaxD (zero-padded) values, with four partial sums for ILP.
template <class T, int kMaxD>
__device__ __forceinline__ T dot(const T* a, const T* b) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma unroll
  for (int d = 0; d < kMaxD; d += 4) {
    s0 += a[d] * b[d];
    s1 += a[d + 1] * b[d + 1];
    s2 += a[d + 2] * b[d + 2];
    s3 += a[d + 3] * b[d + 3];
  }
  return (s0 + s1) + (s2 + s3);
}

// One query row's online softmax (see the top of this file), one key at a time: the rescale
// by 2^(m - m') runs only when a key raises the maximum, which after the first few keys is
// rare (and then costs D multiplies).
template <class T, int kMaxD>
struct OnlineSoftmax {
  T m = -INFINITY, l = 0;
  T acc[kMaxD] = {};

  // Adds a key with score s (log2 units) and value row v.
  __device__ __forceinline__ void add(T s, const T* v) {
    if (s > m) {
      T r = exp2(m - s);  // 0 for the first key (m = -inf)
      l *= r;
#pragma unroll
      for (int d = 0; d < kMaxD; ++d) acc[d] *= r;
      m = s;
    }
    T p = exp2(s - m);
    l += p;
#pragma unroll
    for (int d = 0; d < kMaxD; ++d) acc[d] += p * v[d];
  }

  // Merges the states of the kSplit adjacent lanes that share a row, so that each holds the
  // softmax over all of the row's keys: in each round a partner's (m, l, acc) is rescaled to
  // the common maximum m' and added (the update above with a whole block of keys at once):
  //   l = 2^(m - m') l + 2^(mo - m') lo,   acc = 2^(m - m') acc + 2^(mo - m') acco
  // Every lane of the warp calls it (shuffles take whole warps).
  template <int kSplit>
  __device__ __forceinline__ void merge_lanes() {
#pragma unroll
    for (int off = 1; off < kSplit; off *= 2) {
      T mo = __shfl_xor_sync(0xffffffffu, m, off), lo = __shfl_xor_sync(0xffffffffu, l, off);
      T mn = mo > m ? mo : m;
      T r = mn == T(-INFINITY) ? T(0) : exp2(m - mn),
        ro = mn == T(-INFINITY) ? T(0) : exp2(mo - mn);
      l = r * l + ro * lo;
#pragma unroll
      for (int d = 0; d < kMaxD; ++d)
        acc[d] = r * acc[d] + ro * __shfl_xor_sync(0xffffffffu, acc[d], off);
      m = mn;
    }
  }

  // out[d] = acc[d] / l for d < D (zeros for a row that saw no key); returns lse (log2).
  __device__ __forceinline__ T finish(T* out, int D) const {
    T inv = l > 0 ? T(1) / l : T(0);
#pragma unroll
    for (int d = 0; d < kMaxD; ++d)
      if (d < D) out[d] = acc[d] * inv;
    return l > 0 ? m + log2(l) : T(-INFINITY);
  }
};

}  // namespace poslab::gpu
