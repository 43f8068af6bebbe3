// cuda_runtime.h for the CPU emulator (tests/cuda/emu/run.sh): just enough of the CUDA runtime
// and of the device builtins for poslab's .cu files to compile with g++ and run on the CPU, so
// that the GPU code paths can be tested on a machine without a GPU.
//
// A launch runs its blocks one after another; a block runs its threads as ucontext fibers on
// one OS thread. __syncthreads() parks a thread until every live thread of its block is parked
// there; a warp shuffle parks it until every live lane of its warp has posted its value. So
// the emulator checks what a GPU would need: barriers reached by every thread (else it aborts
// with "deadlock"), shuffles by whole warps, shared memory shared by the block (`static`), no
// launch with a zero or oversized grid; and (emu_runtime.cpp) device memory that is
// inaccessible to the host outside kernels and copies, filled with NaN bytes when allocated.
// What it cannot check: real concurrency (races between threads are executed in one order),
// timing, and the hardware limits it does not model (registers, shared-memory size).
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <cstdio>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

template <class T>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
inline T max(T a, T b) {
  return a < b ? b : a;
}

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
typedef void* cudaStream_t;
typedef void* cudaEvent_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyDefault
};
#define cudaStreamNonBlocking 1
#define cudaEventDisableTiming 2
#define cudaHostAllocDefault 0
struct cudaDeviceProp {
  char name[256];
  int major, minor, multiProcessorCount;
  size_t totalGlobalMem;
};
inline const char* cudaGetErrorString(cudaError_t) {
  return "emulated error";
}
inline const char* cudaGetErrorName(cudaError_t) {
  return "cudaErrorEmulated";
}
inline cudaError_t cudaGetLastError() {
  return 0;
}
inline cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return 0;
}
inline cudaError_t cudaSetDevice(int) {
  return 0;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  strcpy(p->name, "CPU emulator");
  p->major = 9, p->minor = 0, p->multiProcessorCount = 2, p->totalGlobalMem = size_t(1) << 34;
  return 0;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = nullptr;
  return 0;
}
// Device memory is mapped inaccessible except while a kernel, a copy or a cuBLAS call runs:
// the host touching device memory directly crashes here, as it would on a GPU.
extern "C" void emu_access(int on);
extern "C" void* emu_malloc(size_t n);
extern "C" void emu_free(void* p);
// counts for EMU_COUNTS (emu_runtime.cpp): 0 launch, 1 cuBLAS product, 2 copy, 3 memset, 4 wait
extern "C" void emu_count(int what);
// a kernel launch by name, for EMU_COUNTS' per-kernel table and EMU_TRACE_KERNEL
extern "C" void emu_count_launch(const char* name);
inline cudaError_t cudaMalloc(void** p, size_t n) {
  *p = emu_malloc(n);
  return 0;
}
inline cudaError_t cudaFree(void* p) {
  emu_free(p);
  return 0;
}
inline cudaError_t cudaDeviceSynchronize() {
  emu_count(4);
  return 0;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  emu_count(2);
  emu_access(1);
  memmove(d, s, n);
  emu_access(0);
  return 0;
}
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) {
  emu_count(3);
  emu_access(1);
  memset(d, v, n);
  emu_access(0);
  return 0;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) {
  emu_count(4);
  return 0;
}
inline cudaError_t cudaHostAlloc(void* p, size_t n, unsigned) {
  *(void**)p = malloc(n);
  return 0;
}
template <class T>
inline cudaError_t cudaHostAlloc(T** p, size_t n, unsigned) {
  *p = (T*)malloc(n);
  return 0;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = nullptr;
  return 0;
}
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) {
  return 0;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) {
  emu_count(4);
  return 0;
}
inline cudaError_t cudaMemGetInfo(size_t* f, size_t* t) {
  *f = *t = size_t(1) << 34;
  return 0;
}

