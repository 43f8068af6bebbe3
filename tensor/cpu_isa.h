// cpu_isa.h — which vector instructions our hand-written kernels may use on this CPU.
//
// The build decides how ordinary loops are vectorised (-march=native by default, x86-64 for a
// portable build); the hand-written kernels (the sgemm micro-kernels) are compiled for each
// instruction set with function-level target attributes and picked here at run time, so one
// binary is right everywhere and fast on AVX2 and on AVX-512 CPUs.
#pragma once

namespace poslab::kernel {

// Ordered: each level includes the one before it.
enum class Isa { generic, avx2, avx512 };  // avx2 means AVX2 + FMA; avx512 means AVX-512F

// The widest ISA this CPU supports (checked with the CPU's own feature bits).
Isa cpu_isa_supported();

// The ISA our kernels use: cpu_isa_supported(), lowered by the environment variable
// POSLAB_ISA = generic | avx2 | avx512 (a cap: asking for more than the CPU has gives what it
// has). Decided once per process; a value outside that list is an error naming it.
Isa cpu_isa();

// "generic", "avx2", "avx512"
const char* isa_name(Isa isa);

}  // namespace poslab::kernel
