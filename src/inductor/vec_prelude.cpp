#include "inductor/vec_prelude.h"

#include "inductor/loop_ir.h"
#include "inductor/vec_fast_math.h"

#include <fmt/format.h>

#include <set>

namespace kiln::inductor {

namespace {

// The widths and SLEEF's GNU vector ABI names for the widest vector unit the kernel is compiled
// for (-march=native): _ZGV<isa>N<lanes><v per argument>_<name>, 'e' AVX-512, 'd' AVX2, 'c' AVX,
// 'b' SSE.
constexpr const char* kWidths = R"(
// ---- kiln's vector type (vec_prelude.cpp) ----
#include <cmath>
#include <cstdint>
#include <limits>
#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
constexpr int kiln_vec_width_float = 16, kiln_vec_width_double = 8;
#define KILN_SLEEF_F(name) _ZGVeN16v_##name##f
#define KILN_SLEEF_F35(name) _ZGVeN16v_##name##f_u35
#define KILN_SLEEF_D(name) _ZGVeN8v_##name
#define KILN_SLEEF_F2(name) _ZGVeN16vv_##name##f
#define KILN_SLEEF_D2(name) _ZGVeN8vv_##name
#define KILN_SLEEF_SINCOSF _ZGVeN16vl4l4_sincosf_u35
#define KILN_SLEEF_SINCOSD _ZGVeN8vl8l8_sincos
#elif defined(__AVX2__)
constexpr int kiln_vec_width_float = 8, kiln_vec_width_double = 4;
#define KILN_SLEEF_F(name) _ZGVdN8v_##name##f
#define KILN_SLEEF_F35(name) _ZGVdN8v_##name##f_u35
#define KILN_SLEEF_D(name) _ZGVdN4v_##name
#define KILN_SLEEF_F2(name) _ZGVdN8vv_##name##f
#define KILN_SLEEF_D2(name) _ZGVdN4vv_##name
#define KILN_SLEEF_SINCOSF _ZGVdN8vl4l4_sincosf_u35
#define KILN_SLEEF_SINCOSD _ZGVdN4vl8l8_sincos
#elif defined(__AVX__)
constexpr int kiln_vec_width_float = 8, kiln_vec_width_double = 4;
#define KILN_SLEEF_F(name) _ZGVcN8v_##name##f
#define KILN_SLEEF_F35(name) _ZGVcN8v_##name##f_u35
#define KILN_SLEEF_D(name) _ZGVcN4v_##name
#define KILN_SLEEF_F2(name) _ZGVcN8vv_##name##f
#define KILN_SLEEF_D2(name) _ZGVcN4vv_##name
#define KILN_SLEEF_SINCOSF _ZGVcN8vl4l4_sincosf_u35
#define KILN_SLEEF_SINCOSD _ZGVcN4vl8l8_sincos
#else
constexpr int kiln_vec_width_float = 4, kiln_vec_width_double = 2;
#define KILN_SLEEF_F(name) _ZGVbN4v_##name##f
#define KILN_SLEEF_F35(name) _ZGVbN4v_##name##f_u35
#define KILN_SLEEF_D(name) _ZGVbN2v_##name
#define KILN_SLEEF_F2(name) _ZGVbN4vv_##name##f
#define KILN_SLEEF_D2(name) _ZGVbN2vv_##name
#define KILN_SLEEF_SINCOSF _ZGVbN4vl4l4_sincosf_u35
#define KILN_SLEEF_SINCOSD _ZGVbN2vl8l8_sincos
#endif
)";

// Vec and Mask: value types wrapping one vector register; the operations inline away.
constexpr const char* kTypes = R"(
namespace {

template <typename T> struct kiln_lane_bits;
template <> struct kiln_lane_bits<float> { using type = int32_t; };
template <> struct kiln_lane_bits<double> { using type = int64_t; };

// Lanes of 0 (false) or -1 (true), as the vector comparisons produce them.
template <typename T, int N> struct Mask {
  using lane = typename kiln_lane_bits<T>::type;
  typedef lane native __attribute__((vector_size(N * sizeof(T))));
  native m;

  static Mask broadcast(bool b) {
    Mask r{};
    for (int i = 0; i < N; ++i) r.m[i] = b ? -1 : 0;
    return r;
  }
  // N bools (bytes of 0 or 1).
  static Mask load_bools(const bool* p) {
    typedef uint8_t bytes __attribute__((vector_size(N)));
    bytes b{};
    __builtin_memcpy(&b, p, N);
    return {__builtin_convertvector(b != 0, native)};
  }
  void store_bools(bool* p) const {
    typedef int8_t bytes __attribute__((vector_size(N)));
    const bytes b = __builtin_convertvector(m, bytes) & 1;
    __builtin_memcpy(p, &b, N);
  }
  friend Mask operator&(Mask a, Mask b) { return {a.m & b.m}; }
  friend Mask operator|(Mask a, Mask b) { return {a.m | b.m}; }
  friend Mask operator^(Mask a, Mask b) { return {a.m ^ b.m}; }
  friend Mask operator~(Mask a) { return {~a.m}; }
};

// N 16-bit lanes and N 32-bit lanes (16-bit floats' bits and their float32 bits).
template <int N> struct kiln_lanes16 {
  typedef uint16_t halves __attribute__((vector_size(N * 2)));
  typedef uint32_t words __attribute__((vector_size(N * 4)));
};

template <typename T, int N> struct Vec {
  typedef T native __attribute__((vector_size(N * sizeof(T))));
  using mask = Mask<T, N>;
  using value_type = T;
  static constexpr int size = N;
  native v;

  static Vec load(const T* p) {
    Vec r{};
    __builtin_memcpy(&r.v, p, sizeof(native));
    return r;
  }
  void store(T* p) const { __builtin_memcpy(p, &v, sizeof(native)); }
  // A non-temporal store past the caches (streaming_stores.h) where p is aligned to the vector,
  // else a plain one. The function's threads each call kiln_stream_fence() before they join.
  void store_stream(T* p) const {
#if defined(__SSE4_1__)
    if ((reinterpret_cast<uintptr_t>(p) & (sizeof(native) - 1)) == 0) {
#if defined(__AVX512F__)
      if constexpr (sizeof(native) == 64) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(p), reinterpret_cast<const __m512i&>(v));
        return;
      }
#endif
#if defined(__AVX__)
      if constexpr (sizeof(native) == 32) {
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<const __m256i&>(v));
        return;
      }
#endif
      if constexpr (sizeof(native) == 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(p), reinterpret_cast<const __m128i&>(v));
        return;
      }
    }
