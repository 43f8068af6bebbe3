// compat.h — what Debian's emscripten 3.1.6 (its libc++, LLVM 14) lacks of the C++20 library
// that poslab's sources use. The explorer's WebAssembly build includes this file before every
// source (-include, explorer/CMakeLists.txt); the native build never sees it.
//   std::bit_cast (tensor/fast_exp.h): the compiler's own __builtin_bit_cast, which is what
//     newer libc++ implements it with.
//   std::from_chars for double (data/json.cpp reads numbers with it): libc++ 14 has only the
//     integer overloads. strtod on a NUL-terminated copy reads the same JSON numbers (the
//     WebAssembly C library has one locale, "C", so the decimal point is always '.').
#pragma once
#ifdef __cplusplus
#include <bit>
#include <charconv>
#include <cstdlib>
#include <string>
#include <system_error>
#include <type_traits>

namespace std {
#if !defined(__cpp_lib_bit_cast)
template <class To, class From>
constexpr To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
  return __builtin_bit_cast(To, from);
}
#endif

inline from_chars_result from_chars(const char* first, const char* last, double& value) {
  const std::string copy(first, last);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  const ptrdiff_t used = end - copy.c_str();
  if (used == 0) return {first, errc::invalid_argument};
  if (v == HUGE_VAL || v == -HUGE_VAL) return {first + used, errc::result_out_of_range};
  value = v;
  return {first + used, errc{}};
}
}  // namespace std
#endif
