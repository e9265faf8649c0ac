// The compute loops of the binary and ternary ops, compiled once per CPU capability.
#include "ops/binary/binary_kernels.h"
#include "ops/cpu/loops.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::BinaryOp;
using ops::TensorIterator;
using ops::TernaryOp;

template <typename T>
inline constexpr bool kFloating =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// PyTorch's message for integer division or modulo by zero.
[[noreturn]] void zero_division() { KILN_FAIL("ZeroDivisionError"); }

// -a with two's-complement wrap-around (INT_MIN / -1 must not be undefined behaviour).
template <typename T>
T wrapping_neg(T a) {
  return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
}

template <typename T>
T int_div_trunc(T a, T b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}

template <typename T>
T int_div_floor(T a, T b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
    T q = static_cast<T>(a / b);
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return static_cast<T>(a / b);
  }
}

template <typename T>
T int_remainder(T a, T b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

template <typename T>
T int_fmod(T a, T b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// Integer power by squaring in unsigned arithmetic (wraps like PyTorch); negative exponents give
// 1/a truncated: 1 for a == 1, +-1 for a == -1, else 0.
template <typename T>
T int_pow(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<T>;
  U base = static_cast<U>(a), result = 1;
  for (auto e = static_cast<U>(b); e != 0; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(result);
}

// PyTorch's shifts: amounts that are negative or at least the bit width give 0 (left) or the
// sign fill (right).
template <typename T>
T left_shift(T a, T b) {
  constexpr T max_shift = sizeof(T) * 8;
  if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= max_shift) return 0;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
}
template <typename T>
T right_shift(T a, T b) {
  constexpr T max_shift = sizeof(T) * 8 - std::is_signed_v<T>;
  if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= max_shift) {
    return static_cast<T>(a >> max_shift);
  }
  return static_cast<T>(a >> b);
}

// Floor division for floats, as PyTorch computes it (exact for representable quotients).
template <typename C>
C float_div_floor(C a, C b) {
  if (b == 0) return a / b;
  C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(C(0), a / b);
  C floordiv = std::floor(div);
  if (div - floordiv > C(0.5)) floordiv += 1;
  return floordiv;
}

template <typename C>
C float_remainder(C a, C b) {
  C mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}

template <typename C>
C max_propagate_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename C>
C min_propagate_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

// PyTorch's lerp: the formula is chosen by |weight| for accuracy at both ends.
template <typename C>
C lerp(C a, C b, C w) {
  return std::abs(w) < C(0.5) ? a + w * (b - a) : b - (b - a) * (C(1) - w);
}
// The same formulas, lane by lane (the same operations in the same order: the same results).
template <typename T>
Vec<T> lerp(Vec<T> a, Vec<T> b, Vec<T> w) {
  const Vec<T> abs_w = select<T>(w < Vec<T>(T(0)), -w, w);
  return select<T>(abs_w < Vec<T>(T(0.5)), a + w * (b - a), b - (b - a) * (Vec<T>(T(1)) - w));
}

// Runs f on elements computed in opmath_t<T> (float for the 16-bit floats).
template <typename T, typename F>
void scalar_binary(TensorIterator& iter, F f) {
  using O = opmath_t<T>;
  cpu_kernel(
      iter, [f](T a, T b) -> T { return static_cast<T>(f(static_cast<O>(a), static_cast<O>(b))); });
}

// f is generic: called with T scalars and with Vec<T>. Types without SIMD take the scalar path.
template <typename T, typename F>
void vec_binary(TensorIterator& iter, F f) {
  if constexpr (kVectorizable<T>) {
    cpu_kernel_vec(
        iter, [f](T a, T b) -> T { return f(a, b); }, [f](Vec<T> a, Vec<T> b) { return f(a, b); });
  } else {
    scalar_binary<T>(iter, f);
  }
}

// f is generic, of three operands: called with opmath_t<T> scalars and with Vec<T>.
template <typename T, typename F>
void vec_ternary(TensorIterator& iter, F f) {
  using O = opmath_t<T>;
  if constexpr (kVectorizable<T>) {
    cpu_kernel_vec(
        iter, [f](T a, T b, T c) -> T { return f(a, b, c); },
        [f](Vec<T> a, Vec<T> b, Vec<T> c) { return f(a, b, c); });
  } else {
    cpu_kernel(iter, [f](T a, T b, T c) -> T {
      return static_cast<T>(f(static_cast<O>(a), static_cast<O>(b), static_cast<O>(c)));
    });
  }
}

template <typename T, typename F>
void compare(TensorIterator& iter, F f) {
  using O = opmath_t<T>;
  cpu_kernel(iter, [f](T a, T b) -> bool { return f(static_cast<O>(a), static_cast<O>(b)); });
}

template <typename T>
void binary_typed(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  using O = opmath_t<T>;
  constexpr bool floating = kFloating<T>;
  constexpr bool boolean = std::is_same_v<T, bool>;
  switch (op) {
    case BinaryOp::Add:
      if constexpr (boolean) {
        const bool al = alpha.to<bool>();
        return cpu_kernel(iter, [al](bool a, bool b) { return a || (al && b); });
      } else {
        const O al = alpha.to<O>();
        if (al == O(1)) return vec_binary<T>(iter, [](auto a, auto b) { return a + b; });
        return vec_binary<T>(iter, [al](auto a, auto b) {
          using V = decltype(a);
          return a + V(al) * b;
        });
      }
    case BinaryOp::Mul:
      if constexpr (boolean) {
        return cpu_kernel(iter, [](bool a, bool b) { return a && b; });
      } else {
        return vec_binary<T>(iter, [](auto a, auto b) { return a * b; });
      }
    case BinaryOp::Div:
      if constexpr (floating) return vec_binary<T>(iter, [](auto a, auto b) { return a / b; });
      break;
    case BinaryOp::DivTrunc:
      if constexpr (floating) {
        return scalar_binary<T>(iter, [](O a, O b) { return std::trunc(a / b); });
      } else if constexpr (!boolean) {
        return cpu_kernel(iter, [](T a, T b) { return int_div_trunc(a, b); });
      }
      break;
    case BinaryOp::DivFloor:
      if constexpr (floating) {
        return scalar_binary<T>(iter, [](O a, O b) { return float_div_floor(a, b); });
      } else if constexpr (!boolean) {
        return cpu_kernel(iter, [](T a, T b) { return int_div_floor(a, b); });
      }
      break;
    case BinaryOp::Remainder:
      if constexpr (floating) {
        return scalar_binary<T>(iter, [](O a, O b) { return float_remainder(a, b); });
      } else if constexpr (!boolean) {
        return cpu_kernel(iter, [](T a, T b) { return int_remainder(a, b); });
      }
      break;
    case BinaryOp::Fmod:
      if constexpr (floating) {
        return scalar_binary<T>(iter, [](O a, O b) { return std::fmod(a, b); });
      } else if constexpr (!boolean) {
        return cpu_kernel(iter, [](T a, T b) { return int_fmod(a, b); });
      }
      break;
    case BinaryOp::Pow:
      if constexpr (floating) {
        return scalar_binary<T>(iter, [](O a, O b) { return std::pow(a, b); });
      } else if constexpr (!boolean) {
        return cpu_kernel(iter, [](T a, T b) { return int_pow(a, b); });
      }
      break;
    case BinaryOp::Atan2:
      if constexpr (floating) {
        if constexpr (kVectorizable<T>) {
          return cpu_kernel_vec(
              iter, [](T a, T b) -> T { return std::atan2(a, b); },
              [](Vec<T> a, Vec<T> b) { return atan2(a, b); });
        } else {
          return scalar_binary<T>(iter, [](O a, O b) { return std::atan2(a, b); });
        }
      }
      break;
    case BinaryOp::Maximum:
      if constexpr (kVectorizable<T>) {
        return cpu_kernel_vec(
            iter, [](T a, T b) -> T { return max_propagate_nan(a, b); },
            [](Vec<T> a, Vec<T> b) { return maximum(a, b); });
      } else {
        return scalar_binary<T>(iter, [](O a, O b) { return max_propagate_nan(a, b); });
      }
    case BinaryOp::Minimum:
      if constexpr (kVectorizable<T>) {
        return cpu_kernel_vec(
            iter, [](T a, T b) -> T { return min_propagate_nan(a, b); },
            [](Vec<T> a, Vec<T> b) { return minimum(a, b); });
      } else {
        return scalar_binary<T>(iter, [](O a, O b) { return min_propagate_nan(a, b); });
      }
    case BinaryOp::Lerp:
      if constexpr (floating) {
        const O w = alpha.to<O>();
        return vec_binary<T>(iter, [w](auto a, auto b) {
          using V = decltype(a);
          return lerp(a, b, V(w));
        });
      }
      break;
    case BinaryOp::BitwiseAnd:
      if constexpr (!floating) return cpu_kernel(iter, [](T a, T b) -> T { return a & b; });
      break;
    case BinaryOp::BitwiseOr:
      if constexpr (!floating) return cpu_kernel(iter, [](T a, T b) -> T { return a | b; });
      break;
    case BinaryOp::BitwiseXor:
      if constexpr (!floating) return cpu_kernel(iter, [](T a, T b) -> T { return a ^ b; });
      break;
    case BinaryOp::LeftShift:
      if constexpr (!floating && !boolean) {
        return cpu_kernel(iter, [](T a, T b) { return left_shift(a, b); });
      }
      break;
    case BinaryOp::RightShift:
      if constexpr (!floating && !boolean) {
        return cpu_kernel(iter, [](T a, T b) { return right_shift(a, b); });
      }
      break;
    case BinaryOp::Eq:
      return compare<T>(iter, [](O a, O b) { return a == b; });
    case BinaryOp::Ne:
      return compare<T>(iter, [](O a, O b) { return a != b; });
    case BinaryOp::Lt:
      return compare<T>(iter, [](O a, O b) { return a < b; });
    case BinaryOp::Le:
      return compare<T>(iter, [](O a, O b) { return a <= b; });
    case BinaryOp::Gt:
      return compare<T>(iter, [](O a, O b) { return a > b; });
    case BinaryOp::Ge:
      return compare<T>(iter, [](O a, O b) { return a >= b; });
    case BinaryOp::LogicalAnd:
      return compare<T>(iter, [](O a, O b) { return a != O(0) && b != O(0); });
    case BinaryOp::LogicalOr:
      return compare<T>(iter, [](O a, O b) { return a != O(0) || b != O(0); });
    case BinaryOp::LogicalXor:
      return compare<T>(iter, [](O a, O b) { return (a != O(0)) != (b != O(0)); });
  }
  // The ops' declarations reject these dtypes first; this guards the kernel itself.
  KILN_FAIL("internal error: binary kernel {} has no {} loop", static_cast<int>(op),
            dtype_name(dtype_of_v<T>));
}

void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  KILN_DISPATCH_ALL(iter.dtype(1), "binary",
                    [&]<typename T>() { binary_typed<T>(iter, op, alpha); });
}