#endif
    store(p);
  }
  // bfloat16 and float16 elements (float lanes only): widened exactly, stored rounded to nearest
  // even as the scalar prelude's kiln_bf16 and kiln_half do (F16C's conversions where there).
  static Vec load(const kiln_bf16* p) {
    using halves = typename kiln_lanes16<N>::halves;
    using words = typename kiln_lanes16<N>::words;
    halves h;
    __builtin_memcpy(&h, p, sizeof(h));
    const words w = __builtin_convertvector(h, words) << 16;
    Vec r;
    __builtin_memcpy(&r.v, &w, sizeof(w));
    return r;
  }
  // Each lane's bfloat16 bits (in the low half of 32-bit lanes).
  typename kiln_lanes16<N>::words bf16_bits() const {
    using words = typename kiln_lanes16<N>::words;
    words x;
    __builtin_memcpy(&x, &v, sizeof(x));
    const words rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const words quiet_nan = (x >> 16) | 0x40u;
    return (x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
  }
  void store(kiln_bf16* p) const {
    using halves = typename kiln_lanes16<N>::halves;
    const halves h = __builtin_convertvector(bf16_bits(), halves);
    __builtin_memcpy(p, &h, sizeof(h));
  }
  static Vec load(const kiln_half* p) {
#if defined(__AVX512F__)
    // Zero-masked forms of the AVX-512 conversions here and in store(): g++ 12's unmasked ones pass
    // an _undefined_ vector, which -Wmaybe-uninitialized reports once inlined into a loop.
    if constexpr (N == 16) {
      return {(native)_mm512_maskz_cvtph_ps(__mmask16(0xFFFF),
                                            _mm256_loadu_si256((const __m256i*)p))};
    }
#endif
#if defined(__F16C__)
    if constexpr (N == 8) return {(native)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p))};
    if constexpr (N == 4) return {(native)_mm_cvtph_ps(_mm_loadl_epi64((const __m128i*)p))};
