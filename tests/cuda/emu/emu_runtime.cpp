// Device memory of the CPU emulator (see include/cuda_runtime.h): one mmap per allocation,
// mapped PROT_NONE except while a kernel, a copy or a cuBLAS call runs (emu_access), so that
// host code reading a device pointer crashes here as it would on a GPU.
#include <execinfo.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
static std::map<void*, size_t>& live() {
  static std::map<void*, size_t> m;
  return m;
}
static int depth = 0;
extern "C" void emu_access(int on) {
  depth += on ? 1 : -1;
  if ((on && depth != 1) || (!on && depth != 0)) return;
  for (auto& [p, n] : live()) mprotect(p, n, on ? PROT_READ | PROT_WRITE : PROT_NONE);
}
extern "C" void* emu_malloc(size_t n) {
  size_t page = sysconf(_SC_PAGESIZE), len = (n + page - 1) / page * page;
  if (len == 0) len = page;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("emu: mmap failed");
  memset(p, 0xFF, n);  // NaN for floats: reading memory never written shows up
  if (depth == 0) mprotect(p, len, PROT_NONE);
  live()[p] = len;
  return p;
}
extern "C" void emu_free(void* p) {
  auto it = live().find(p);
  munmap(p, it->second);
  live().erase(it);
}

// With EMU_COUNTS set, the process prints at exit how many kernel launches, cuBLAS products,
// copies, memsets and host waits (stream, event or device synchronisations) it made: the
// host-side work of a GPU run, counted here since it does not depend on the device. With
// EMU_TRACE set, every host wait prints the call stack that made it; with EMU_TRACE_KERNEL=name,
// every launch of that kernel does (which op launched it). EMU_COUNTS also prints the launches
// of each kernel.
static long counts[5];
static std::map<std::string, long>& launches() {
  static auto* m = new std::map<std::string, long>;  // never destroyed: read at exit
  return *m;
}
extern "C" void emu_count(int what) {
  static bool registered = [] {
    if (getenv("EMU_COUNTS"))
      atexit([] {
        fprintf(stderr, "emu counts: %ld launches, %ld cublas, %ld memcpy, %ld memset, %ld waits\n",
                counts[0], counts[1], counts[2], counts[3], counts[4]);
        for (auto& [name, n] : launches()) fprintf(stderr, "  %8ld %s\n", n, name.c_str());
      });
    return true;
  }();
  (void)registered;
  ++counts[what];
  if (what == 4 && getenv("EMU_TRACE")) {
    void* frames[12];
    backtrace_symbols_fd(frames, backtrace(frames, 12), 2);
    fprintf(stderr, "----\n");
  }
}

extern "C" void emu_count_launch(const char* name) {
  emu_count(0);
  ++launches()[name];
  static const char* traced = getenv("EMU_TRACE_KERNEL");
  if (traced && strcmp(traced, name) == 0) {
    void* frames[14];
    backtrace_symbols_fd(frames, backtrace(frames, 14), 2);
    fprintf(stderr, "----\n");
  }
}
