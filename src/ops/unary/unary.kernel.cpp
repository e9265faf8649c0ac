// Elementwise unary kernels. float32/float64 take SIMD paths (SLEEF for transcendental
// functions, inlined approximations from unary_math.h for float exp, tanh, erf and gelu);
// 16-bit floats compute through float; integers and bool take the scalar path.
// First: capability.h (through it) defines the capability namespace that loops.h uses.
#include "ops/unary/unary_kernels.h"

#include "ops/cpu/loops.h"
#include "ops/unary/unary_math.h"

#include <cmath>
#include <concepts>
#include <limits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::UnaryOpId;
using ops::UnaryParams;

template <typename T>
inline constexpr bool kSimdFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Ops with a vec member have a SIMD path for float and double.
template <typename Op, typename T>
concept HasVec = requires(const Op& op, Vec<T> v) {
  { op.vec(v) } -> std::same_as<Vec<T>>;
};

  // ---- the functions: operator() for one element, vec() for a SIMD register ----

#define KILN_FLOAT_OP(Name, scalar_expr, vec_expr) \
  struct Name {                                    \
    template <typename T>                          \
    T operator()(T x) const {                      \
      return scalar_expr;                          \
    }                                              \
    template <typename T>                          \
    Vec<T> vec(Vec<T> x) const {                   \
      return vec_expr;                             \
    }                                              \
  };
KILN_FLOAT_OP(ExpOp, std::exp(x), fast_exp(x))
KILN_FLOAT_OP(Exp2Op, std::exp2(x), exp2(x))
KILN_FLOAT_OP(Expm1Op, std::expm1(x), expm1(x))
KILN_FLOAT_OP(LogOp, std::log(x), log(x))
KILN_FLOAT_OP(Log2Op, std::log2(x), log2(x))
KILN_FLOAT_OP(Log10Op, std::log10(x), log10(x))
KILN_FLOAT_OP(Log1pOp, std::log1p(x), log1p(x))
KILN_FLOAT_OP(SqrtOp, std::sqrt(x), sqrt(x))
KILN_FLOAT_OP(RsqrtOp, T(1) / std::sqrt(x), Vec<T>(T(1)) / sqrt(x))
KILN_FLOAT_OP(SinOp, std::sin(x), sin(x))
KILN_FLOAT_OP(CosOp, std::cos(x), cos(x))
KILN_FLOAT_OP(TanOp, std::tan(x), tan(x))
KILN_FLOAT_OP(AsinOp, std::asin(x), asin(x))
KILN_FLOAT_OP(AcosOp, std::acos(x), acos(x))
KILN_FLOAT_OP(AtanOp, std::atan(x), atan(x))
KILN_FLOAT_OP(SinhOp, std::sinh(x), sinh(x))
KILN_FLOAT_OP(CoshOp, std::cosh(x), cosh(x))
KILN_FLOAT_OP(TanhOp, std::tanh(x), vtanh(x))
KILN_FLOAT_OP(AsinhOp, std::asinh(x), vasinh(x))
KILN_FLOAT_OP(AcoshOp, std::acosh(x), vacosh(x))
KILN_FLOAT_OP(AtanhOp, std::atanh(x), atanh(x))
KILN_FLOAT_OP(ErfOp, std::erf(x), verf(x))
KILN_FLOAT_OP(ErfcOp, std::erfc(x), erfc(x))
KILN_FLOAT_OP(SigmoidOp, T(1) / (T(1) + std::exp(-x)), Vec<T>(T(1)) / (Vec<T>(T(1)) + fast_exp(-x)))
KILN_FLOAT_OP(SiluOp, x / (T(1) + std::exp(-x)), x / (Vec<T>(T(1)) + fast_exp(-x)))
KILN_FLOAT_OP(MishOp, x* std::tanh(std::log1p(std::exp(x))), x* tanh(log1p(exp(x))))
KILN_FLOAT_OP(ReciprocalOp, T(1) / x, Vec<T>(T(1)) / x)
KILN_FLOAT_OP(FracOp, x - std::trunc(x), x - vtrunc(x))
KILN_FLOAT_OP(HardsigmoidOp, clamp_scalar<T>(x + T(3), T(0), T(6)) / T(6),
              clamp_vec<T>(x + Vec<T>(T(3)), Vec<T>(T(0)), Vec<T>(T(6))) / Vec<T>(T(6)))
KILN_FLOAT_OP(HardswishOp, x* clamp_scalar<T>(x + T(3), T(0), T(6)) / T(6),
              x* clamp_vec<T>(x + Vec<T>(T(3)), Vec<T>(T(0)), Vec<T>(T(6))) / Vec<T>(T(6)))