#endif
    Vec r{};
    for (int i = 0; i < N; ++i) r.v[i] = p[i];
    return r;
  }
  void store(kiln_half* p) const {
    [[maybe_unused]] constexpr int nearest = 8;  // to nearest even, no exceptions
#if defined(__AVX512F__)
    if constexpr (N == 16) {
      _mm256_storeu_si256((__m256i*)p,
                          _mm512_maskz_cvtps_ph(__mmask16(0xFFFF), (__m512)v, nearest));
      return;
    }
#endif
#if defined(__F16C__)
    if constexpr (N == 8) {
      _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph((__m256)v, nearest));
      return;
    }
    if constexpr (N == 4) {
      _mm_storel_epi64((__m128i*)p, _mm_cvtps_ph((__m128)v, nearest));
      return;
    }
#endif
    for (int i = 0; i < N; ++i) p[i] = kiln_half(v[i]);
  }
  static Vec broadcast(T x) {
    Vec r{};
    for (int i = 0; i < N; ++i) r.v[i] = x;
    return r;
  }
  // base, base + 1, ..., base + N - 1.
  static Vec iota(T base) {
    Vec r{};
    for (int i = 0; i < N; ++i) r.v[i] = base + T(i);
    return r;
  }
  // 1 where m is true, else 0 (a bool converted to T).
  static Vec from_mask(mask m) {
    const typename mask::native one = (typename mask::native)broadcast(T(1)).v;
    return {(native)(m.m & one)};
  }

  friend Vec operator+(Vec a, Vec b) { return {a.v + b.v}; }
  friend Vec operator-(Vec a, Vec b) { return {a.v - b.v}; }
  friend Vec operator*(Vec a, Vec b) { return {a.v * b.v}; }
  friend Vec operator/(Vec a, Vec b) { return {a.v / b.v}; }
  friend Vec operator-(Vec a) { return {-a.v}; }
  friend mask operator==(Vec a, Vec b) { return {(typename mask::native)(a.v == b.v)}; }
  friend mask operator!=(Vec a, Vec b) { return {(typename mask::native)(a.v != b.v)}; }
  friend mask operator<(Vec a, Vec b) { return {(typename mask::native)(a.v < b.v)}; }
  friend mask operator<=(Vec a, Vec b) { return {(typename mask::native)(a.v <= b.v)}; }
  friend mask operator>(Vec a, Vec b) { return {(typename mask::native)(a.v > b.v)}; }
  friend mask operator>=(Vec a, Vec b) { return {(typename mask::native)(a.v >= b.v)}; }
};

// A float vector rounded to bfloat16 or float16 (a 16-bit value lives in float lanes).
template <typename H, int N> Vec<float, N> vec_round_to(Vec<float, N> a) {
  if constexpr (std::is_same_v<H, kiln_bf16>) {  // in 32-bit lanes (no narrowing and widening)
    const typename kiln_lanes16<N>::words w = a.bf16_bits() << 16;
    Vec<float, N> r;
    __builtin_memcpy(&r.v, &w, sizeof(w));
    return r;
  }
  H h[N];
  a.store(h);
  return Vec<float, N>::load(h);
}

using VecF = Vec<float, kiln_vec_width_float>;
using VecD = Vec<double, kiln_vec_width_double>;
using MaskF = Mask<float, kiln_vec_width_float>;
using MaskD = Mask<double, kiln_vec_width_double>;

