// device.cu — the CUDA runtime of poslab: device 0, one stream, one cuBLAS handle, a caching
// allocator on plain cudaMalloc, copies between host and device, and a pinned staging ring for
// small uploads. (In a build without CUDA, tensor/device_stub.cpp stands in for this file.)
//
// Caching allocator. cudaMalloc and cudaFree are slow (cudaFree also waits for the whole
// device), so a training step that allocated its activations afresh would stall on every
// step. Freed blocks go to a free list bucketed by size and are handed out again; they return
// to the driver only on cuda_empty_cache() or when an allocation fails (then once, and the
// allocation is retried). Reuse is safe without events because every kernel runs on the one
// stream: a block freed by the host is reused only by work queued after the work that used it.
// POSLAB_CUDA_EXACT_ALLOC=1 turns the cache off: every tensor gets a cudaMalloc of exactly its
// bytes and a cudaFree, so that compute-sanitizer's memcheck sees a read or write one element
// past a tensor (scripts/gpu_check.sh sanitize sets it). Slow; for checking only.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"

namespace poslab {

void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so that later calls can succeed
  fail("CUDA error at ", file, ":", line, ": ", call, ": ", cudaGetErrorName(e), " (",
       cudaGetErrorString(e), ")");
}

// cublasGetStatusString, once cuBLAS is loaded (blas() below)
static const char* (*g_blas_status)(cublasStatus_t) = nullptr;

void cublas_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fail("cuBLAS error at ", file, ":", line, ": ", call, ": status ", static_cast<int>(s), " (",
       g_blas_status ? g_blas_status(s) : "see cublasStatus_t in cublas_api.h", ")");
}

namespace {

// Buckets: 512-byte granularity up to 1 MiB, then powers of two split in 8 steps, so at most
// ~12% of a block is wasted.
size_t bucket_size(size_t bytes) {
  if (bytes <= (size_t(1) << 20)) return std::max<size_t>((bytes + 511) / 512 * 512, 512);
  size_t p = size_t(1) << 20;
  while (p * 2 <= bytes) p *= 2;
  size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

// Pinned host memory that small uploads are staged through: kSlots slots used in turn; an
// event recorded after a slot's last copy tells when it may be overwritten.
constexpr int kSlots = 4;
constexpr size_t kSlotBytes = size_t(1) << 20;

struct Runtime {
  cudaStream_t stream = nullptr;
  cudaDeviceProp prop{};
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;
  AllocStats stats;
  char* staging = nullptr;
  cudaEvent_t slot_done[kSlots] = {};
  int slot = 0;
  size_t cursor = 0;
};

// Why no GPU can be used, or "" when one can. Asked once; never throws.
const std::string& probe() {
  static const std::string why = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return std::string("no usable GPU (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    }
    if (n == 0) return std::string("no GPU was found (cudaGetDeviceCount returned 0)");
    return std::string();
  }();
  return why;
}

Runtime& runtime() {
  static Runtime* r = [] {
    require_device(Device::cuda, "cuda");
    auto* rt = new Runtime;  // never destroyed: tensors may outlive static destructors
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(&rt->prop, 0));
    CUDA_CHECK(cudaStreamCreateWithFlags(&rt->stream, cudaStreamNonBlocking));
    return rt;
  }();
  return *r;
}

void free_cached_locked(Runtime& r) {
  CUDA_CHECK(cudaDeviceSynchronize());  // no queued kernel may still use a cached block
  for (auto& [size, blocks] : r.free_blocks)
    for (void* p : blocks) CUDA_CHECK(cudaFree(p));
  r.free_blocks.clear();
  r.stats.bytes_cached = 0;
}

}  // namespace

// ---------------------------------------------------------------- device.h

bool cuda_available() {
  return probe().empty();
}

std::string cuda_unavailable_reason() {
  return probe().empty() ? std::string("a GPU is available") : probe();
}

std::string cuda_device_name() {
  if (!cuda_available()) return "no GPU: " + probe();
  const cudaDeviceProp& p = runtime().prop;
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", p.totalGlobalMem / double(1 << 30));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " + gib + " GiB)";
}

void synchronize(Device device) {
  if (device == Device::cuda) CUDA_CHECK(cudaStreamSynchronize(runtime().stream));
}

