#include "posenc/sinusoidal.h"

#include <cmath>

namespace poslab {

Tensor SinusoidalPE::table(int64_t n) const {
  if (!cache_f64_.defined() || cache_f64_.size(0) < n) {
    int64_t rows = std::max<int64_t>(n, 256);
    std::vector<double> v(rows * d_);
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t c = 0; c < d_; ++c) {
        int64_t i2 = c - c % 2;  // 2i
        double a = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(i2) / d_);
        v[p * d_ + c] = c % 2 == 0 ? std::sin(a) : std::cos(a);
      }
    cache_f64_ = Tensor::from_vector(v, {rows, d_}, DType::f64);
    cache_f32_ = cache_f64_.to(DType::f32);
  }
  return cache_f64_.slice(0, 0, n);
}

// x: (B,T,C) -> x + PE[pos0 .. pos0+T)
Tensor SinusoidalPE::add_to_embeddings(const Tensor& x, int64_t pos0) const {
  int64_t T = x.size(1);
  table(pos0 + T);
  Tensor t = x.dtype() == DType::f64 ? cache_f64_ : cache_f32_;
  if (x.device() != Device::cpu) {  // copied to the GPU once per table size and dtype
    if (!cache_device_.defined() || cache_device_.dtype() != t.dtype() ||
        cache_device_.size(0) != t.size(0))
      cache_device_ = t.to(x.device());
    t = cache_device_;
  }
  return add(x, t.slice(0, pos0, pos0 + T));  // the table requires no grad: a constant
}

}  // namespace poslab