KILN_FLOAT_OP(GeluErfOp, T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2))), vgelu_erf(x))
#undef KILN_FLOAT_OP

struct GeluTanhOp {
  static constexpr double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5;  // sqrt(2 / pi)
  static constexpr double kKappa = 0.044715;
  template <typename T>
  T operator()(T x) const {
    T inner = T(kBeta) * (x + T(kKappa) * x * x * x);
    return T(0.5) * x * (T(1) + std::tanh(inner));
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    Vec<T> inner = Vec<T>(T(kBeta)) * (x + Vec<T>(T(kKappa)) * x * x * x);
    return Vec<T>(T(0.5)) * x * (Vec<T>(T(1)) + vtanh(inner));
  }
};

struct ErfinvOp {
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(erfinv_double(static_cast<double>(x)));
  }
};

// Ops that also take integers (kept dtype).
struct NegOp {
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(-x);
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return -x;
  }
};

struct AbsOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(x < 0 ? -x : x);
    } else {
      return std::abs(x);
    }
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return vabs(x);
  }
};

// PyTorch's sign: (0 < x) - (x < 0), so NaN and -0.0 give 0.
struct SignOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
      return static_cast<T>(x > T(0));
    } else {
      return static_cast<T>(static_cast<int>(T(0) < x) - static_cast<int>(x < T(0)));
    }
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    Vec<T> zero(T(0)), one(T(1));
    return select<T>(zero < x, one, zero) - select<T>(x < zero, one, zero);
  }
};

struct SquareOp {
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(x * x);
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return x * x;
  }
};

// Rounding is the identity on integers.
#define KILN_ROUNDING_OP(Name, std_fn, vec_fn) \
  struct Name {                                \
    template <typename T>                      \
    T operator()(T x) const {                  \
      if constexpr (std::is_integral_v<T>) {   \
        return x;                              \
      } else {                                 \
        return std_fn(x);                      \
      }                                        \
    }                                          \
    template <typename T>                      \
    Vec<T> vec(Vec<T> x) const {               \
      return vec_fn(x);                        \
    }                                          \
  };
KILN_ROUNDING_OP(FloorOp, std::floor, vfloor)
KILN_ROUNDING_OP(CeilOp, std::ceil, vceil)
KILN_ROUNDING_OP(TruncOp, std::trunc, vtrunc)
KILN_ROUNDING_OP(RoundOp, std::nearbyint, vrint)
#undef KILN_ROUNDING_OP

// PyTorch's round(decimals): scale by 10^|decimals|, round half to even, scale back.
struct RoundDecimalsOp {
  int64_t decimals;
  template <typename T>
  T operator()(T x) const {
    const bool negative = decimals < 0;
    const T ten_pow =
        static_cast<T>(std::pow(10.0, static_cast<double>(negative ? -decimals : decimals)));
    return negative ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow;
  }
};

struct ReluOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return x < T(0) ? T(0) : x;  // NaN passes through
    }
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return select<T>(x < Vec<T>(T(0)), Vec<T>(T(0)), x);
  }
};

struct HardtanhOp {
  double min_val, max_val;
  template <typename T>
  T operator()(T x) const {
    return clamp_scalar<T>(x, static_cast<T>(min_val), static_cast<T>(max_val));
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return clamp_vec<T>(x, Vec<T>(static_cast<T>(min_val)), Vec<T>(static_cast<T>(max_val)));
  }
};

struct LeakyReluOp {
  double slope;
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? x : x * static_cast<T>(slope);
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    return select<T>(x > Vec<T>(T(0)), x, x * Vec<T>(static_cast<T>(slope)));
  }
};

// elu: x > 0 ? scale * x : alpha * scale * expm1(input_scale * x).
struct EluOp {
  double alpha, scale, input_scale;
  template <typename T>
  T operator()(T x) const {
    return x <= T(0) ? std::expm1(x * static_cast<T>(input_scale)) * static_cast<T>(alpha * scale)
                     : x * static_cast<T>(scale);
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    Vec<T> neg =
        expm1(x * Vec<T>(static_cast<T>(input_scale))) * Vec<T>(static_cast<T>(alpha * scale));
    return select<T>(x <= Vec<T>(T(0)), neg, x * Vec<T>(static_cast<T>(scale)));
  }
};

// softplus: log1p(exp(beta * x)) / beta, or x where beta * x > threshold (linear regime).
struct SoftplusOp {
  double beta, threshold;
  template <typename T>
  T operator()(T x) const {
    const T b = static_cast<T>(beta);
    return x * b > static_cast<T>(threshold) ? x : std::log1p(std::exp(x * b)) / b;
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    const Vec<T> b(static_cast<T>(beta));
    return select<T>(x * b > Vec<T>(static_cast<T>(threshold)), x, log1p(exp(x * b)) / b);
  }
};

