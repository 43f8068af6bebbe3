// sgemm.cpp — our own single-precision matrix product: the blocked driver shared by every ISA.
//
// Why it exists: OpenBLAS picks its kernels by CPU model. On a CPU it does not recognise (this
// project's VMs report a generic "AMD EPYC" or "Intel Xeon Processor") it may fall back to its
// SSE3 "Prescott" kernels, a fraction of what the core can do, unless OPENBLAS_CORETYPE is set in
// the environment — which we may not do for the user. Even where it guesses right, its packing
// and thread start-up weigh heavily on the model's many mid-sized products. These few hundred
// lines run faster on the same cores, on AVX2+FMA and on AVX-512 CPUs alike (bench_matmul, ours
// against cblas_sgemm at the model's shapes; docs/performance.md). f64
// (gradchecks) and CPUs without AVX2 keep OpenBLAS; POSLAB_GEMM=blas forces it for f32 too.
//
// Scalar math (row-major, op(X) = X or X^T as asked):
//   C[m,n] = alpha * sum_k op(A)[m,k] * op(B)[k,n] + beta * C[m,n]
//
// The method is Goto's (K. Goto, R. van de Geijn, "Anatomy of High-Performance Matrix
// Multiplication", ACM TOMS 34(3), 2008):
//   for each block of KC along k:
//     pack op(B)[pc:pc+KC, :] into panels of NR columns, k-major: the micro-kernel reads one
//       row of a panel (NR floats = two vector registers) per k, in order;
//     for each strip of MR rows (strips are shared out among the threads):
//       read op(A)[strip, pc:pc+KC] in place (packed, zero-padded, at the ragged edge only);
//       for each B panel: the micro-kernel computes an MR x NR tile of C.
// Packing B turns either layout (transposed or not, any leading dimension) into the same
// unit-stride stream and pads ragged edges with zeros; the packed B block (KC x N) stays in
// L2 and each MR x KC strip of A in L1 while it sweeps across every panel of B. (Goto packs A
// as well, against TLB misses on huge matrices; at this model's sizes reading it in place
// is faster (bench_matmul). Stored B whose panels are all full is read in place too: its rows
// already are panel rows, only further apart.) MR and NR come
// from the micro-kernel (12 x 32 with AVX-512, 6 x 16 with AVX2: sgemm_avx512.cpp,
// sgemm_avx2.cpp). Every C element is summed in the same order whatever the thread count
// (threads split rows only), so results are deterministic.
#include "tensor/sgemm.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tensor/strided.h"  // kParallelGrain

namespace poslab::kernel {

namespace {

constexpr int64_t KC = 256;  // depth of one packed block (a 16-column B panel: 16 KiB)

// Packs op(A)[i0:i0+mr, pc:pc+kc] into dst[k*mr + i], zero past row m.
void pack_a_strip(const float* A, bool ta, int64_t lda, int64_t pc, int64_t kc, int64_t i0,
                  int64_t m, int64_t mr, float* dst) {
  const int64_t h = std::min(mr, m - i0);
  if (ta) {  // A^T stored (K,M): the mr values of one k are contiguous
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = A + (pc + k) * lda + i0;
      for (int64_t i = 0; i < mr; ++i) dst[k * mr + i] = i < h ? src[i] : 0.f;
    }
    return;
  }
  for (int64_t i = 0; i < mr; ++i) {
    if (i >= h) {
      for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = 0.f;
      continue;
    }
    const float* src = A + (i0 + i) * lda + pc;
    for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = src[k];
  }
}

// Per-thread packing buffers, grown once and reused: a training step allocates nothing here.
std::vector<float>& a_buffer() {
  static thread_local std::vector<float> buf;
  return buf;
}
std::vector<float>& b_buffer() {
  static thread_local std::vector<float> buf;
  return buf;
}
std::vector<float>& ct_buffer() {  // C^T of a product run transposed (sgemm_runs_transposed)
  static thread_local std::vector<float> buf;
  return buf;
}

// dst (cols, rows), row stride ldd = src (rows, cols), row stride lds, transposed, in 16 x 16
// blocks: element by element, every write of a source row went to another line of dst, and
// the transposes of the MLP's dW (128 x 512, sgemm_runs_transposed) ran on one thread while
// the other waited (a perf profile of bench_train_step showed it). Threads share the blocks'
// rows when the caller is not in a parallel region already.
void transpose(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst, int64_t ldd) {
  constexpr int64_t kB = 16;
  auto block_row = [&](int64_t i0) {
    const int64_t i1 = std::min(i0 + kB, rows);
    for (int64_t j0 = 0; j0 < cols; j0 += kB) {
      const int64_t j1 = std::min(j0 + kB, cols);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) dst[j * ldd + i] = src[i * lds + j];
    }
  };
  const int64_t blocks = (rows + kB - 1) / kB;
  if (!omp_in_parallel() && rows * cols >= kParallelGrain && omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) block_row(b * kB);
  } else {
    for (int64_t b = 0; b < blocks; ++b) block_row(b * kB);
  }
}

