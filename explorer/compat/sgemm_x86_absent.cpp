// sgemm_x86_absent.cpp — the AVX2 and AVX-512 micro-kernels' names, for the WebAssembly build
// only, which does not compile them (tensor/sgemm_avx2.cpp, sgemm_avx512.cpp are x86 code).
// sgemm_kernel_for names all three kernels; in WebAssembly cpu_isa() is always generic, so it
// returns sgemm_wasm_kernel and these two are never used: their tiles are 0 x 0 and their
// functions null, which would fail at once if they were.
#include "tensor/sgemm.h"

namespace poslab::kernel {

const SgemmKernel sgemm_avx2_kernel = {"avx2 (not in WebAssembly)", 0, 0, nullptr, nullptr};
const SgemmKernel sgemm_avx512_kernel = {"avx512 (not in WebAssembly)", 0, 0, nullptr, nullptr};

}  // namespace poslab::kernel