// logit: log(z / (1 - z)) with z = clamp(x, eps, 1 - eps) when eps >= 0.
struct LogitOp {
  double eps;
  template <typename T>
  T operator()(T x) const {
    T z = eps < 0 ? x : clamp_scalar<T>(x, static_cast<T>(eps), static_cast<T>(1 - eps));
    return std::log(z / (T(1) - z));
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    Vec<T> z =
        eps < 0 ? x : clamp_vec<T>(x, Vec<T>(static_cast<T>(eps)), Vec<T>(static_cast<T>(1 - eps)));
    return log(z / (Vec<T>(T(1)) - z));
  }
};

// nan_to_num: replacements arrive already resolved for the dtype (the defaults are its limits).
struct NanToNumOp {
  double nan, posinf, neginf;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return x;
    } else {
      if (x != x) return static_cast<T>(nan);
      if (x == std::numeric_limits<T>::infinity()) return static_cast<T>(posinf);
      if (x == -std::numeric_limits<T>::infinity()) return static_cast<T>(neginf);
      return x;
    }
  }
  template <typename T>
  Vec<T> vec(Vec<T> x) const {
    const Vec<T> inf(std::numeric_limits<T>::infinity());
    Vec<T> r = select<T>(x != x, Vec<T>(static_cast<T>(nan)), x);
    r = select<T>(x == inf, Vec<T>(static_cast<T>(posinf)), r);
    return select<T>(x == -inf, Vec<T>(static_cast<T>(neginf)), r);
  }
};

// ---- runners ----

// Input and output share T.
template <typename T, typename Op>
void run_typed(ops::TensorIterator& iter, const Op& op) {
  if constexpr (kSimdFloat<T>) {
    if constexpr (HasVec<Op, T>) {
      cpu_kernel_vec(
          iter, [op](T x) -> T { return op(x); }, [op](Vec<T> x) -> Vec<T> { return op.vec(x); });
    } else {
      cpu_kernel(iter, [op](T x) -> T { return op(x); });
    }
  } else if constexpr (kReduced<T>) {
    cpu_kernel(iter, [op](T x) -> T { return T(op(static_cast<float>(x))); });
  } else {
    cpu_kernel(iter, [op](T x) -> T { return op(x); });
  }
}

template <typename Op>
void run_floating(ops::TensorIterator& iter, const Op& op) {
  KILN_DISPATCH_FLOATING(iter.dtype(0), "unary", [&]<typename T>() { run_typed<T>(iter, op); });
}
template <typename Op>
void run_numeric(ops::TensorIterator& iter, const Op& op) {
  KILN_DISPATCH_ALL_NO_BOOL(iter.dtype(0), "unary", [&]<typename T>() { run_typed<T>(iter, op); });
}
template <typename Op>
void run_all(ops::TensorIterator& iter, const Op& op) {
  KILN_DISPATCH_ALL(iter.dtype(0), "unary", [&]<typename T>() { run_typed<T>(iter, op); });
}

// A bool result from any input dtype.
template <typename Pred>
void run_predicate(ops::TensorIterator& iter, const Pred& pred) {
  KILN_DISPATCH_ALL(iter.dtype(1), "unary", [&]<typename T>() {
    if constexpr (kReduced<T>) {
      cpu_kernel(iter, [pred](T x) -> bool { return pred(static_cast<float>(x)); });
    } else {
      cpu_kernel(iter, [pred](T x) -> bool { return pred(x); });
    }
  });
}

struct IsNanPred {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return false;
    } else {
      return std::isnan(x);
    }
  }
};
struct IsInfPred {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return false;
    } else {
      return std::isinf(x);
    }
  }
};
struct IsFinitePred {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return true;
    } else {
      return std::isfinite(x);
    }
  }
};
struct LogicalNotPred {
  template <typename T>
  bool operator()(T x) const {
    return x == T(0);  // NaN is truthy, as in PyTorch
  }
};

void bitwise_not_kernel(ops::TensorIterator& iter) {
  KILN_DISPATCH_INTEGRAL_AND_BOOL(iter.dtype(0), "bitwise_not", [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x) -> bool { return !x; });
    } else {
      cpu_kernel(iter, [](T x) -> T { return static_cast<T>(~x); });
    }
  });
}