// Orders this thread's streaming stores (store_stream) before what follows it: they are weakly
// ordered, and the threads' join must publish them.
[[maybe_unused]] inline void kiln_stream_fence() {
#if defined(__SSE4_1__)
  _mm_sfence();
#endif
}

// m ? a : b, lane by lane (a bitwise blend: the mask lanes are all ones or all zeros).
// The vector conditional: one blend (and/or/not spelled out became two masked xors).
template <typename T, int N> Vec<T, N> vec_where(Mask<T, N> m, Vec<T, N> a, Vec<T, N> b) {
  return {m.m ? a.v : b.v};
}
template <typename T, int N> Mask<T, N> vec_where(Mask<T, N> m, Mask<T, N> a, Mask<T, N> b) {
  return {m.m ? a.m : b.m};
}
template <typename T, int N> Mask<T, N> vec_isnan(Vec<T, N> a) { return a != a; }
// Whether x * r, r = 1 / c (c the same in every lane), may stand for x / c: r is normal (the
// product is rounded once more than the quotient, as eager's softmax does), or c is zero,
// infinite or NaN (then the product is exactly the quotient). Not for a denormal r or one that
// overflowed.
template <typename T, int N> bool vec_reciprocal_usable(Vec<T, N> c, Vec<T, N> r) {
  const T cs = c.v[0], rs = r.v[0];
  return std::isnormal(rs) || cs == T(0) || std::isinf(cs) || cs != cs;
}

// As kiln_maximum/kiln_minimum lane by lane: a if a is NaN, else b if b is NaN, else the larger
// (smaller), b on ties (so maximum(+0, -0) is -0 as in the scalar code).
template <typename T, int N> Vec<T, N> vec_maximum(Vec<T, N> a, Vec<T, N> b) {
  const Vec<T, N> r = vec_where(vec_isnan(b), b, vec_where(a > b, a, b));
  return vec_where(vec_isnan(a), a, r);
}
template <typename T, int N> Vec<T, N> vec_minimum(Vec<T, N> a, Vec<T, N> b) {
  const Vec<T, N> r = vec_where(vec_isnan(b), b, vec_where(a < b, a, b));
  return vec_where(vec_isnan(a), a, r);
}
// The same for an accumulator (a max/min reduction): NaN-propagating in two compares and two
// blends instead of three each; a tie keeps the accumulator, as the scalar loop does.
template <typename T, int N> Vec<T, N> vec_accumulate_maximum(Vec<T, N> acc, Vec<T, N> v) {
  return vec_where(vec_isnan(v), v, vec_where(v > acc, v, acc));
}
template <typename T, int N> Vec<T, N> vec_accumulate_minimum(Vec<T, N> acc, Vec<T, N> v) {
  return vec_where(vec_isnan(v), v, vec_where(v < acc, v, acc));
}
template <typename T> T kiln_vec_scalar_maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}
template <typename T> T kiln_vec_scalar_minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}

// The sign bit cleared, as std::abs (NaN included).
template <typename T, int N> Vec<T, N> vec_abs(Vec<T, N> a) {
  using I = typename Mask<T, N>::native;
  using V = typename Vec<T, N>::native;
  const I sign = (I)Vec<T, N>::broadcast(T(-0.0)).v;
  return {(V)((I)a.v & ~sign)};
}

// sqrt lane by lane: the loop compiles to one vector instruction.
template <typename T, int N> Vec<T, N> vec_sqrt(Vec<T, N> a) {
  Vec<T, N> r{};
  for (int i = 0; i < N; ++i) r.v[i] = std::sqrt(a.v[i]);
  return r;
}

