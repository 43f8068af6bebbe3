// The Catch2 main of test_cuda. Without a usable GPU (or without the CUDA backend) it prints
// the reason and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE, CMakeLists.txt).
#include <cstdio>
#include <string>

#include "tensor/device.h"
#include "tests/support/catch_session.h"

int main(int argc, char** argv) {
  bool listing = argc > 1 && std::string(argv[1]).rfind("--list", 0) == 0;  // needs no GPU
  if (!listing && !poslab::cuda_available()) {
    std::printf("SKIP: the [cuda] tests need a GPU: %s\n",
                poslab::cuda_unavailable_reason().c_str());
    return 77;
  }
  std::printf("GPU: %s\n", poslab::cuda_device_name().c_str());
  return poslab::test::run_catch_session(argc, argv);
}
