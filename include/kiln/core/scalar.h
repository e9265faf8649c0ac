#pragma once
// A number passed where PyTorch takes a Python scalar: bool, integer or floating.
#include <kiln/core/dtype.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kiln {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v; }  // NOLINT: implicit, like a Python literal
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Scalar(T v)
      : kind_(Kind::Int) {  // NOLINT
    v_.i = static_cast<int64_t>(v);
  }
  template <typename T>
  requires(std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      Scalar(T v)
      : kind_(Kind::Float) {  // NOLINT
    if constexpr (std::is_floating_point_v<T>) {
      v_.d = static_cast<double>(v);
    } else {
      v_.d = static_cast<double>(static_cast<float>(v));
    }
  }

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Float; }

  // The dtype PyTorch gives a tensor made from this scalar: bool, int64 or float64 (a wrapped
  // number; promotion treats floating wrapped numbers as the default dtype).
  DType dtype() const {
    return kind_ == Kind::Bool ? DType::Bool : kind_ == Kind::Int ? DType::Int64 : DType::Float64;
  }

  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == Kind::Float ? v_.d != 0.0 : v_.i != 0;
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(to<double>()));
    } else {
      return kind_ == Kind::Float ? static_cast<T>(v_.d) : static_cast<T>(v_.i);
    }
  }
  double to_double() const { return to<double>(); }
  int64_t to_int() const { return to<int64_t>(); }
  bool to_bool() const { return to<bool>(); }

  bool operator==(const Scalar& o) const {
    if (kind_ == Kind::Float || o.kind_ == Kind::Float) return to_double() == o.to_double();
    return v_.i == o.v_.i;
  }

  std::string str() const;

 private:
  Kind kind_;
  union {
    int64_t i;
    double d;
  } v_;
};

}  // namespace kiln
