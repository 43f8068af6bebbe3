// allocator.h — the CPU caching allocator.
//
// Fresh pages cost a page fault each on first touch, slow on VMs (the page faults in `make
// bench`'s summary), so a training step that allocated its activations anew would pay that
// on every step. Freed blocks go to a free list bucketed by size and are handed out again;
// memory returns to the OS only on cpu_empty_cache(). Blocks are 64-byte aligned (one cache
// line, one AVX-512 vector); blocks of 2 MiB and more are 2 MiB aligned and asked to be
// transparent huge pages (allocator.cpp).
#pragma once
#include <cstddef>

namespace poslab {

void* cpu_allocate(size_t bytes);            // size is rounded up to a bucket internally
void cpu_deallocate(void* p, size_t bytes);  // bytes: the size passed to cpu_allocate

}  // namespace poslab