// No products (K = 0): C = beta*C, where beta == 0 writes zeros without reading C.
void scale_c(int64_t M, int64_t N, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.f ? 0.f : beta * C[i * ldc + j];
}

// One product's operands and sizes, as sgemm received them.
struct Product {
  const SgemmKernel& uk;
  bool ta, tb;
  int64_t M, N, K;
  float alpha;
  const float* A;
  int64_t lda;
  const float* B;
  int64_t ldb;
  float beta;
  float* C;
  int64_t ldc;
  const float* bias;  // (N) added to every row of C, or null
  CausalBand band{};  // sgemm_prepacked's only
  int64_t strips() const { return (M + uk.mr - 1) / uk.mr; }
  int64_t panels() const { return (N + uk.nr - 1) / uk.nr; }
};

// Packs panel jp of op(B)[pc:pc+kc, :] to bp + jp*NR*kc.
void pack_panel(const Product& p, int64_t pc, int64_t jp, float* bp) {
  const int64_t kc = std::min(KC, p.K - pc);
  p.uk.pack_b(p.B, p.tb, p.ldb, pc, kc, jp * p.uk.nr, p.N, bp + jp * p.uk.nr * kc);
}

// Where the micro-kernel reads B's panels for one k-block: panel jp at data + jp*panel_stride,
// row k of it at k*row_stride.
struct Panels {
  const float* data;
  int64_t panel_stride, row_stride;
};

// sgemm_in_place (sgemm.h), for sgemm and for the prepacked products of attention alike:
// Stored (not transposed) B whose panels are all full needs no packing: its rows already are
// the panel rows the micro-kernel reads (NR contiguous floats per k), ldb apart instead of NR.
// This is dW = dy^T x, whose B is a whole activation (4096 x 128 or x 512 in a canonical
// step), and dx = dy W. A ragged last panel is still packed, for its zeros. Skipping the pack
// makes the AVX-512 kernel's dW products faster and leaves the AVX2 kernel's as they were
// (bench_matmul, the step's dW products).
//
// Unless the rows are so far apart that a panel does not stay in L2. Rows ldb * 4 bytes apart
// (a power of two here) fall into only L2 / (ways * stride) of the cache's sets, so at most
// L2 / stride of the panel's KC lines fit: on an AMD EPYC of family 25, Zen 3 (512 KiB, 8 ways),
// the dW of the 512-wide MLP layer (stride 2 KiB) holds 256 lines, exactly one panel, with no room
// for the A strip and C, and read in place it runs well below its packed rate (bench_train_step
// on a Zen 3 EPYC). So B stays in place only while a panel needs at most
// half of that: ldb * 4 * KC <= L2 / 2. Both paths give the same bits.
int64_t l2_bytes() {
  static const int64_t v = [] {
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long n = sysconf(_SC_LEVEL2_CACHE_SIZE);
#else
    const long n = 0;  // WebAssembly (the explorer) cannot ask
#endif
    return n > 0 ? int64_t(n) : int64_t(512) << 10;  // unknown: assume the smaller L2
  }();
  return v;
}
bool b_in_place(const Product& p) {
  return sgemm_in_place(p.uk, p.tb, p.N, p.ldb);
}

// Block pc of B read in place (b_in_place), or packed at bp by pack_panel.
Panels panels_of(const Product& p, int64_t pc, const float* bp) {
  if (b_in_place(p)) return {p.B + pc * p.ldb, p.uk.nr, p.ldb};
  return {bp, p.uk.nr * std::min(KC, p.K - pc), p.uk.nr};
}