AllocStats cuda_alloc_stats() {
  if (!cuda_available()) return {};
  Runtime& r = runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.stats;
}

void cuda_empty_cache() {
  if (!cuda_available()) return;
  Runtime& r = runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  free_cached_locked(r);
}

// ---------------------------------------------------------------- storage (tensor.cpp)

static bool exact_alloc() {
  static const bool on = [] {
    const char* e = std::getenv("POSLAB_CUDA_EXACT_ALLOC");
    return e && std::strcmp(e, "1") == 0;
  }();
  return on;
}

void* cuda_allocate(size_t bytes) {
  Runtime& r = runtime();
  const bool exact = exact_alloc();
  size_t size = exact ? bytes : bucket_size(bytes);
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = exact ? r.free_blocks.end() : r.free_blocks.find(size);
  void* p = nullptr;
  if (it != r.free_blocks.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    r.stats.bytes_cached -= size;
  } else {
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {  // give the cache back to the driver, then retry
      cudaGetLastError();
      free_cached_locked(r);
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      fail("cuda allocator: cannot allocate ", size, " bytes on the GPU (", cudaGetErrorString(e),
           "); tensors hold ", r.stats.bytes_in_use, " bytes, the device has ", free_b, " of ",
           total_b, " bytes free");
    }
    r.stats.fresh_allocations++;
  }
  r.stats.bytes_in_use += size;
  r.stats.peak_bytes = std::max(r.stats.peak_bytes, r.stats.bytes_in_use);
  return p;
}

void cuda_deallocate(void* p, size_t bytes) {
  if (!p) return;
  Runtime& r = runtime();
  const bool exact = exact_alloc();
  size_t size = exact ? bytes : bucket_size(bytes);
  std::lock_guard<std::mutex> lock(r.mu);
  r.stats.bytes_in_use -= size;
  if (exact) {  // cudaFree waits for the device, so no queued kernel still uses p
    CUDA_CHECK(cudaFree(p));
    return;
  }
  r.free_blocks[size].push_back(p);
  r.stats.bytes_cached += size;
}

// dst <- src, bytes of them, between any two devices. Reads to the host wait for the copy
// (the caller is about to use the values); everything else is queued on the stream.
void cuda_copy(void* dst, const void* src, size_t bytes, Device dst_dev, Device src_dev) {
  if (bytes == 0) return;
  Runtime& r = runtime();
  if (dst_dev == Device::cuda && src_dev == Device::cpu) return gpu::upload(dst, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, r.stream));
  if (dst_dev == Device::cpu) CUDA_CHECK(cudaStreamSynchronize(r.stream));
}

// ---------------------------------------------------------------- the GPU's kernel table

// backend(Device::cuda) (backend.h): each family's .cu file adds its kernels.
kernel::Backend kernel::cuda::backend() {
  Backend k{};
  add_copies(k);
  add_elementwise(k);
  add_reductions(k);
  add_matmul(k);
  add_softmax(k);
  add_layer_norm(k);
  add_gelu(k);
  add_embedding(k);
  return k;
}

// ---------------------------------------------------------------- cuda_util.cuh

namespace gpu {

cudaStream_t stream() {
  return runtime().stream;
}
const Cublas& blas() {
  static const Cublas* b = [] {
    cudaStream_t s = runtime().stream;
    std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      fail("cuda: cannot load ", name, " (cuBLAS, from the CUDA toolkit or the nvidia-cublas ",
           "Python package): ", dlerror(), "; add its folder to LD_LIBRARY_PATH");
    auto sym = [&](const char* fn) {
      void* p = dlsym(lib, fn);
      if (!p) fail("cuda: ", name, " lacks ", fn);
      return p;
    };
    g_blas_status = reinterpret_cast<decltype(g_blas_status)>(sym("cublasGetStatusString"));
    auto* c = new Cublas;
    c->sgemm = reinterpret_cast<decltype(c->sgemm)>(sym("cublasSgemm_v2"));
    c->dgemm = reinterpret_cast<decltype(c->dgemm)>(sym("cublasDgemm_v2"));
    c->sgemm_batched =
        reinterpret_cast<decltype(c->sgemm_batched)>(sym("cublasSgemmStridedBatched"));
    c->dgemm_batched =
        reinterpret_cast<decltype(c->dgemm_batched)>(sym("cublasDgemmStridedBatched"));
    auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(sym("cublasCreate_v2"));
    auto set_stream = reinterpret_cast<decltype(&cublasSetStream_v2)>(sym("cublasSetStream_v2"));
    auto set_math = reinterpret_cast<decltype(&cublasSetMathMode)>(sym("cublasSetMathMode"));
    CUBLAS_CHECK(create(&c->handle));
    CUBLAS_CHECK(set_stream(c->handle, s));
    // plain FP32 products (no TF32), so that GPU and CPU results agree to float rounding
    CUBLAS_CHECK(set_math(c->handle, CUBLAS_DEFAULT_MATH));
    return c;
  }();
  return *b;
}
int sm_count() {
  return runtime().prop.multiProcessorCount;
}

void check_launch(const char* op) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    fail(op, ": the CUDA kernel launch failed: ", cudaGetErrorName(e), " (", cudaGetErrorString(e),
         ")");
}

