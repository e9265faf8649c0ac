#include "inductor/vec_fast_math.h"

namespace kiln::inductor {

const char* vec_fast_math() {
  return R"(
typedef int32_t kiln_vi_native __attribute__((vector_size(kiln_vec_width_float * 4)));
// a * b + c rounded once where the CPU has fused multiply-adds (generated code is compiled with
// -ffp-contract=off, so a plain a * b + c would round twice: the reductions below need one).
template <int N = 0> inline VecF kiln_fma(VecF a, VecF b, VecF c) {
#if defined(__AVX512F__)
  return {(kiln_vf_native)_mm512_fmadd_ps((__m512)a.v, (__m512)b.v, (__m512)c.v)};
#elif defined(__FMA__) && defined(__AVX__)
  return {(kiln_vf_native)_mm256_fmadd_ps((__m256)a.v, (__m256)b.v, (__m256)c.v)};
#else
  return {a.v * b.v + c.v};
#endif
}
template <int N = 0> inline VecF kiln_c(float x) { return VecF::broadcast(x); }
// x = n ln 2 + r with n = round(x / ln 2) (ln 2 split in two so that n * hi is exact); returns
// expm1(r) by its Taylor series to degree 7 and n.
template <int N = 0> inline VecF kiln_expm1_reduced(VecF x, VecF& n) {
  const VecF magic = kiln_c(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  n = kiln_fma(x, kiln_c(1.44269504088896341f), magic) - magic;
  VecF r = kiln_fma(n, kiln_c(-0.693359375f), x);
  r = kiln_fma(n, kiln_c(2.12194440e-4f), r);
  VecF p = kiln_c(1.0f / 5040);
  p = kiln_fma(p, r, kiln_c(1.0f / 720));
  p = kiln_fma(p, r, kiln_c(1.0f / 120));
  p = kiln_fma(p, r, kiln_c(1.0f / 24));
  p = kiln_fma(p, r, kiln_c(1.0f / 6));
  p = kiln_fma(p, r, kiln_c(0.5f));
  return kiln_fma(p * r, r, r);
}
template <int N = 0> inline kiln_vi_native kiln_to_int(VecF n) { return __builtin_convertvector(n.v, kiln_vi_native); }
// 2^n for integers n in [-126, 127], built in the exponent bits.
template <int N = 0> inline VecF kiln_exp2_int(kiln_vi_native n) { return {(kiln_vf_native)((n + 127) << 23)}; }
// exp(x) = 2^n (1 + expm1(r)); overflows to inf, underflows to 0 (2^n in two factors so that
// subnormal results stay graded).
template <int N = 0> inline VecF kiln_fast_exp(VecF x) {
#if defined(__AVX512F__)
  if constexpr (sizeof(x.v) == 64) {
    // AVX-512 scales by 2^n in one instruction (vscalefps: one rounding, subnormal results
    // graded), a third fewer instructions than the integer exponent below: softmax's pass of
    // exponentials was bound by them. x is clamped first (max/min with x second, so a NaN
    // stays) so that an infinite x never meets an infinite n in the reduction. (Zero-masked
    // forms: g++ 12's unmasked ones pass an _undefined_ vector -Wmaybe-uninitialized reports.)
    const __mmask16 all = 0xFFFF;
    const __m512 c = _mm512_maskz_min_ps(
        all, _mm512_set1_ps(89.0f), _mm512_maskz_max_ps(all, _mm512_set1_ps(-104.0f), (__m512)x.v));
    VecF n;
    const VecF q = kiln_expm1_reduced(VecF{(kiln_vf_native)c}, n);
    return {(kiln_vf_native)_mm512_maskz_scalef_ps(
        all, _mm512_add_ps((__m512)q.v, _mm512_set1_ps(1.0f)), (__m512)n.v)};
  }
#endif
  x = vec_where(x < kiln_c(-104.0f), kiln_c(-104.0f), x);
  x = vec_where(x > kiln_c(89.0f), kiln_c(89.0f), x);
  VecF n;
  const VecF q = kiln_expm1_reduced(x, n);
  const kiln_vi_native ni = kiln_to_int(n);
  const kiln_vi_native half = ni >> 1;
  const VecF s1 = kiln_exp2_int(half);
  return kiln_fma(q, s1, s1) * kiln_exp2_int(ni - half);
}
// 1 / b within about an ulp, without a divide (16 lanes of vdivps cost as much as the rest of
// tanh): the hardware's reciprocal estimate (2^-14 relative with AVX-512, 2^-12 before) and one
// Newton step. Only for finite b away from 0 and overflow: callers keep b in [1, 2^60].
template <int N = 0> inline VecF kiln_fast_reciprocal(VecF b) {
#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE4_1__)
#if defined(__AVX512F__)
  const VecF r = {_mm512_maskz_rcp14_ps(__mmask16(0xFFFF), b.v)};
#elif defined(__AVX__)
  const VecF r = {_mm256_rcp_ps(b.v)};
#else
  const VecF r = {_mm_rcp_ps(b.v)};
#endif
  return kiln_fma(r, kiln_fma(-b, r, kiln_c(1.0f)), r);
#else
  return kiln_c(1.0f) / b;
#endif
}
// tanh(a) = e / (e + 2) with e = expm1(2a), a = |x| capped where tanh is 1, sign restored.
template <int N = 0> inline VecF kiln_fast_tanh(VecF x) {
  const VecF two_a = vec_minimum(vec_abs(x) * kiln_c(2.0f), kiln_c(40.0f));
  VecF n;
  const VecF q = kiln_expm1_reduced(two_a, n);
  const VecF scale = kiln_exp2_int(kiln_to_int(n));
  const VecF e = kiln_fma(scale, q, scale - kiln_c(1.0f));
  // Beyond 2a = 18.03, tanh rounds to 1: exactly 1 there (a product with an approximate
  // reciprocal could land an ulp below, and 1 - tanh^2 in a derivative would not be 0).
  const VecF t =
      vec_where(two_a > kiln_c(18.1f), kiln_c(1.0f), e * kiln_fast_reciprocal(e + kiln_c(2.0f)));
  return vec_where(x < kiln_c(0.0f), -t, t);
}
// Whether any lane of m is set.
template <int N = 0> inline bool kiln_any(MaskF m) {
#if defined(__AVX512F__)
  return _mm512_test_epi32_mask((__m512i)m.m, (__m512i)m.m) != 0;
#elif defined(__AVX__)
  return !_mm256_testz_si256((__m256i)m.m, (__m256i)m.m);
#elif defined(__SSE4_1__)
  return !_mm_testz_si128((__m128i)m.m, (__m128i)m.m);
#else
  for (int i = 0; i < kiln_vec_width_float; ++i) {
    if (m.m[i]) return true;
  }
  return false;
#endif
}
// sin and cos of a at once, inline (an out-of-line call spills every vector register) where the
// CPU has fused multiply-adds: a = q pi/2 + r with q = round(a 2/pi) and pi/2 in three parts
// taken off with fused multiply-adds (r within an ulp or two for |a| <= 8192), Cephes' minimax
// polynomials on [-pi/4, pi/4], the quadrant (q mod 4) swapping and negating them. A vector with
// a larger |a| (or an infinity) goes to SLEEF's sincos whole; NaN stays NaN; sin(-0) is -0.
template <int N = 0> inline void kiln_fast_sincos(VecF a, VecF& s, VecF& c) {
  // The reduction is exact only with fused multiply-adds: without them, SLEEF's throughout.
#if defined(__FMA__)
  const bool large = kiln_any(vec_abs(a) > kiln_c(8192.0f));
#else
  const bool large = true;
#endif
  if (large) {
    alignas(64) float sv[kiln_vec_width_float], cv[kiln_vec_width_float];
    KILN_SLEEF_SINCOSF(a.v, sv, cv);
    s = VecF::load(sv);
    c = VecF::load(cv);
    return;
  }
  const VecF magic = kiln_c(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const VecF q = kiln_fma(a, kiln_c(0.636619772367581343f), magic) - magic;
  VecF r = kiln_fma(q, kiln_c(-1.57079637050628662109375f), a);
  r = kiln_fma(q, kiln_c(4.37113882867379e-08f), r);
  r = kiln_fma(q, kiln_c(1.7151245100059768e-15f), r);
  const VecF z = r * r;
  VecF ps = kiln_c(-1.9515295891e-4f);
  ps = kiln_fma(ps, z, kiln_c(8.3321608736e-3f));
  ps = kiln_fma(ps, z, kiln_c(-1.6666654611e-1f));
  const VecF sin_r = kiln_fma(ps * z, r, r);
  VecF pc = kiln_c(2.443315711809948e-5f);
  pc = kiln_fma(pc, z, kiln_c(-1.388731625493765e-3f));
  pc = kiln_fma(pc, z, kiln_c(4.166664568298827e-2f));
  const VecF cos_r = kiln_fma(pc * z, z, kiln_fma(z, kiln_c(-0.5f), kiln_c(1.0f)));
  const kiln_vi_native quadrant = kiln_to_int(q);
  const MaskF odd = {(quadrant & 1) != 0};
  const VecF sin_abs = vec_where(odd, cos_r, sin_r), cos_abs = vec_where(odd, sin_r, cos_r);
  // Sign bits: sin negative in quadrants 2 and 3, cos in 1 and 2.
  const kiln_vi_native sin_sign = (quadrant & 2) << 30, cos_sign = ((quadrant + 1) & 2) << 30;
  s = {(kiln_vf_native)((kiln_vi_native)sin_abs.v ^ sin_sign)};
  s = vec_where(a == kiln_c(0.0f), a, s);
  c = {(kiln_vf_native)((kiln_vi_native)cos_abs.v ^ cos_sign)};
}
template <int N = 0> inline VecF kiln_fast_sin(VecF a) {
  VecF s, c;
  kiln_fast_sincos(a, s, c);
  return s;
}
template <int N = 0> inline VecF kiln_fast_cos(VecF a) {
  VecF s, c;
  kiln_fast_sincos(a, s, c);
  return c;
}
// erfc(|z|) by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
template <int N = 0> inline VecF kiln_erfc_abs(VecF z) {
  // erfc(|z|) underflows to 0 in float beyond 10.1; the cap keeps the reciprocal's argument
  // finite (NaN stays NaN).
  const VecF az = vec_minimum(vec_abs(z), kiln_c(10.5f));
  const VecF t = kiln_fast_reciprocal(kiln_fma(az, kiln_c(0.3275911f), kiln_c(1.0f)));
  VecF poly = kiln_c(1.061405429f);
  poly = kiln_fma(poly, t, kiln_c(-1.453152027f));
  poly = kiln_fma(poly, t, kiln_c(1.421413741f));
  poly = kiln_fma(poly, t, kiln_c(-0.284496736f));
  poly = kiln_fma(poly, t, kiln_c(0.254829592f));
  return poly * t * kiln_fast_exp(-(az * az));
}
// erfc(x) = t exp(-x^2 + P(t)) with t = 1 / (1 + |x| / 2) and P Numerical Recipes' Chebyshev
// fit (relative error below 1.2e-7 everywhere), reflected as 2 - erfc(|x|) for x < 0.
template <int N = 0> inline VecF kiln_fast_erfc(VecF x) {
  // erfc(|x|) is 0 in float beyond 10.1 (NaN stays NaN).
  const VecF az = vec_minimum(vec_abs(x), kiln_c(10.5f));
  const VecF t = kiln_fast_reciprocal(kiln_fma(az, kiln_c(0.5f), kiln_c(1.0f)));
  VecF p = kiln_c(0.17087277f);
  p = kiln_fma(p, t, kiln_c(-0.82215223f));
  p = kiln_fma(p, t, kiln_c(1.48851587f));
  p = kiln_fma(p, t, kiln_c(-1.13520398f));
  p = kiln_fma(p, t, kiln_c(0.27886807f));
  p = kiln_fma(p, t, kiln_c(-0.18628806f));
  p = kiln_fma(p, t, kiln_c(0.09678418f));
  p = kiln_fma(p, t, kiln_c(0.37409196f));
  p = kiln_fma(p, t, kiln_c(1.00002368f));
  p = kiln_fma(p, t, kiln_c(-1.26551223f));
  // exp(-x^2 + p) as exp(-hi) exp(p - lo) with x^2 = hi + lo exactly (Dekker's product): x^2
  // rounded to float would cost tens of ulps where erfc is small.
  const VecF split = az * kiln_c(4097.0f);
  const VecF ah = split - (split - az), al = az - ah;
  const VecF hi = az * az;
  const VecF lo = ((ah * ah - hi) + kiln_c(2.0f) * ah * al) + al * al;
  const VecF r = t * kiln_fast_exp(-hi) * kiln_fast_exp(p - lo);
  return vec_where(x < kiln_c(0.0f), kiln_c(2.0f) - r, r);
}
// erf: its Taylor series through x^13 for |x| < 0.5, else sign(x) (1 - erfc(|x|)).
template <int N = 0> inline VecF kiln_fast_erf(VecF x) {
  const VecF x2 = x * x;
  VecF s = kiln_c(1.0f / 9360);
  s = kiln_fma(s, x2, kiln_c(-1.0f / 1320));
  s = kiln_fma(s, x2, kiln_c(1.0f / 216));
  s = kiln_fma(s, x2, kiln_c(-1.0f / 42));
  s = kiln_fma(s, x2, kiln_c(1.0f / 10));
  s = kiln_fma(s, x2, kiln_c(-1.0f / 3));
  s = kiln_fma(s, x2, kiln_c(1.0f));
  const VecF small = x * s * kiln_c(1.12837916709551257f);
  VecF large = kiln_c(1.0f) - kiln_erfc_abs(x);
  large = vec_where(x < kiln_c(0.0f), -large, large);
  return vec_where(vec_abs(x) < kiln_c(0.5f), small, large);
}
)";
}

}  // namespace kiln::inductor