template <typename T>
void ternary_typed(TensorIterator& iter, TernaryOp op, const Scalar& alpha) {
  using O = opmath_t<T>;
  switch (op) {
    case TernaryOp::Where:
      return cpu_kernel(iter, [](T c, T a, T b) -> T { return static_cast<O>(c) != O(0) ? a : b; });
    case TernaryOp::Clamp:
      return cpu_kernel(iter, [](T a, T lo, T hi) -> T {
        O x = a, l = lo, h = hi;
        if constexpr (std::is_floating_point_v<O>) {
          if (l != l || h != h) return static_cast<T>(std::numeric_limits<O>::quiet_NaN());
        }
        O r = x < l ? l : x;  // a NaN x stays NaN through both comparisons
        return static_cast<T>(h < r ? h : r);
      });
    case TernaryOp::Lerp:
      if constexpr (kFloating<T>) {
        return vec_ternary<T>(iter, [](auto a, auto b, auto w) { return lerp(a, b, w); });
      }
      break;
    case TernaryOp::Addcmul: {
      const O al = alpha.to<O>();
      if constexpr (std::is_same_v<T, bool>) {
        return cpu_kernel(iter, [al](T a, T t1, T t2) -> T {
          return static_cast<T>(static_cast<O>(a) + al * static_cast<O>(t1) * static_cast<O>(t2));
        });
      } else {
        return vec_ternary<T>(iter, [al](auto a, auto t1, auto t2) {
          using V = decltype(a);
          return a + V(al) * t1 * t2;
        });
      }
    }
    case TernaryOp::Addcdiv:
      if constexpr (kFloating<T>) {
        const O al = alpha.to<O>();
        return vec_ternary<T>(iter, [al](auto a, auto t1, auto t2) {
          using V = decltype(a);
          return a + V(al) * t1 / t2;
        });
      }
      break;
  }
  KILN_FAIL("internal error: ternary kernel {} has no {} loop", static_cast<int>(op),
            dtype_name(dtype_of_v<T>));
}

void ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& alpha) {
  KILN_DISPATCH_ALL(iter.dtype(1), "ternary",
                    [&]<typename T>() { ternary_typed<T>(iter, op, alpha); });
}

void clamp_scalar_kernel(TensorIterator& iter, const std::optional<Scalar>& lo,
                         const std::optional<Scalar>& hi) {
  KILN_DISPATCH_ALL_NO_BOOL(iter.dtype(1), "clamp", [&]<typename T>() {
    using O = opmath_t<T>;
    const O l = lo ? lo->to<O>() : std::numeric_limits<O>::lowest();
    const O h = hi ? hi->to<O>() : std::numeric_limits<O>::max();
    if constexpr (std::is_floating_point_v<O>) {
      if (l != l || h != h) {  // a NaN bound makes every element NaN, as in PyTorch
        return cpu_kernel(
            iter, [](T) -> T { return static_cast<T>(std::numeric_limits<O>::quiet_NaN()); });
      }
    }
    cpu_kernel(iter, [l, h](T a) -> T {
      O x = a;
      O r = x < l ? l : x;
      return static_cast<T>(h < r ? h : r);
    });
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::binary_kernels, &binary_kernel);
KILN_REGISTER_KERNEL(ops::ternary_kernels, &ternary_kernel);
KILN_REGISTER_KERNEL(ops::clamp_scalar_kernels, &clamp_scalar_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
