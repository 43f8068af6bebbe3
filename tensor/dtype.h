// dtype.h — the two element types poslab computes in, and the one place they are dispatched.
//
// f32 is what models train in; f64 exists so that finite-difference gradient checks are
// exact enough (central differences in f32 lose ~half the digits).
#pragma once
#include <cstddef>
#include <cstdint>

namespace poslab {

enum class DType : uint8_t { f32, f64 };
enum class Device : uint8_t { cpu, cuda };

inline size_t dtype_size(DType t) {
  return t == DType::f32 ? 4 : 8;
}
inline const char* dtype_name(DType t) {
  return t == DType::f32 ? "f32" : "f64";
}
inline const char* device_name(Device d) {
  return d == Device::cpu ? "cpu" : "cuda";
}

// The single dtype dispatch point: calls f(T{}) with T = float or double.
//   dispatch(x.dtype(), [&](auto zero) { using T = decltype(zero); kernel<T>(...); });
template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  if (t == DType::f32) return f(float{});
  return f(double{});
}

}  // namespace poslab