// The C tiles [t0, t1) (tile t = strip t / panels, panel t % panels) of k-block pc.
void run_tiles(const Product& p, int64_t pc, const Panels& b, int64_t t0, int64_t t1) {
  const int64_t MR = p.uk.mr, NR = p.uk.nr, panels = p.panels(), kc = std::min(KC, p.K - pc);
  const float beta = pc == 0 ? p.beta : 1.f;  // later k-blocks accumulate onto C
  std::vector<float>& ap = a_buffer();
  ap.resize(static_cast<size_t>(MR * KC));
  const float* a = nullptr;
  int64_t rs = 1, cs = MR;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t s = t / panels, jp = t % panels, r = s * MR, c = jp * NR;
    if (t == t0 || jp == 0) {  // a new strip of A
      // A full strip is read in place, from its rows of A or, transposed, its MR contiguous
      // values per k: the strip (MR x KC) stays in L1 while it sweeps the panels of B, which
      // saves the packing's pass over A (bench_train_step is faster so). Only the ragged
      // edge is packed (zero-padded to MR rows).
      if (r + MR <= p.M) {
        a = p.ta ? p.A + pc * p.lda + r : p.A + r * p.lda + pc;
        rs = p.ta ? 1 : p.lda, cs = p.ta ? p.lda : 1;
      } else {
        pack_a_strip(p.A, p.ta, p.lda, pc, kc, r, p.M, MR, ap.data());
        a = ap.data(), rs = 1, cs = MR;
      }
    }
    const int64_t last = std::min(r + MR, p.M) - 1;  // the strip's last row
    // the k range [k0, k1) of this block that can be non-zero (sgemm.h, CausalBand)
    int64_t k0 = 0, k1 = kc;
    switch (p.band.kind) {
      case CausalBand::cols:
        if (c > last + p.band.off) continue;  // every row of the tile is masked
        break;
      case CausalBand::k_upto:
        k1 = std::clamp<int64_t>(last + p.band.off + 1 - pc, 0, kc);
        break;
      case CausalBand::k_from:
        k0 = std::clamp<int64_t>(r - p.band.off - pc, 0, kc);
        break;
      case CausalBand::none:
        break;
    }
    if (k1 <= k0) {
      if (pc > 0) continue;  // adds nothing onto C
      k0 = k1 = 0;           // C = beta*C (+ bias): a sum of no terms
    }
    const float* bias = pc == 0 && p.bias ? p.bias + c : nullptr;  // once, with the first block
    p.uk.micro(k1 - k0, a + k0 * cs, rs, cs, b.data + jp * b.panel_stride + k0 * b.row_stride,
               b.row_stride, p.alpha, beta, bias, p.C + r * p.ldc + c, p.ldc, std::min(MR, p.M - r),
               std::min(NR, p.N - c));
  }
}

}  // namespace

// A product much wider than tall and deep runs as its transpose: C^T (N,M) = op(B)^T op(A)^T,
// through a buffer. This is dW = dy^T x of the MLP's down projection, (128, 512) over the
// 4096 rows of a step. The driver keeps a block of B, KC x N, in L2 while every strip of A
// (22 of 6 rows with AVX2) sweeps it: for N = 512 that is 512 KiB, the whole L2 of a Zen 3 core
// and half of a Zen 5 one. Transposed, the block is KC x M = 128 KiB, and the product runs
// faster with both kernels (bench_matmul, "dW mlp down").
// The bits do not change. Each element of C^T is the same FMA chain over k in the same
// k-blocks, because a*b + c and b*a + c round alike. The buffer starts as C^T when beta reads
// C, so every block's alpha*acc + beta*C is the same arithmetic too. A bias (added per column
// of C) keeps the product as it is.
bool sgemm_runs_transposed(int64_t M, int64_t N, int64_t K, bool bias) {
  return !bias && N >= 2 * M && K > KC;
}

bool sgemm_in_place(const SgemmKernel& uk, bool tb, int64_t N, int64_t ldb) {
  return !tb && N % uk.nr == 0 && ldb * int64_t(sizeof(float)) * KC <= l2_bytes() / 2;
}

const SgemmKernel* sgemm_kernel_for(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return &sgemm_avx512_kernel;
    case Isa::avx2:
      return &sgemm_avx2_kernel;
    case Isa::generic:
#ifdef __wasm_simd128__
      return &sgemm_wasm_kernel;
#endif
      break;
  }
  return nullptr;
}

const SgemmKernel* sgemm_kernel() {
  static const SgemmKernel* k = [] {
    const char* env = std::getenv("POSLAB_GEMM");
    if (env && std::strcmp(env, "blas") == 0) return static_cast<const SgemmKernel*>(nullptr);
    return sgemm_kernel_for(cpu_isa());
  }();
  return k;
}

