#pragma once
// Math for the unary kernels that vec.h lacks: bit-level abs, SLEEF rounding, NaN-propagating
// clamp, and float32 exp/tanh/erf/gelu approximations that are inlined (SLEEF's out-of-line
// float exp, tanh and erf left those ops compute-bound, slower than PyTorch). Include only from
// *.kernel.cpp files.
#include "ops/cpu/capability.h"  // first: defines the capability namespace vec.h uses

#include "ops/cpu/vec.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {

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
// float exp = 2^n (1 + expm1(r)), within 2 ulp; overflows to inf, underflows to 0, NaN propagates.
// x = n ln 2 + r with n = round(x / ln 2), |r| <= ln(2) / 2 (ln 2 split in two so that n * hi
// is exact); q = expm1(r) by its Taylor series to degree 7 (truncation < 6e-9 relative). Shared
// by exp and tanh.
struct Expm1Reduced {
  Vec<float> q;
  Vec<float> n;
};
inline Expm1Reduced expm1_reduced(Vec<float> x) {
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
  return {fmadd(p * r, r, r), n};
}

// 2^n for integers n in [-126, 127], built in the exponent bits.
inline Vec<float> exp2_int(IntVecOf<float> n) { return (Vec<float>::V)((n + 127) << 23); }
inline IntVecOf<float> to_int(Vec<float> n) {
  return __builtin_convertvector(n.v, IntVecOf<float>);
}

inline Vec<float> fast_exp(Vec<float> x) {
  x = clamp_vec<float>(x, Vec<float>(-104.0f), Vec<float>(89.0f));
  const auto [q, n] = expm1_reduced(x);
  // 2^n in two factors so that results in the subnormal range stay graded.
  const IntVecOf<float> ni = to_int(n);
  const IntVecOf<float> half = ni >> 1;
  const Vec<float> s1 = exp2_int(half);
  return fmadd(q, s1, s1) * exp2_int(ni - half);
}
inline Vec<double> fast_exp(Vec<double> x) { return exp(x); }

// tanh: SLEEF's float tanh is several times slower than exp, so float computes
// tanh(a) = e / (e + 2) with e = expm1(2a), a = |x|, and restores the sign. expm1(2a) is
// 2^n (1 + q) - 1 with n = round(2a / ln 2), r = 2a - n ln 2 and q = expm1(r) by its Taylor
// series to degree 7; for |x| < ln(2) / 4, n = 0 and e = q exactly, so small inputs keep full
// relative precision without a separate branch. 2a is capped at 40, where tanh is 1 in float.
// Within 3 ulp; saturates to +-1, NaN propagates.
inline Vec<float> vtanh(Vec<float> x) {
  const Vec<float> two_a = minimum(vabs(x) * Vec<float>(2.0f), Vec<float>(40.0f));
  const auto [q, n] = expm1_reduced(two_a);
  const Vec<float> scale = exp2_int(to_int(n));
  const Vec<float> e = fmadd(scale, q, scale - Vec<float>(1.0f));  // expm1(2a)
  const Vec<float> t = e / (e + Vec<float>(2.0f));
  return select<float>(x < Vec<float>(0.0f), -t, t);
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
inline double erfinv_double(double y) {
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

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