void unary_kernel(ops::TensorIterator& iter, UnaryOpId id, const UnaryParams& p) {
  switch (id) {
    case UnaryOpId::Neg:
      return run_numeric(iter, NegOp{});
    case UnaryOpId::Abs:
      return run_numeric(iter, AbsOp{});
    case UnaryOpId::Sign:
      return run_all(iter, SignOp{});
    case UnaryOpId::Exp:
      return run_floating(iter, ExpOp{});
    case UnaryOpId::Exp2:
      return run_floating(iter, Exp2Op{});
    case UnaryOpId::Expm1:
      return run_floating(iter, Expm1Op{});
    case UnaryOpId::Log:
      return run_floating(iter, LogOp{});
    case UnaryOpId::Log2:
      return run_floating(iter, Log2Op{});
    case UnaryOpId::Log10:
      return run_floating(iter, Log10Op{});
    case UnaryOpId::Log1p:
      return run_floating(iter, Log1pOp{});
    case UnaryOpId::Sqrt:
      return run_floating(iter, SqrtOp{});
    case UnaryOpId::Rsqrt:
      return run_floating(iter, RsqrtOp{});
    case UnaryOpId::Sin:
      return run_floating(iter, SinOp{});
    case UnaryOpId::Cos:
      return run_floating(iter, CosOp{});
    case UnaryOpId::Tan:
      return run_floating(iter, TanOp{});
    case UnaryOpId::Asin:
      return run_floating(iter, AsinOp{});
    case UnaryOpId::Acos:
      return run_floating(iter, AcosOp{});
    case UnaryOpId::Atan:
      return run_floating(iter, AtanOp{});
    case UnaryOpId::Sinh:
      return run_floating(iter, SinhOp{});
    case UnaryOpId::Cosh:
      return run_floating(iter, CoshOp{});
    case UnaryOpId::Tanh:
      return run_floating(iter, TanhOp{});
    case UnaryOpId::Asinh:
      return run_floating(iter, AsinhOp{});
    case UnaryOpId::Acosh:
      return run_floating(iter, AcoshOp{});
    case UnaryOpId::Atanh:
      return run_floating(iter, AtanhOp{});
    case UnaryOpId::Erf:
      return run_floating(iter, ErfOp{});
    case UnaryOpId::Erfc:
      return run_floating(iter, ErfcOp{});
    case UnaryOpId::Erfinv:
      return run_floating(iter, ErfinvOp{});
    case UnaryOpId::Sigmoid:
      return run_floating(iter, SigmoidOp{});
    case UnaryOpId::Reciprocal:
      return run_floating(iter, ReciprocalOp{});
    case UnaryOpId::Square:
      return run_numeric(iter, SquareOp{});
    case UnaryOpId::Floor:
      return run_numeric(iter, FloorOp{});
    case UnaryOpId::Ceil:
      return run_numeric(iter, CeilOp{});
    case UnaryOpId::Round:
      return run_numeric(iter, RoundOp{});
    case UnaryOpId::Trunc:
      return run_numeric(iter, TruncOp{});
    case UnaryOpId::Frac:
      return run_floating(iter, FracOp{});
    case UnaryOpId::Relu:
      return run_numeric(iter, ReluOp{});
    case UnaryOpId::Silu:
      return run_floating(iter, SiluOp{});
    case UnaryOpId::Mish:
      return run_floating(iter, MishOp{});
    case UnaryOpId::Hardsigmoid:
      return run_floating(iter, HardsigmoidOp{});
    case UnaryOpId::Hardswish:
      return run_floating(iter, HardswishOp{});
    case UnaryOpId::GeluErf:
      return run_floating(iter, GeluErfOp{});
    case UnaryOpId::GeluTanh:
      return run_floating(iter, GeluTanhOp{});
    case UnaryOpId::Hardtanh:
      return run_numeric(iter, HardtanhOp{p.a, p.b});
    case UnaryOpId::LeakyRelu:
      return run_floating(iter, LeakyReluOp{p.a});
    case UnaryOpId::Elu:
      return run_floating(iter, EluOp{p.a, p.b, p.c});
    case UnaryOpId::Softplus:
      return run_floating(iter, SoftplusOp{p.a, p.b});
    case UnaryOpId::Logit:
      return run_floating(iter, LogitOp{p.a});
    case UnaryOpId::RoundDecimals:
      return run_floating(iter, RoundDecimalsOp{static_cast<int64_t>(p.a)});
    case UnaryOpId::NanToNum:
      return run_all(iter, NanToNumOp{p.a, p.b, p.c});
    case UnaryOpId::BitwiseNot:
      return bitwise_not_kernel(iter);
    case UnaryOpId::LogicalNot:
      return run_predicate(iter, LogicalNotPred{});
    case UnaryOpId::IsNan:
      return run_predicate(iter, IsNanPred{});
    case UnaryOpId::IsInf:
      return run_predicate(iter, IsInfPred{});
    case UnaryOpId::IsFinite:
      return run_predicate(iter, IsFinitePred{});
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::unary_kernels, &unary_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