// Rounding to an integral value: 1 floor, 2 ceil, 3 trunc, 4 nearbyint (the current mode), as
// the round instructions encode them. g++ leaves lane loops of floor/ceil/trunc scalar, hence the
// intrinsics; the lane loop remains for widths without one.
template <int Mode, typename T> T kiln_round_lane(T x) {
  if constexpr (Mode == 1) return std::floor(x);
  if constexpr (Mode == 2) return std::ceil(x);
  if constexpr (Mode == 3) return std::trunc(x);
  return std::nearbyint(x);
}
template <int Mode, typename T, int N> Vec<T, N> kiln_round_to(Vec<T, N> a) {
  using V [[maybe_unused]] = typename Vec<T, N>::native;
  [[maybe_unused]] constexpr bool is_float = sizeof(T) == 4;
  [[maybe_unused]] constexpr int bytes = N * int(sizeof(T));
  [[maybe_unused]] constexpr int imm = Mode | 8;  // 8: no precision exception, as libm's
#if defined(__AVX512F__)
  if constexpr (bytes == 64) {
    // The masked forms: the plain ones read an undefined register that g++ 12 warns about.
    if constexpr (is_float) {
      return {(V)_mm512_mask_roundscale_ps((__m512)a.v, (__mmask16)-1, (__m512)a.v, imm)};
    }
    if constexpr (!is_float) {
      return {(V)_mm512_mask_roundscale_pd((__m512d)a.v, (__mmask8)-1, (__m512d)a.v, imm)};
    }
  }
#endif
#if defined(__AVX__)
  if constexpr (bytes == 32) {
    if constexpr (is_float) return {(V)_mm256_round_ps((__m256)a.v, imm)};
    if constexpr (!is_float) return {(V)_mm256_round_pd((__m256d)a.v, imm)};
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (bytes == 16) {
    if constexpr (is_float) return {(V)_mm_round_ps((__m128)a.v, imm)};
    if constexpr (!is_float) return {(V)_mm_round_pd((__m128d)a.v, imm)};
  }
#endif
  Vec<T, N> r{};
  for (int i = 0; i < N; ++i) r.v[i] = kiln_round_lane<Mode>(a.v[i]);
  return r;
}
template <typename T, int N> Vec<T, N> vec_floor(Vec<T, N> a) { return kiln_round_to<1>(a); }
template <typename T, int N> Vec<T, N> vec_ceil(Vec<T, N> a) { return kiln_round_to<2>(a); }
template <typename T, int N> Vec<T, N> vec_trunc(Vec<T, N> a) { return kiln_round_to<3>(a); }
template <typename T, int N> Vec<T, N> vec_round(Vec<T, N> a) { return kiln_round_to<4>(a); }

template <typename T, int N> Vec<T, N> vec_rsqrt(Vec<T, N> a) {
  return Vec<T, N>::broadcast(T(1)) / vec_sqrt(a);
}
template <typename T, int N> Vec<T, N> vec_div_trunc(Vec<T, N> a, Vec<T, N> b) {
  return vec_trunc(a / b);
}
template <typename T, int N> Vec<T, N> vec_div_floor(Vec<T, N> a, Vec<T, N> b) {
  return vec_floor(a / b);
}

// The low and high halves of a float vector as doubles: one register each (float sums
// accumulated in double lanes).
template <int N> Vec<double, N / 2> kiln_widen_half(Vec<float, N> a, int half) {
  typedef float floats __attribute__((vector_size(N / 2 * sizeof(float))));
  floats h;
  __builtin_memcpy(&h, reinterpret_cast<const char*>(&a.v) + half * sizeof(floats), sizeof(h));
  return {__builtin_convertvector(h, typename Vec<double, N / 2>::native)};
}
template <int N> Vec<double, N / 2> vec_widen_low(Vec<float, N> a) {
  return kiln_widen_half(a, 0);
}
template <int N> Vec<double, N / 2> vec_widen_high(Vec<float, N> a) {
  return kiln_widen_half(a, 1);
}

// Horizontal reductions: the lanes combined as a tree (halves pairwise), sums and products in A
// (double for float sums, which keeps the combination exact-ish and cheap).
template <typename A, typename T, int N> A reduce_add(Vec<T, N> a) {
  A lanes[N];
  for (int i = 0; i < N; ++i) lanes[i] = A(a.v[i]);
  for (int w = N / 2; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) lanes[i] = lanes[i] + lanes[i + w];
  }
  return lanes[0];
}
template <typename A, typename T, int N> A reduce_mul(Vec<T, N> a) {
  A lanes[N];
  for (int i = 0; i < N; ++i) lanes[i] = A(a.v[i]);
  for (int w = N / 2; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) lanes[i] = lanes[i] * lanes[i + w];
  }
  return lanes[0];
}
template <typename T, int N> T reduce_max(Vec<T, N> a) {
  T lanes[N];
  for (int i = 0; i < N; ++i) lanes[i] = a.v[i];
  for (int w = N / 2; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) lanes[i] = kiln_vec_scalar_maximum(lanes[i], lanes[i + w]);
  }
  return lanes[0];
}
template <typename T, int N> T reduce_min(Vec<T, N> a) {
  T lanes[N];
  for (int i = 0; i < N; ++i) lanes[i] = a.v[i];
  for (int w = N / 2; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) lanes[i] = kiln_vec_scalar_minimum(lanes[i], lanes[i + w]);
  }
  return lanes[0];
}

}  // namespace
)";

