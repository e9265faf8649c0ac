// Elementwise unary kernels. float32/float64 take SIMD paths (SLEEF for transcendental
// functions); 16-bit floats compute through float; integers and bool take the scalar path.
// First: capability.h (through it) defines the capability namespace that loops.h uses.
#include "ops/unary/unary_kernels.h"

#include "ops/cpu/loops.h"

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

// ---- SIMD helpers missing from vec.h ----

template <typename T>
using IntVecOf = typename VecType<std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>::type;

// |x| by clearing the sign bit (abs(-0.0) is +0.0, NaN stays NaN).
template <typename T>
Vec<T> vabs(Vec<T> x) {
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const IntVecOf<T> sign = IntVecOf<T>{} + std::numeric_limits<I>::min();
  return (typename Vec<T>::V)(((IntVecOf<T>)x.v) & ~sign);
}

// SLEEF's asinh/acosh overflow to inf once x * x does (|x| > sqrt(max)); there
// asinh(x) = sign(x) * (log|x| + log 2) and acosh(x) = log x + log 2 to full precision.
template <typename T>
inline constexpr T kHugeForHyperbolic = std::is_same_v<T, float> ? T(1e18) : T(1e150);
template <typename T>
Vec<T> vasinh(Vec<T> x) {
  const Vec<T> ax = vabs(x);
  Vec<T> big = log(ax) + Vec<T>(T(M_LN2));
  big = select<T>(x < Vec<T>(T(0)), -big, big);
  return select<T>(ax > Vec<T>(kHugeForHyperbolic<T>), big, asinh(x));
}
template <typename T>
Vec<T> vacosh(Vec<T> x) {
  return select<T>(x > Vec<T>(kHugeForHyperbolic<T>), log(x) + Vec<T>(T(M_LN2)), acosh(x));
}

#define KILN_SLEEF_ROUNDING(fn)                                             \
  inline Vec<float> v##fn(Vec<float> a) { return KILN_SLEEF_F(fn, )(a.v); } \
  inline Vec<double> v##fn(Vec<double> a) { return KILN_SLEEF_D(fn, )(a.v); }
KILN_SLEEF_ROUNDING(floor)
KILN_SLEEF_ROUNDING(ceil)
KILN_SLEEF_ROUNDING(trunc)
KILN_SLEEF_ROUNDING(rint)  // round half to even, like std::nearbyint
#undef KILN_SLEEF_ROUNDING

// min(max(x, lo), hi) with NaN propagating, like PyTorch's clamp (hi wins when lo > hi).
template <typename T>
T clamp_scalar(T x, T lo, T hi) {
  T r = x < lo ? lo : x;
  return r > hi ? hi : r;
}
template <typename T>
Vec<T> clamp_vec(Vec<T> x, Vec<T> lo, Vec<T> hi) {
  Vec<T> r = select<T>(x < lo, lo, x);
  return select<T>(r > hi, hi, r);
}

