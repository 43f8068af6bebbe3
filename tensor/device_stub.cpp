// device_stub.cpp — the CUDA entry points when poslab is built without CUDA: no tensor can be
// put on the GPU (cuda_allocate refuses, naming what was asked for and how to get it), so
// no kernel below is ever reached; each exists for the linker and would only say so.
#include "tensor/cuda_ops.h"
#include "tensor/device.h"

namespace poslab {

static const char* kNoCuda =
    "this poslab was built without CUDA (nvcc not found at configure time, or "
    "-DPOSLAB_CUDA=OFF); install the CUDA toolkit and rebuild";

void no_cuda(const char* what) {
  fail(what, ": ", kNoCuda);
}

bool cuda_available() {
  return false;
}
std::string cuda_unavailable_reason() {
  return kNoCuda;
}
std::string cuda_device_name() {
  return std::string("no GPU: ") + kNoCuda;
}
void synchronize(Device) {}
AllocStats cuda_alloc_stats() {
  return {};
}
void cuda_empty_cache() {}

void* cuda_allocate(size_t) {
  no_cuda("a tensor on device cuda");
}
void cuda_deallocate(void*, size_t) {}
void cuda_copy(void*, const void*, size_t, Device, Device) {
  no_cuda("a copy to or from device cuda");
}

namespace kernel::cuda {

void copy(const Tensor&, const Tensor&) {
  no_cuda("copy_");
}
void fill(const Tensor&, double) {
  no_cuda("fill_");
}
Tensor binary(BinaryOp, const Tensor&, const Tensor&) {
  no_cuda("binary");
}
Tensor unary(UnaryOp, const Tensor&) {
  no_cuda("unary");
}
Tensor pow_scalar(const Tensor&, double) {
  no_cuda("pow");
}
Tensor affine(const Tensor&, double, double) {
  no_cuda("affine");
}
Tensor where(const Tensor&, const Tensor&, const Tensor&) {
  no_cuda("where");
}
void add_(const Tensor&, const Tensor&, double) {
  no_cuda("add_");
}
void scale_(const Tensor&, double) {
  no_cuda("scale_");
}
int64_t first_non_finite(const std::vector<Tensor>&) {
  no_cuda("first_non_finite");
}
void zero_(const std::vector<Tensor>&) {
  no_cuda("zero_");
}
Tensor sum(const Tensor&, const std::vector<int64_t>&, bool) {
  no_cuda("sum");
}
Tensor max(const Tensor&, int64_t, bool) {
  no_cuda("max");
}
double sum_squares(const Tensor&) {
  no_cuda("sum_squares");
}
Tensor matmul(const Tensor&, const Tensor&) {
  no_cuda("matmul");
}
Tensor linear(const Tensor&, const Tensor&, const Tensor&) {
  no_cuda("linear");
}
void linear_backward(const Tensor&, const Tensor&, const Tensor&, Tensor*, Tensor*, Tensor*) {
  no_cuda("linear_backward");
}
Tensor softmax(const Tensor&) {
  no_cuda("softmax");
}
Tensor softmax_backward(const Tensor&, const Tensor&) {
  no_cuda("softmax_backward");
}
Tensor log_softmax(const Tensor&) {
  no_cuda("log_softmax");
}
Tensor log_softmax_backward(const Tensor&, const Tensor&) {
  no_cuda("log_softmax_backward");
}
Tensor cross_entropy(const Tensor&, const Ids&, Tensor*, Tensor*) {
  no_cuda("cross_entropy");
}
Tensor cross_entropy_backward(const Tensor&, const Ids&, const Tensor&) {
  no_cuda("cross_entropy_backward");
}
Tensor layer_norm(const Tensor&, const Tensor&, const Tensor&, double, Tensor*, Tensor*) {
  no_cuda("layer_norm");
}
void layer_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         Tensor*, Tensor*, Tensor*) {
  no_cuda("layer_norm_backward");
}
Tensor gelu(const Tensor&) {
  no_cuda("gelu");
}
Tensor gelu_backward(const Tensor&, const Tensor&) {
  no_cuda("gelu_backward");
}
Tensor embedding(const Tensor&, const Ids&) {
  no_cuda("embedding");
}
Tensor embedding_backward(const Tensor&, const Ids&, int64_t) {
  no_cuda("embedding_backward");
}

}  // namespace kernel::cuda
}  // namespace poslab