void sgemm(const SgemmKernel& uk, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
           const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
           int64_t ldc, const float* bias) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    scale_c(M, N, beta, C, ldc);
    if (bias)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) C[i * ldc + j] += bias[j];
    return;
  }
  if (sgemm_runs_transposed(M, N, K, bias != nullptr)) {
    std::vector<float>& ct = ct_buffer();
    ct.resize(static_cast<size_t>(M * N));
    if (beta != 0.f) transpose(M, N, C, ldc, ct.data(), M);  // C^T (N,M), read by beta
    sgemm(uk, !tb, !ta, N, M, K, alpha, B, ldb, A, lda, beta, ct.data(), M);
    transpose(N, M, ct.data(), M, C, ldc);
    return;
  }
  const Product p{uk, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, bias, {}};
  const int64_t tiles = p.strips() * p.panels();
  const bool in_place = b_in_place(p);
  std::vector<float>& bp = b_buffer();
  // sized for this product's depth: attention's Q K^T (K = D = 32) against thousands of keys
  // would otherwise hold KC / D = 8 times the memory it uses, per thread
  if (!in_place) bp.resize(static_cast<size_t>(p.panels() * uk.nr * std::min(KC, K)));
  float* bpd = bp.data();
  // Threads only for products big enough to pay for waking them, and never nested: the
  // attention kernel already calls us from inside its own parallel loop. Serial products
  // make no OpenMP call at all: even a parallel region of one thread costs a team set-up,
  // and attention makes thousands of small products per step.
  if (omp_in_parallel() || M * N * K < (int64_t(1) << 18) || omp_get_max_threads() == 1) {
    for (int64_t pc = 0; pc < K; pc += KC) {
      if (!in_place)
        for (int64_t jp = 0; jp < p.panels(); ++jp) pack_panel(p, pc, jp, bpd);
      run_tiles(p, pc, panels_of(p, pc, bpd), 0, tiles);
    }
    return;
  }
  // B in place: nothing is shared between the threads, so no barrier. Each thread keeps the
  // same tiles in every k-block, so each C element is still summed in order by one thread.
  if (in_place) {
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
      for (int64_t pc = 0; pc < K; pc += KC)
        run_tiles(p, pc, panels_of(p, pc, nullptr), tiles * id / nt, tiles * (id + 1) / nt);
    }
    return;
  }
  // One parallel region for every k-block (a product of depth 4096, dW, has 16). Each block:
  // the threads pack B's panels, wait for all of them, then each takes a contiguous range of
  // the C tiles, numbered strip-major; tiles rather than whole strips, so that a product with
  // few strips (dW of a 128-row weight: 11 strips of 12) still splits evenly.
#pragma omp parallel
  {
    const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
    for (int64_t pc = 0; pc < K; pc += KC) {
#pragma omp for schedule(static)
      for (int64_t jp = 0; jp < p.panels(); ++jp) pack_panel(p, pc, jp, bpd);
      run_tiles(p, pc, panels_of(p, pc, bpd), tiles * id / nt, tiles * (id + 1) / nt);
      if (pc + KC < K) {
#pragma omp barrier
      }  // the next block repacks B only once every tile of this one is done
    }
  }
}

int64_t sgemm_packed_floats(const SgemmKernel& uk, int64_t K, int64_t N) {
  return (N + uk.nr - 1) / uk.nr * uk.nr * K;
}

void sgemm_pack(const SgemmKernel& uk, bool tb, int64_t K, int64_t N, const float* B, int64_t ldb,
                float* dst) {
  for (int64_t jp = 0; jp * uk.nr < N; ++jp)
    uk.pack_b(B, tb, ldb, 0, K, jp * uk.nr, N, dst + jp * uk.nr * K);
}

void sgemm_prepacked(const SgemmKernel& uk, bool ta, int64_t M, int64_t n, int64_t kc, float alpha,
                     const float* A, int64_t lda, const PackedB& b, float beta, float* C,
                     int64_t ldc, CausalBand band) {
  if (M <= 0 || n <= 0) return;
  if (kc <= 0) return scale_c(M, n, beta, C, ldc);
  const Product p{uk, ta, false, M, n, kc, alpha, A, lda, nullptr, 0, beta, C, ldc, nullptr, band};
  // the same k-blocks as sgemm, so the same sums in the same order: identical results
  for (int64_t pc = 0; pc < kc; pc += KC) {
    const Panels panels = b.ld > 0 ? Panels{b.data + pc * b.ld, uk.nr, b.ld}
                                   : Panels{b.data + pc * uk.nr, uk.nr * b.K, uk.nr};
    run_tiles(p, pc, panels, 0, p.strips() * p.panels());
  }
}

}  // namespace poslab::kernel
