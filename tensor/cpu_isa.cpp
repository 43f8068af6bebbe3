// cpu_isa.cpp — run-time detection of AVX2/FMA and AVX-512 (see cpu_isa.h).
#include "tensor/cpu_isa.h"

#include <cstdlib>
#include <cstring>

#include "tensor/check.h"

namespace poslab::kernel {

Isa cpu_isa_supported() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
  return Isa::generic;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    case Isa::generic:
      break;
  }
  return "generic";
}

Isa cpu_isa() {
  static const Isa isa = [] {
    const Isa have = cpu_isa_supported();
    const char* env = std::getenv("POSLAB_ISA");
    if (!env || !*env) return have;
    for (Isa want : {Isa::generic, Isa::avx2, Isa::avx512})
      if (std::strcmp(env, isa_name(want)) == 0) return want < have ? want : have;
    fail("POSLAB_ISA: expected generic, avx2 or avx512, but got '", env, "'");
  }();
  return isa;
}

}  // namespace poslab::kernel
