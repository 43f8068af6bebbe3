#include "tensor/tensor.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "tensor/allocator.h"
#include "tensor/strided.h"

namespace poslab {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ")";
  return os.str();
}

size_t name_index(const std::vector<std::string>& names, const std::string& name,
                  const std::string& flag) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
    list += (i ? "|" : "") + names[i];
  }
  fail(flag, ": expected one of ", list, ", but got '", name, "'");
}

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    st[d] = s;
    s *= std::max<int64_t>(shape[d], 1);
  }
  return st;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  Shape st(shape.size(), 0);
  int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  for (int64_t d = 0; d < t.dim(); ++d) st[lead + d] = t.shape()[d] == 1 ? 0 : t.strides()[d];
  return st;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      fail(op, ": shapes ", shape_str(a), " and ", shape_str(b), " cannot be broadcast together");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

void check_defined(const char* op, const Tensor& t, const char* name) {
  if (!t.defined())
    fail(op, ": expected a defined tensor for ", name, ", but got an undefined one");
}

void check_into(const char* op, const Tensor* into, const Shape& shape, const Tensor& like,
                const char* name) {
  if (!into || !into->defined()) return;
  check_same(op, *into, like);
  if (into->shape() != shape || !into->is_contiguous())
    fail(op, ": the ", name, " to add into must be contiguous with shape ", shape_str(shape),
         ", but got ", shape_str(into->shape()), into->is_contiguous() ? "" : " (not contiguous)");
}

void check_same(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, a, "the first operand");
  check_defined(op, b, "the second operand");
  if (a.dtype() != b.dtype())
    fail(op, ": expected operands of the same dtype, but got ", dtype_name(a.dtype()), " ",
         shape_str(a.shape()), " and ", dtype_name(b.dtype()), " ", shape_str(b.shape()));
  if (a.device() != b.device())
    fail(op, ": expected operands on the same device, but got ", device_name(a.device()), " and ",
         device_name(b.device()));
}

// ---------------------------------------------------------------- Storage

void* cuda_allocate(size_t bytes);  // tensor/cuda/ when built with CUDA, else throws
void cuda_deallocate(void* p, size_t bytes);

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = device == Device::cpu ? cpu_allocate(bytes) : cuda_allocate(bytes);
}

Storage::~Storage() {
  if (device_ == Device::cpu)
    cpu_deallocate(data_, bytes_);
  else
    cuda_deallocate(data_, bytes_);
}

// ---------------------------------------------------------------- Generator

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Generator::Generator(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Generator::next_u64() {  // xoshiro256** (Blackman & Vigna, 2018)
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2 * uniform() - 1;
    v = 2 * uniform() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  double f = std::sqrt(-2 * std::log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

std::vector<uint64_t> Generator::state() const {
  uint64_t spare_bits;
  std::memcpy(&spare_bits, &spare_, 8);
  return {s_[0], s_[1], s_[2], s_[3], has_spare_ ? 1u : 0u, spare_bits};
}

void Generator::set_state(const std::vector<uint64_t>& s) {
  POSLAB_CHECK(s.size() == 6, "Generator::set_state: expected 6 words, but got ", s.size());
  for (int i = 0; i < 4; ++i) s_[i] = s[i];
  has_spare_ = s[4] != 0;
  std::memcpy(&spare_, &s[5], 8);
}

// ---------------------------------------------------------------- creation

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset,
               DType dtype, Device device)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype),
      device_(device) {}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape)
    if (s < 0) fail("Tensor::empty: expected non-negative sizes, but got ", shape_str(shape));
  size_t bytes = static_cast<size_t>(numel_of(shape)) * dtype_size(dtype);
  auto st = std::make_shared<Storage>(bytes, device);
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, dtype, device);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  return full(shape, 0.0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) {
  return full(shape, 1.0, dtype, device);
}
Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.fill_(value);
  return t;
}
Tensor Tensor::scalar(double value, DType dtype) {
  return full({}, value, dtype);
}