void upload(void* dst, const void* src, size_t bytes) {
  Runtime& r = runtime();
  if (bytes > kSlotBytes) {  // rare and big (weights at load time): a plain, waited-for copy
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, r.stream));
    CUDA_CHECK(cudaStreamSynchronize(r.stream));
    return;
  }
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.staging) {
    CUDA_CHECK(cudaHostAlloc(&r.staging, kSlots * kSlotBytes, cudaHostAllocDefault));
    for (auto& ev : r.slot_done) CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  }
  if (r.cursor + bytes > kSlotBytes) {  // this slot is full: close it, wait for the next one
    CUDA_CHECK(cudaEventRecord(r.slot_done[r.slot], r.stream));
    r.slot = (r.slot + 1) % kSlots;
    CUDA_CHECK(cudaEventSynchronize(r.slot_done[r.slot]));  // long done, except under load
    r.cursor = 0;
  }
  char* stage = r.staging + r.slot * kSlotBytes + r.cursor;
  std::memcpy(stage, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, stage, bytes, cudaMemcpyHostToDevice, r.stream));
  r.cursor += (bytes + 255) / 256 * 256;
}

void download(void* dst, const void* src, size_t bytes) {
  cuda_copy(dst, src, bytes, Device::cpu, Device::cuda);
}

std::vector<Layout> make_layouts(const char* op, const Shape& shape,
                                 std::initializer_list<const Tensor*> ts) {
  // Broadcast strides of each tensor, dims of size 1 dropped (their index is always 0).
  std::vector<int64_t> size;
  std::vector<std::vector<int64_t>> strides(ts.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    size.push_back(shape[d]);
    size_t k = 0;
    for (const Tensor* t : ts) {
      int64_t lead = static_cast<int64_t>(shape.size()) - t->dim(), td = int64_t(d) - lead;
      bool broadcast = td < 0 || t->shape()[td] == 1;
      strides[k++].push_back(broadcast ? 0 : t->strides()[td]);
    }
  }
  // Merge dim d into d+1 when, for every tensor, stepping d equals stepping d+1 size times.
  std::vector<int64_t> msize;
  std::vector<std::vector<int64_t>> mstride(ts.size());
  for (int64_t d = static_cast<int64_t>(size.size()) - 1; d >= 0; --d) {
    bool merge = !msize.empty();
    for (size_t k = 0; merge && k < ts.size(); ++k)
      merge = strides[k][d] == mstride[k].back() * msize.back();
    if (merge) {
      msize.back() *= size[d];
    } else {
      msize.push_back(size[d]);
      for (size_t k = 0; k < ts.size(); ++k) mstride[k].push_back(strides[k][d]);
    }
  }
  if (msize.size() > size_t(kMaxDims))
    fail(op, ": the CUDA kernels walk at most ", kMaxDims, " dims, but shape ", shape_str(shape),
         " with these strides needs ", msize.size());
  std::vector<Layout> out(ts.size());
  size_t k = 0;
  for (const Tensor* t : ts) {
    Layout& l = out[k];
    l.nd = static_cast<int>(msize.size());
    for (int d = 0; d < l.nd; ++d) {  // msize is innermost-first; Layout is outermost-first
      l.size[d] = msize[l.nd - 1 - d];
      l.stride[d] = mstride[k][l.nd - 1 - d];
    }
    l.base = t->offset();
    ++k;
  }
  return out;
}

}  // namespace gpu
}  // namespace poslab
