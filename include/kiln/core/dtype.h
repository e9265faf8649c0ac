#pragma once
// Element types, their C++ counterparts, and PyTorch's type-promotion lattice.
#include <kiln/core/error.h>
#include <kiln/core/half.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};
inline constexpr int kNumDTypes = 10;

// PyTorch's spellings, usable as kiln::float32 etc.
inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kInt16 = DType::Int16;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType float32 = DType::Float32, float64 = DType::Float64, float16 = DType::Float16,
                       bfloat16 = DType::BFloat16, int64 = DType::Int64, int32 = DType::Int32,
                       int16 = DType::Int16, int8 = DType::Int8, uint8 = DType::UInt8,
                       bool_ = DType::Bool;

constexpr size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
      return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::Int32:
    case DType::Float32:
      return 4;
    case DType::Int64:
    case DType::Float64:
      return 8;
  }
  return 0;
}

constexpr bool is_floating_point(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
// Integral in PyTorch's sense; bool counts only when include_bool.
constexpr bool is_integral(DType t, bool include_bool = false) {
  return (t >= DType::UInt8 && t <= DType::Int64) || (include_bool && t == DType::Bool);
}
constexpr bool is_signed(DType t) { return t != DType::Bool && t != DType::UInt8; }

// "float32", as in torch.float32 (printed as torch.float32 by PyTorch; kiln prints kiln.float32).
std::string_view dtype_name(DType t);
// Accepts "float32", "float", "int64", "long", "bool", "bfloat16", "half", ...
std::optional<DType> dtype_from_name(std::string_view name);

// PyTorch's torch.promote_types.
DType promote_types(DType a, DType b);

// PyTorch's torch.can_cast: whether an op may write a result of dtype `from` into a tensor of
// dtype `to` (no floating -> integral, no numeric -> bool).
constexpr bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

// The default floating dtype (float32, like torch.get_default_dtype()).
constexpr DType default_float_dtype() { return DType::Float32; }

// C++ type <-> DType.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct dtype_of<Half> {
  static constexpr DType value = DType::Float16;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::Float64;
};
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

template <DType D>
struct cpp_type_of;
template <>
struct cpp_type_of<DType::Bool> {
  using type = bool;
};
template <>
struct cpp_type_of<DType::UInt8> {
  using type = uint8_t;
};
template <>
struct cpp_type_of<DType::Int8> {
  using type = int8_t;
};
template <>
struct cpp_type_of<DType::Int16> {
  using type = int16_t;
};
template <>
struct cpp_type_of<DType::Int32> {
  using type = int32_t;
};
template <>
struct cpp_type_of<DType::Int64> {
  using type = int64_t;
};
template <>
struct cpp_type_of<DType::Float16> {
  using type = Half;
};
template <>
struct cpp_type_of<DType::BFloat16> {
  using type = BFloat16;
};
template <>
struct cpp_type_of<DType::Float32> {
  using type = float;
};
template <>
struct cpp_type_of<DType::Float64> {
  using type = double;
};
template <DType D>
using cpp_type_t = typename cpp_type_of<D>::type;

// The type arithmetic on T is carried out in: float for the 16-bit floats, T otherwise.
template <typename T>
struct opmath {
  using type = T;
};
template <>
struct opmath<Half> {
  using type = float;
};
template <>
struct opmath<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename opmath<T>::type;

}  // namespace kiln

// Dispatch on a runtime dtype: KILN_DISPATCH_FLOATING(dtype, "op", [&]<typename scalar_t>() {...})
// calls the lambda with scalar_t bound to the matching C++ type, or raises kiln::Error naming the
// op and the unsupported dtype.
namespace kiln::detail {
template <typename T, typename F>
decltype(auto) call_typed(F&& f) {
  return std::forward<F>(f).template operator()<T>();
}
[[noreturn]] void unsupported_dtype(const char* op, DType t, const char* expected);
}  // namespace kiln::detail

#define KILN_DTYPE_CASE(D, f) \
  case D:                     \
    return ::kiln::detail::call_typed<::kiln::cpp_type_t<D>>(f);

#define KILN_DISPATCH_IMPL(dtype, op, expected, f, CASES)       \
  [&]() -> decltype(auto) {                                     \
    switch (dtype) {                                            \
      CASES(f)                                                  \
      default:                                                  \
        ::kiln::detail::unsupported_dtype(op, dtype, expected); \
    }                                                           \
  }()

#define KILN_CASES_FLOATING(f)               \
  KILN_DTYPE_CASE(::kiln::DType::Float32, f) \
  KILN_DTYPE_CASE(::kiln::DType::Float64, f) \
  KILN_DTYPE_CASE(::kiln::DType::Float16, f) \
  KILN_DTYPE_CASE(::kiln::DType::BFloat16, f)
#define KILN_CASES_INTEGRAL(f)             \
  KILN_DTYPE_CASE(::kiln::DType::UInt8, f) \
  KILN_DTYPE_CASE(::kiln::DType::Int8, f)  \
  KILN_DTYPE_CASE(::kiln::DType::Int16, f) \
  KILN_DTYPE_CASE(::kiln::DType::Int32, f) \
  KILN_DTYPE_CASE(::kiln::DType::Int64, f)
#define KILN_CASES_ALL(f) \
  KILN_CASES_FLOATING(f) KILN_CASES_INTEGRAL(f) KILN_DTYPE_CASE(::kiln::DType::Bool, f)
#define KILN_CASES_ALL_NO_BOOL(f) KILN_CASES_FLOATING(f) KILN_CASES_INTEGRAL(f)
#define KILN_CASES_INTEGRAL_AND_BOOL(f) \
  KILN_CASES_INTEGRAL(f) KILN_DTYPE_CASE(::kiln::DType::Bool, f)

#define KILN_DISPATCH_FLOATING(dtype, op, f) \
  KILN_DISPATCH_IMPL(dtype, op, "a floating point dtype", f, KILN_CASES_FLOATING)
#define KILN_DISPATCH_ALL(dtype, op, f) \
  KILN_DISPATCH_IMPL(dtype, op, "any dtype", f, KILN_CASES_ALL)
#define KILN_DISPATCH_ALL_NO_BOOL(dtype, op, f) \
  KILN_DISPATCH_IMPL(dtype, op, "a numeric (non-bool) dtype", f, KILN_CASES_ALL_NO_BOOL)
#define KILN_DISPATCH_INTEGRAL(dtype, op, f) \
  KILN_DISPATCH_IMPL(dtype, op, "an integral dtype", f, KILN_CASES_INTEGRAL)
#define KILN_DISPATCH_INTEGRAL_AND_BOOL(dtype, op, f) \
  KILN_DISPATCH_IMPL(dtype, op, "an integral or bool dtype", f, KILN_CASES_INTEGRAL_AND_BOOL)