// float exp, inlined (SLEEF's is an out-of-line call, which left exp compute-bound):
// exp(x) = 2^n * exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2, exp(r) by its Taylor
// series to degree 7 (truncation < 6e-9 relative), ln 2 split in two so that n * hi is exact.
// 2^n is applied as two factors so that results in the subnormal range stay graded. Within
// 2 ulp of the true value; overflows to inf, underflows to 0, NaN propagates.
inline Vec<float> fast_exp(Vec<float> x) {
  using IV = IntVecOf<float>;
  x = clamp_vec<float>(x, Vec<float>(-104.0f), Vec<float>(89.0f));
  const Vec<float> round_magic(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const Vec<float> n = fmadd(x, Vec<float>(1.44269504088896341f), round_magic) - round_magic;
  Vec<float> r = fmadd(n, Vec<float>(-0.693359375f), x);
  r = fmadd(n, Vec<float>(2.12194440e-4f), r);
  Vec<float> p(1.0f / 5040);
  p = fmadd(p, r, Vec<float>(1.0f / 720));
  p = fmadd(p, r, Vec<float>(1.0f / 120));
  p = fmadd(p, r, Vec<float>(1.0f / 24));
  p = fmadd(p, r, Vec<float>(1.0f / 6));
  p = fmadd(p, r, Vec<float>(0.5f));
  p = fmadd(p, r, Vec<float>(1.0f));
  p = fmadd(p, r, Vec<float>(1.0f));
  const IV ni = __builtin_convertvector(n.v, IV);
  const IV half = ni >> 1;
  const Vec<float> s1 = (Vec<float>::V)((half + 127) << 23);
  const Vec<float> s2 = (Vec<float>::V)((ni - half + 127) << 23);
  return p * s1 * s2;
}
inline Vec<double> fast_exp(Vec<double> x) { return exp(x); }

// tanh: SLEEF's float tanh is several times slower than exp, so float uses an odd polynomial
// near 0 (least-squares fit made for this file; relative error < 5e-9 for |x| < 0.625) and
// sign(x) * (1 - 2 / (exp(2|x|) + 1)) elsewhere (< 3 ulp; saturates to +-1, NaN propagates).
inline Vec<float> vtanh(Vec<float> x) {
  const Vec<float> a = vabs(x);
  const Vec<float> t = x * x;
  Vec<float> q(-0.005718891533767252f);
  q = fmadd(q, t, Vec<float>(0.020653063925373066f));
  q = fmadd(q, t, Vec<float>(-0.05374464034414643f));
  q = fmadd(q, t, Vec<float>(0.13331512468518442f));
  q = fmadd(q, t, Vec<float>(-0.33333285212934338f));
  const Vec<float> small = fmadd(x * t, q, x);
  // exp(2a) for 2a in [0, 40] (tanh rounds to 1 well before): no range handling needed, and
  // degree 6 suffices since tanh damps the relative error of exp(2a) by 2e/(e+1)^2 <= 1/2.
  using IV = IntVecOf<float>;
  const Vec<float> two_a = minimum(a + a, Vec<float>(40.0f));
  const Vec<float> round_magic(12582912.0f);
  const Vec<float> n = fmadd(two_a, Vec<float>(1.44269504088896341f), round_magic) - round_magic;
  Vec<float> r = fmadd(n, Vec<float>(-0.693359375f), two_a);
  r = fmadd(n, Vec<float>(2.12194440e-4f), r);
  Vec<float> p(1.0f / 720);
  p = fmadd(p, r, Vec<float>(1.0f / 120));
  p = fmadd(p, r, Vec<float>(1.0f / 24));
  p = fmadd(p, r, Vec<float>(1.0f / 6));
  p = fmadd(p, r, Vec<float>(0.5f));
  p = fmadd(p, r, Vec<float>(1.0f));
  p = fmadd(p, r, Vec<float>(1.0f));
  const Vec<float> scale = (Vec<float>::V)((__builtin_convertvector(n.v, IV) + 127) << 23);
  const Vec<float> one(1.0f);
  Vec<float> large = one - Vec<float>(2.0f) / fmadd(p, scale, one);
  large = select<float>(x < Vec<float>(0.0f), -large, large);
  return select<float>(a < Vec<float>(0.625f), small, large);
}
inline Vec<double> vtanh(Vec<double> x) { return tanh(x); }

// erfc(|z|) by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7, as PyTorch's vectorized erf):
// t (a1 + t (a2 + ...)) exp(-z^2) with t = 1 / (1 + p |z|). SLEEF's float erf costs ~7x exp.
inline Vec<float> erfc_abs_approx(Vec<float> z) {
  const Vec<float> az = vabs(z);
  const Vec<float> one(1.0f);
  const Vec<float> t = one / fmadd(az, Vec<float>(0.3275911f), one);
  Vec<float> poly(1.061405429f);
  poly = fmadd(poly, t, Vec<float>(-1.453152027f));
  poly = fmadd(poly, t, Vec<float>(1.421413741f));
  poly = fmadd(poly, t, Vec<float>(-0.284496736f));
  poly = fmadd(poly, t, Vec<float>(0.254829592f));
  return poly * t * fast_exp(-(az * az));
}

// float erf: its Taylor series through x^13 for |x| < 0.5 (relative error < 1e-9, keeping
// accuracy near 0), else sign(x) (1 - erfc(|x|)) with the approximation above (< 3e-7 relative).
inline Vec<float> verf(Vec<float> x) {
  const Vec<float> x2 = x * x;
  Vec<float> s(1.0f / 9360);
  s = fmadd(s, x2, Vec<float>(-1.0f / 1320));
  s = fmadd(s, x2, Vec<float>(1.0f / 216));
  s = fmadd(s, x2, Vec<float>(-1.0f / 42));
  s = fmadd(s, x2, Vec<float>(1.0f / 10));
  s = fmadd(s, x2, Vec<float>(-1.0f / 3));
  s = fmadd(s, x2, Vec<float>(1.0f));
  const Vec<float> small = x * s * Vec<float>(float(M_2_SQRTPI));
  Vec<float> large = Vec<float>(1.0f) - erfc_abs_approx(x);
  large = select<float>(x < Vec<float>(0.0f), -large, large);
  return select<float>(vabs(x) < Vec<float>(0.5f), small, large);
}
inline Vec<double> verf(Vec<double> x) { return erf(x); }

// gelu(x) = x/2 * (1 + erf(x / sqrt 2)); 1 + erf(z) is erfc(-z) for z < 0 (no cancellation)
// and 2 - erfc(z) otherwise.
inline Vec<float> vgelu_erf(Vec<float> x) {
  const Vec<float> z = x * Vec<float>(float(M_SQRT1_2));
  const Vec<float> erfc_abs = erfc_abs_approx(z);
  const Vec<float> one_plus_erf =
      select<float>(z < Vec<float>(0.0f), erfc_abs, Vec<float>(2.0f) - erfc_abs);
  return Vec<float>(0.5f) * x * one_plus_erf;
}
inline Vec<double> vgelu_erf(Vec<double> x) {
  return Vec<double>(0.5) * x * (Vec<double>(1.0) + erf(x * Vec<double>(M_SQRT1_2)));
}

// erfinv (no std:: version): Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2010), refined by two Newton steps on erf in double.
double erfinv_double(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) {
    x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  }
  return x;
}

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
KILN_REGISTER_KERNEL(ops::unary_stub, &unary_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