// SLEEF's asinh and acosh overflow beyond the square root of the largest value (|a| > 1.8e19
// for float, 1.3e154 for double) and log1p near the largest value; there the results are
// log(|a|) + log(2) and log(a) (the terms dropped are below half an ulp).
constexpr const char* kLargeArguments = R"(
template <typename T> constexpr T kiln_large_argument() {
  if constexpr (sizeof(T) == 4) return T(1e18);
  return T(1e150);
}
template <typename V> V kiln_with_sign_of(V magnitude, V sign_source) {
  using I = typename V::mask::native;
  const I sign = (I)V::broadcast(typename V::value_type(-0.0)).v;
  return {(typename V::native)((I)magnitude.v | ((I)sign_source.v & sign))};
}
template <typename V> V kiln_log_twice(V a) {
  using T = typename V::value_type;
  return vec_log(a) + V::broadcast(T(0.693147180559945309417232121458176568L));
}
template <typename V> V kiln_asinh(V a) {
  using T = typename V::value_type;
  const V magnitude = vec_abs(a);
  const typename V::mask large = magnitude > V::broadcast(kiln_large_argument<T>());
  return vec_where(large, kiln_with_sign_of(kiln_log_twice(magnitude), a), sleef_asinh(a));
}
template <typename V> V kiln_acosh(V a) {
  using T = typename V::value_type;
  const typename V::mask large = a > V::broadcast(kiln_large_argument<T>());
  return vec_where(large, kiln_log_twice(a), sleef_acosh(a));
}
template <typename V> V kiln_log1p(V a) {
  using T = typename V::value_type;
  const typename V::mask large = a > V::broadcast(std::numeric_limits<T>::max() / T(1024));
  return vec_where(large, vec_log(a), sleef_log1p(a));
}
template <int N = 0> VecF vec_asinh(VecF a) { return kiln_asinh(a); }
template <int N = 0> VecD vec_asinh(VecD a) { return kiln_asinh(a); }
template <int N = 0> VecF vec_acosh(VecF a) { return kiln_acosh(a); }
template <int N = 0> VecD vec_acosh(VecD a) { return kiln_acosh(a); }
template <int N = 0> VecF vec_log1p(VecF a) { return kiln_log1p(a); }
template <int N = 0> VecD vec_log1p(VecD a) { return kiln_log1p(a); }
)";

// sin and cos of one vector at once (sincos_pairing.h): float inline (vec_fast_math.h), double
// through SLEEF's GNU-ABI sincos, which stores lane i of each result at pointer + i.
constexpr const char* kSinCos = R"(
template <int N = 0> void vec_sincos(VecF a, VecF& s, VecF& c) { kiln_fast_sincos(a, s, c); }
template <int N = 0> void vec_sincos(VecD a, VecD& s, VecD& c) {
  alignas(64) double sv[kiln_vec_width_double], cv[kiln_vec_width_double];
  KILN_SLEEF_SINCOSD(a.v, sv, cv);
  s = VecD::load(sv);
  c = VecD::load(cv);
}
)";

}  // namespace

