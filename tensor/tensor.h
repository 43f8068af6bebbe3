// tensor.h — the Tensor handle.
//
// A Tensor is a cheap handle: shared storage + shape + strides + offset + dtype + device.
// Copying a Tensor copies the handle, not the data. Views (reshape, transpose, permute,
// slice, expand) share storage and only change shape/strides/offset; contiguous() copies
// only when the layout is not already row-major.
//
// The methods here never record gradients. Differentiable versions of the same operations
// are free functions in autograd/ops.h (poslab::reshape(x, ...), poslab::matmul(a, b), ...).
//
// Shape legend used across poslab: B batch, T time, C model width, H heads, D head dim
// (C = H*D), V vocabulary.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/check.h"
#include "tensor/dtype.h"

namespace poslab {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);

// Raw memory of one device, obtained from that device's caching allocator.
class Storage {
 public:
  Storage(size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_ = Device::cpu;
};

// Deterministic generator: splitmix64 seeding + xoshiro256** — integer arithmetic only, so
// the same seed gives the same bits on every machine. normal() uses the Marsaglia polar
// method in double (needs only log and sqrt).
class Generator {
 public:
  explicit Generator(uint64_t seed = 0);
  uint64_t next_u64();
  double uniform();  // [0, 1) with 53 random bits
  double normal();   // N(0, 1)
  // The full state, for checkpoints that resume exactly.
  std::vector<uint64_t> state() const;
  void set_state(const std::vector<uint64_t>& s);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

struct Node;  // autograd/node.h
class Tensor;

// Autograd bookkeeping carried by a tensor that requires grad. Shared by all handles to
// the same tensor. A leaf (no grad_fn) keeps its gradient; an intermediate's gradient is
// freed as soon as its grad_fn has used it.
struct AutogradMeta {
  bool requires_grad = false;
  std::shared_ptr<Tensor> grad;   // accumulated gradient (same shape), or null
  std::shared_ptr<Node> grad_fn;  // the op that produced this tensor, null for a leaf
  bool graph_freed = false;       // set once backward() has consumed grad_fn
  std::string name;               // optional, for error messages ("transformer.wte.weight")
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor

  // ---- creation (contiguous, row-major) ----
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu);
  static Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32,
                     Device device = Device::cpu);
  static Tensor scalar(double value, DType dtype = DType::f32);
  static Tensor arange(int64_t n, DType dtype = DType::f32);
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape,
                            DType dtype = DType::f32);
  static Tensor randn(const Shape& shape, Generator& gen, double stddev = 1.0,
                      DType dtype = DType::f32);
  static Tensor uniform(const Shape& shape, Generator& gen, double lo, double hi,
                        DType dtype = DType::f32);

  // ---- properties ----
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return numel_of(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  std::string str() const;  // readable printing, values included for small tensors

  // Typed pointer to element [0,...,0]; checks that T matches dtype().
  template <class T>
  T* data() const;
  void* raw_data() const;

  // ---- element access (slow; for tests and printing) ----
  double item() const;                    // a one-element tensor's value
  double at(const Shape& index) const;    // value at a multi-index
  std::vector<double> to_vector() const;  // all values in row-major order

  // ---- views: share storage, no copy ----
  Tensor reshape(const Shape& shape) const;  // a view when strides allow, else a copy
  Tensor view(const Shape& shape) const;     // a view or an error naming the strides
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor expand(const Shape& shape) const;  // broadcast size-1 dims with stride 0
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;

  // ---- copies ----
  Tensor contiguous() const;  // itself when already contiguous
  Tensor clone() const;       // always a fresh contiguous copy
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  void copy_(const Tensor& src) const;  // writes the data (src may broadcast), any strides
  void fill_(double value) const;

  // ---- autograd (see autograd/) ----
  bool requires_grad() const { return meta_ && meta_->requires_grad; }
  Tensor& set_requires_grad(bool on);
  Tensor grad() const;    // undefined when no gradient has been accumulated
  Tensor detach() const;  // same storage, no autograd history
  bool is_leaf() const { return !meta_ || !meta_->grad_fn; }
  const std::shared_ptr<AutogradMeta>& meta() const { return meta_; }
  void set_meta(std::shared_ptr<AutogradMeta> m) { meta_ = std::move(m); }

 private:
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype,
         Device device);
  Tensor with_layout(Shape shape, Shape strides, int64_t offset) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu;
  std::shared_ptr<AutogradMeta> meta_;
};

// Checks used by every op wrapper: same dtype, same device, defined.
void check_same(const char* op, const Tensor& a, const Tensor& b);
void check_defined(const char* op, const Tensor& t, const char* name);
// A gradient to add into (*into, when defined): contiguous, of this shape, and `like`'s dtype
// and device.
void check_into(const char* op, const Tensor* into, const Shape& shape, const Tensor& like,
                const char* name);

// Caching allocator statistics for the CPU (bench and tests look at them).
struct AllocStats {
  size_t bytes_in_use = 0, bytes_cached = 0, peak_bytes = 0, fresh_allocations = 0;
};
AllocStats cpu_alloc_stats();
void cpu_empty_cache();

}  // namespace poslab
