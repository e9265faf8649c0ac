#pragma once
// Vec<T>: a SIMD register of T for the capability this file is compiled for (16/32/64 bytes for
// DEFAULT/AVX2/AVX512), over the compiler's vector extensions, with SLEEF for transcendental
// functions. Only include from *.kernel.cpp files (they are compiled once per capability).
#include "ops/cpu/capability.h"

#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if !defined(KILN_CPU_CAPABILITY)
#error "vec.h is for *.kernel.cpp files, compiled once per CPU capability"
#endif

namespace kiln::cpu::KILN_CAP_NAMESPACE {

#if defined(KILN_CPU_CAPABILITY_AVX512)
inline constexpr int kVecBytes = 64;
#elif defined(KILN_CPU_CAPABILITY_AVX2)
inline constexpr int kVecBytes = 32;
#else
inline constexpr int kVecBytes = 16;
#endif

// Element types with a SIMD path (16-bit floats and bool take the scalar path through float).
template <typename T>
inline constexpr bool kVectorizable =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, long double>;

// The raw vector type per element type (a dependent typedef would lose the attribute).
// Types without a SIMD path map to a placeholder so that naming Vec<T> in a discarded
// `if constexpr` branch compiles; using one of its operations fails the static_assert in loadu.
template <typename T>
struct VecType {
  typedef float type __attribute__((vector_size(kVecBytes)));
};
#define KILN_VEC_TYPE(T)                                    \
  template <>                                               \
  struct VecType<T> {                                       \
    typedef T type __attribute__((vector_size(kVecBytes))); \
  };
KILN_VEC_TYPE(float)
KILN_VEC_TYPE(double)
KILN_VEC_TYPE(int8_t)
KILN_VEC_TYPE(uint8_t)
KILN_VEC_TYPE(int16_t)
KILN_VEC_TYPE(int32_t)
KILN_VEC_TYPE(int64_t)
#undef KILN_VEC_TYPE

template <typename T>
struct Vec {
  using V = typename VecType<T>::type;
  // The integer vector that comparisons produce.
  using Mask = decltype(V{} < V{});
  static constexpr int size = kVecBytes / static_cast<int>(sizeof(T));

  V v;

  Vec() = default;
  Vec(V x) : v(x) {}  // NOLINT: implicit from the raw vector
  // Broadcast. x - 0 is x for every x (0 + x would turn -0.0 into +0.0), so it folds away.
  Vec(T x) : v(x - V{}) {}  // NOLINT: broadcast

  static Vec loadu(const void* p) {
    static_assert(kVectorizable<T>, "no SIMD path for this element type");
    Vec r;
    std::memcpy(&r.v, p, sizeof(V));
    return r;
  }
  // Loads 0 < n <= size elements; the other lanes repeat element 0, so that an op on the
  // padding sees a valid input (no integer division by a zero that was never there).
  static Vec loadu(const void* p, int n) {
    Vec r(*static_cast<const T*>(p));
    std::memcpy(&r.v, p, static_cast<size_t>(n) * sizeof(T));
    return r;
  }
  void storeu(void* p) const { std::memcpy(p, &v, sizeof(V)); }
  void storeu(void* p, int n) const { std::memcpy(p, &v, static_cast<size_t>(n) * sizeof(T)); }
  T operator[](int i) const { return v[i]; }