const std::string& vec_prelude() {
  static const std::string text = [] {
    std::string s = std::string(kWidths) + kTypes;
    // SLEEF's functions take and return the vector registers themselves (GNU vector ABI).
    s += "\ntypedef float kiln_vf_native __attribute__((vector_size(kiln_vec_width_float * 4)));\n";
    s += "typedef double kiln_vd_native __attribute__((vector_size(kiln_vec_width_double * 8)));\n";
    s += "extern \"C\" {\n";
    // float32 uses SLEEF's 3.5-ulp variants where it has them (2-3x faster than the 1-ulp ones
    // for sin, cos and tanh; well inside float32 tolerances); float64 keeps 1-ulp.
    const auto float_macro = [](const std::string& f) {
      static const std::set<std::string> u35 = {"sin",  "cos",  "tan", "asin", "acos",
                                                "atan", "tanh", "log", "log2", "exp2"};
      return u35.count(f) ? "KILN_SLEEF_F35" : "KILN_SLEEF_F";
    };
    for (const std::string& f : unary_math_functions()) {
      s += fmt::format("kiln_vf_native {1}({0})(kiln_vf_native) noexcept;\n", f, float_macro(f));
      s += fmt::format("kiln_vd_native KILN_SLEEF_D({0})(kiln_vd_native) noexcept;\n", f);
    }
    for (const std::string& f : binary_math_functions()) {
      s += fmt::format(
          "kiln_vf_native KILN_SLEEF_F2({0})(kiln_vf_native, kiln_vf_native) noexcept;\n", f);
      s += fmt::format(
          "kiln_vd_native KILN_SLEEF_D2({0})(kiln_vd_native, kiln_vd_native) noexcept;\n", f);
    }
    // sincos writes the two results through pointers (linear arguments, step one lane).
    s += "void KILN_SLEEF_SINCOSF(kiln_vf_native, float*, float*) noexcept;\n";
    s += "void KILN_SLEEF_SINCOSD(kiln_vd_native, double*, double*) noexcept;\n";
    s += "}\n\nnamespace {\n";
    s += vec_fast_math();
    // Templates (on an unused parameter) rather than plain functions: no unused-function warnings.
    for (const std::string& f : unary_math_functions()) {
      // Functions that overflow early in SLEEF get a wrapper (kLargeArguments) around sleef_<f>.
      const bool wrapped = f == "asinh" || f == "acosh" || f == "log1p";
      // float exp, tanh and erf inline (vec_fast_math.h); the rest through SLEEF.
      const bool inline_float =
          f == "exp" || f == "tanh" || f == "erf" || f == "erfc" || f == "sin" || f == "cos";
      s +=
          inline_float
              ? fmt::format(
                    "template <int N = 0> VecF vec_{0}(VecF a) {{ return kiln_fast_{0}(a); }}\n", f)
              : fmt::format(
                    "template <int N = 0> VecF {1}{0}(VecF a) {{ return {{{2}({0})(a.v)}}; }}\n", f,
                    wrapped ? "sleef_" : "vec_", float_macro(f));
      s += fmt::format(
          "template <int N = 0> VecD {1}{0}(VecD a) {{ return {{KILN_SLEEF_D({0})(a.v)}}; }}\n", f,
          wrapped ? "sleef_" : "vec_");
    }
    for (const std::string& f : binary_math_functions()) {
      s += fmt::format(
          "template <int N = 0> VecF vec_{0}(VecF a, VecF b) {{ return {{KILN_SLEEF_F2({0})(a.v, "
          "b.v)}}; }}\n"
          "template <int N = 0> VecD vec_{0}(VecD a, VecD b) {{ return {{KILN_SLEEF_D2({0})(a.v, "
          "b.v)}}; }}\n",
          f);
    }
    s += kSinCos;
    s += kLargeArguments;
    s += "}  // namespace\n// ---- end of kiln's vector type ----\n";
    return s;
  }();
  return text;
}

}  // namespace kiln::inductor