Tensor Tensor::arange(int64_t n, DType dtype) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return from_vector(v, {n}, dtype);
}

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (numel_of(shape) != static_cast<int64_t>(values.size()))
    fail("Tensor::from_vector: expected ", numel_of(shape), " values for shape ", shape_str(shape),
         ", but got ", values.size());
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
  });
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, double stddev, DType dtype) {
  std::vector<double> v(numel_of(shape));
  for (double& x : v) x = gen.normal() * stddev;
  return from_vector(v, shape, dtype);
}

Tensor Tensor::uniform(const Shape& shape, Generator& gen, double lo, double hi, DType dtype) {
  std::vector<double> v(numel_of(shape));
  for (double& x : v) x = lo + (hi - lo) * gen.uniform();
  return from_vector(v, shape, dtype);
}

// ---------------------------------------------------------------- properties

int64_t Tensor::size(int64_t d) const {
  int64_t n = dim();
  if (d < -n || d >= n)
    fail("Tensor::size: dim ", d, " out of range for shape ", shape_str(shape_));
  return shape_[d < 0 ? d + n : d];
}

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != expect) return false;
    expect *= shape_[d];
  }
  return true;
}

template <class T>
T* Tensor::data() const {
  constexpr DType want = sizeof(T) == 4 ? DType::f32 : DType::f64;
  if (!defined()) fail("Tensor::data: the tensor is undefined");
  if (dtype_ != want)
    fail("Tensor::data: expected dtype ", dtype_name(want), ", but got ", dtype_name(dtype_));
  return static_cast<T*>(storage_->data()) + offset_;
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;

void* Tensor::raw_data() const {
  return static_cast<char*>(storage_->data()) + offset_ * dtype_size(dtype_);
}

double Tensor::at(const Shape& index) const {
  if (static_cast<int64_t>(index.size()) != dim())
    fail("Tensor::at: expected ", dim(), " indices, but got ", index.size());
  if (device_ != Device::cpu) return to(Device::cpu).at(index);
  int64_t off = offset_;
  for (int64_t d = 0; d < dim(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d])
      fail("Tensor::at: index ", shape_str(index), " out of range for shape ", shape_str(shape_));
    off += index[d] * strides_[d];
  }
  return dispatch(dtype_, [&](auto zero) -> double {
    using T = decltype(zero);
    return static_cast<const T*>(storage_->data())[off];
  });
}

double Tensor::item() const {
  if (numel() != 1) fail("Tensor::item: expected one element, but got shape ", shape_str(shape_));
  return to_vector()[0];
}

std::vector<double> Tensor::to_vector() const {
  Tensor c = to(Device::cpu).contiguous();
  std::vector<double> v(c.numel());
  dispatch(dtype_, [&](auto zero) {
    using T = decltype(zero);
    const T* p = c.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  });
  return v;
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor" << shape_str(shape_) << " " << dtype_name(dtype_) << " " << device_name(device_);
  if (requires_grad()) os << " requires_grad";
  if (numel() > 64) return os.str();
  std::vector<double> v = to_vector();
  os << "\n";
  int64_t inner = dim() ? shape_.back() : 1;
  for (size_t i = 0; i < v.size(); ++i) {
    os << (i % inner == 0 ? "[" : " ") << v[i];
    if ((i + 1) % inner == 0) os << "]\n";
  }
  return os.str();
}

// ---------------------------------------------------------------- autograd hooks

Tensor& Tensor::set_requires_grad(bool on) {
  if (!on) {
    if (meta_) meta_->requires_grad = false;
    return *this;
  }
  if (!meta_) meta_ = std::make_shared<AutogradMeta>();
  meta_->requires_grad = true;
  return *this;
}

Tensor Tensor::grad() const {
  return meta_ && meta_->grad ? *meta_->grad : Tensor();
}

Tensor Tensor::detach() const {
  return with_layout(shape_, strides_, offset_);
}

}  // namespace poslab