namespace emu {

struct Cfg {
  dim3 grid, block;
};
inline Cfg cfg(dim3 g, dim3 b, size_t = 0, cudaStream_t = nullptr) {
  return {g, b};
}

enum class State { running, block_barrier, warp_barrier, done };
struct Fiber {
  ucontext_t ctx;
  State state = State::running;
  unsigned tid;
  int shuffles = 0;
};
struct Block {
  std::vector<Fiber> fibers;
  ucontext_t sched;
  Fiber* current = nullptr;
  std::vector<double> slots[2];  // shuffle exchange, double-buffered by parity
  std::vector<std::vector<char>> stacks;
};
inline Block& block() {
  static Block b;
  return b;
}

inline void yield(State s) {
  Block& b = block();
  Fiber* f = b.current;
  f->state = s;
  swapcontext(&f->ctx, &b.sched);
}

inline void syncthreads() {
  yield(State::block_barrier);
}

template <class T>
T shfl_xor(T v, int mask) {
  Block& b = block();
  Fiber* f = b.current;
  static_assert(sizeof(T) <= sizeof(double));
  int parity = f->shuffles++ % 2;
  double slot = 0;
  memcpy(&slot, &v, sizeof(T));
  b.slots[parity][f->tid] = slot;
  yield(State::warp_barrier);
  unsigned partner = (f->tid & ~31u) | ((f->tid & 31u) ^ unsigned(mask));
  T r;
  memcpy(&r, &b.slots[parity][partner], sizeof(T));
  return r;
}

template <class F>
struct Entry {
  static void run(int hi, int lo) {
    auto* fn = reinterpret_cast<F*>((uintptr_t(unsigned(hi)) << 32) | uintptr_t(unsigned(lo)));
    Block& b = block();
    Fiber* f = b.current;
    (*fn)();
    f->state = State::done;
    swapcontext(&f->ctx, &b.sched);
  }
};

template <class F>
void run_block(F& fn, unsigned n) {
  Block& b = block();
  b.fibers.assign(n, Fiber{});
  b.slots[0].assign(n, 0), b.slots[1].assign(n, 0);
  while (b.stacks.size() < n) b.stacks.emplace_back(64 * 1024);
  uintptr_t p = reinterpret_cast<uintptr_t>(&fn);
  for (unsigned t = 0; t < n; ++t) {
    Fiber& f = b.fibers[t];
    f.tid = t;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = b.stacks[t].data();
    f.ctx.uc_stack.ss_size = b.stacks[t].size();
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, (void (*)())Entry<F>::run, 2, int(p >> 32), int(p & 0xffffffffu));
  }
  for (;;) {
    bool ran = false;
    for (auto& f : b.fibers)
      if (f.state == State::running) {
        b.current = &f;
        threadIdx = dim3(f.tid % blockDim.x, (f.tid / blockDim.x) % blockDim.y,
                         f.tid / (blockDim.x * blockDim.y));
        swapcontext(&b.sched, &f.ctx);
        ran = true;
      }
    if (ran) continue;
    bool all_done = true, released = false;
    bool all_block = true;
    for (auto& f : b.fibers) {
      if (f.state != State::done) all_done = false;
      if (f.state != State::done && f.state != State::block_barrier) all_block = false;
    }
    if (all_done) break;
    if (all_block) {
      for (auto& f : b.fibers)
        if (f.state == State::block_barrier) f.state = State::running;
      continue;
    }
    for (unsigned w = 0; w < n; w += 32) {  // a warp whose live lanes all wait at a shuffle
      bool all = true, any = false;
      for (unsigned t = w; t < std::min(n, w + 32); ++t) {
        State s = b.fibers[t].state;
        if (s == State::done) continue;
        any = true;
        if (s != State::warp_barrier) all = false;
      }
      if (any && all) {
        for (unsigned t = w; t < std::min(n, w + 32); ++t)
          if (b.fibers[t].state == State::warp_barrier) b.fibers[t].state = State::running;
        released = true;
      }
    }
    if (!released) {
      fprintf(stderr, "emu: deadlock in a block (threads wait at different barriers)\n");
      abort();
    }
  }
}

template <class... P, class... A>
void launch(Cfg c, const char* name, void (*kernel)(P...), A&&... args) {
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 || c.block.x == 0)
    throw std::runtime_error("emu: a launch with a zero grid or block dimension");
  if (c.block.x * c.block.y * c.block.z > 1024)
    throw std::runtime_error("emu: block > 1024 threads");
  if (c.grid.y > 65535 || c.grid.z > 65535) throw std::runtime_error("emu: grid.y/z > 65535");
  std::tuple<P...> params(std::forward<A>(args)...);
  emu_count_launch(name);
  gridDim = c.grid, blockDim = c.block;
  emu_access(1);
  for (unsigned z = 0; z < c.grid.z; ++z)
    for (unsigned y = 0; y < c.grid.y; ++y)
      for (unsigned x = 0; x < c.grid.x; ++x) {
        blockIdx = dim3(x, y, z);
        auto fn = [&] { std::apply(kernel, params); };
        run_block(fn, c.block.x * c.block.y * c.block.z);
      }
  emu_access(0);
}

}  // namespace emu

#define __syncthreads() ::emu::syncthreads()
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int mask, int = 32) {
  return ::emu::shfl_xor(v, mask);
}
