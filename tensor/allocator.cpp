#include "tensor/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "tensor/tensor.h"

namespace poslab {
namespace {

// Buckets: 64-byte granularity below 4 KiB, then powers of two split in 4 steps
// (1.0, 1.25, 1.5, 1.75 x 2^k), so at most ~25% of a block is wasted.
size_t bucket_size(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) / 64 * 64 + (bytes == 0 ? 64 : 0);
  size_t p = 4096;
  while (p * 2 <= bytes) p *= 2;
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;
  AllocStats stats;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may outlive static destructors
  return *c;
}

// Blocks of 2 MiB and more start on a 2 MiB boundary and are offered to the kernel as
// transparent huge pages (Linux, madvise; with THP "always" they would be huge anyway, with
// "never" the advice is ignored). A canonical step's activations are such blocks (4096 x 128
// floats: 2 MiB; the MLP's 4096 x 512: 8 MiB), and its element-wise ops, layer norms and
// products stream through them: one TLB entry per 2 MiB instead of per 4 KiB. bench_train_step,
// alternating with a 4 KiB build, shows the AVX-512 step faster and the AVX2 one unchanged, for
// little more memory (bench_eval_long's peak RSS at 8192).
constexpr size_t kHugePage = size_t(2) << 20;

void* fresh_block(size_t size) {
  if (size < kHugePage) return std::aligned_alloc(64, size);
  const size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a refusal changes nothing
#endif
  return p;
}

}  // namespace

void* cpu_allocate(size_t bytes) {
  size_t size = bucket_size(bytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_blocks.find(size);
    if (it != c.free_blocks.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.stats.bytes_cached -= size;
      c.stats.bytes_in_use += size;
      if (c.stats.bytes_in_use > c.stats.peak_bytes) c.stats.peak_bytes = c.stats.bytes_in_use;
      return p;
    }
  }
  void* p = fresh_block(size);
  if (!p) {
    cpu_empty_cache();
    p = fresh_block(size);
  }
  if (!p) fail("cpu allocator: out of memory allocating ", size, " bytes");
  std::lock_guard<std::mutex> lock(c.mu);
  c.stats.fresh_allocations++;
  c.stats.bytes_in_use += size;
  if (c.stats.bytes_in_use > c.stats.peak_bytes) c.stats.peak_bytes = c.stats.bytes_in_use;
  return p;
}

void cpu_deallocate(void* p, size_t bytes) {
  if (!p) return;
  size_t size = bucket_size(bytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.free_blocks[size].push_back(p);
  c.stats.bytes_in_use -= size;
  c.stats.bytes_cached += size;
}

AllocStats cpu_alloc_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

void cpu_empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [size, blocks] : c.free_blocks)
    for (void* p : blocks) std::free(p);
  c.free_blocks.clear();
  c.stats.bytes_cached = 0;
}

}  // namespace poslab