  friend Vec operator+(Vec a, Vec b) { return a.v + b.v; }
  friend Vec operator-(Vec a, Vec b) { return a.v - b.v; }
  friend Vec operator*(Vec a, Vec b) { return a.v * b.v; }
  friend Vec operator/(Vec a, Vec b) { return a.v / b.v; }
  friend Vec operator-(Vec a) { return -a.v; }
  friend Mask operator<(Vec a, Vec b) { return a.v < b.v; }
  friend Mask operator<=(Vec a, Vec b) { return a.v <= b.v; }
  friend Mask operator>(Vec a, Vec b) { return a.v > b.v; }
  friend Mask operator>=(Vec a, Vec b) { return a.v >= b.v; }
  friend Mask operator==(Vec a, Vec b) { return a.v == b.v; }
  friend Mask operator!=(Vec a, Vec b) { return a.v != b.v; }
};

// mask ? a : b, lane by lane.
template <typename T>
inline Vec<T> select(typename Vec<T>::Mask m, Vec<T> a, Vec<T> b) {
  return m ? a.v : b.v;
}
template <typename T>
inline Vec<T> maximum(Vec<T> a, Vec<T> b) {  // propagates NaN like torch.maximum
  auto r = select<T>(a.v > b.v, a, b);
  if constexpr (std::is_floating_point_v<T>) r = select<T>(a.v != a.v, a, r);
  return r;
}
template <typename T>
inline Vec<T> minimum(Vec<T> a, Vec<T> b) {
  auto r = select<T>(a.v < b.v, a, b);
  if constexpr (std::is_floating_point_v<T>) r = select<T>(a.v != a.v, a, r);
  return r;
}
// a * b + c. Kernels compile with -ffp-contract=off (no fusing behind the code's back, so plain
// arithmetic gives the same values on every capability); fmadd is the explicit fused form, one
// rounding, where the CPU has FMA (AVX2, AVX-512) and a multiply then an add elsewhere.
template <typename T>
inline Vec<T> fmadd(Vec<T> a, Vec<T> b, Vec<T> c) {
  return a.v * b.v + c.v;
}
#if defined(KILN_CPU_CAPABILITY_AVX512)
inline Vec<float> fmadd(Vec<float> a, Vec<float> b, Vec<float> c) {
  return _mm512_fmadd_ps(a.v, b.v, c.v);
}
inline Vec<double> fmadd(Vec<double> a, Vec<double> b, Vec<double> c) {
  return _mm512_fmadd_pd(a.v, b.v, c.v);
}
#elif defined(KILN_CPU_CAPABILITY_AVX2)
inline Vec<float> fmadd(Vec<float> a, Vec<float> b, Vec<float> c) {
  return _mm256_fmadd_ps(a.v, b.v, c.v);
}
inline Vec<double> fmadd(Vec<double> a, Vec<double> b, Vec<double> c) {
  return _mm256_fmadd_pd(a.v, b.v, c.v);
}
#endif
template <typename T>
inline T reduce_add(Vec<T> a) {
  T s = T(0);
  for (int i = 0; i < Vec<T>::size; ++i) s += a.v[i];
  return s;
}

// ---- SLEEF-backed math for float and double ----
#if defined(KILN_CPU_CAPABILITY_AVX512)
#define KILN_SLEEF_F(fn, ulp) Sleef_##fn##f16_##ulp##avx512f
#define KILN_SLEEF_D(fn, ulp) Sleef_##fn##d8_##ulp##avx512f
#elif defined(KILN_CPU_CAPABILITY_AVX2)
#define KILN_SLEEF_F(fn, ulp) Sleef_##fn##f8_##ulp##avx2
#define KILN_SLEEF_D(fn, ulp) Sleef_##fn##d4_##ulp##avx2
#else
#define KILN_SLEEF_F(fn, ulp) Sleef_##fn##f4_##ulp##sse2
#define KILN_SLEEF_D(fn, ulp) Sleef_##fn##d2_##ulp##sse2
#endif

#define KILN_VEC_UNARY_MATH(fn, ulp)                                        \
  inline Vec<float> fn(Vec<float> a) { return KILN_SLEEF_F(fn, ulp)(a.v); } \
  inline Vec<double> fn(Vec<double> a) { return KILN_SLEEF_D(fn, ulp)(a.v); }
KILN_VEC_UNARY_MATH(exp, u10)
KILN_VEC_UNARY_MATH(exp2, u10)
KILN_VEC_UNARY_MATH(expm1, u10)
KILN_VEC_UNARY_MATH(log, u10)
KILN_VEC_UNARY_MATH(log2, u10)
KILN_VEC_UNARY_MATH(log10, u10)
KILN_VEC_UNARY_MATH(log1p, u10)
KILN_VEC_UNARY_MATH(sin, u10)
KILN_VEC_UNARY_MATH(cos, u10)
KILN_VEC_UNARY_MATH(tan, u10)
KILN_VEC_UNARY_MATH(asin, u10)
KILN_VEC_UNARY_MATH(acos, u10)
KILN_VEC_UNARY_MATH(atan, u10)
KILN_VEC_UNARY_MATH(sinh, u10)
KILN_VEC_UNARY_MATH(cosh, u10)
KILN_VEC_UNARY_MATH(tanh, u10)
KILN_VEC_UNARY_MATH(asinh, u10)
KILN_VEC_UNARY_MATH(acosh, u10)
KILN_VEC_UNARY_MATH(atanh, u10)
KILN_VEC_UNARY_MATH(erf, u10)
KILN_VEC_UNARY_MATH(erfc, u15)
KILN_VEC_UNARY_MATH(sqrt, u05)
#undef KILN_VEC_UNARY_MATH
inline Vec<float> atan2(Vec<float> a, Vec<float> b) { return KILN_SLEEF_F(atan2, u10)(a.v, b.v); }
inline Vec<double> atan2(Vec<double> a, Vec<double> b) {
  return KILN_SLEEF_D(atan2, u10)(a.v, b.v);
}
inline Vec<float> pow(Vec<float> a, Vec<float> b) { return KILN_SLEEF_F(pow, u10)(a.v, b.v); }
inline Vec<double> pow(Vec<double> a, Vec<double> b) { return KILN_SLEEF_D(pow, u10)(a.v, b.v); }

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
