// test_cuda in a build without the CUDA backend: there are no [cuda] tests to run, so the
// binary only says why and exits 77, which CTest reports as skipped (as tests/cuda/main.cpp
// does on a machine without a GPU). The real suite is compiled only where it can run: the
// builds without CUDA (the portable and sanitizer builds of CI) would compile the Catch2
// runner and the three test files for a binary that always skips.
#include <cstdio>

#include "tensor/device.h"

int main() {
  std::printf("SKIP: the [cuda] tests need a GPU: %s\n", poslab::cuda_unavailable_reason().c_str());
  return 77;
}
