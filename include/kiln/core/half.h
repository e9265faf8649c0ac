#pragma once
// 16-bit floating types stored as raw bits. Arithmetic goes through float, as PyTorch's CPU
// kernels do; conversions round to nearest even.
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kiln {

namespace detail {

constexpr uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {                                               // subnormal half or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    uint32_t half_mant = mant >> (shift);
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t exp = (abs >> 23) - 112;
  uint32_t mant = abs & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

constexpr float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits = 0;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

constexpr uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // nan
  uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

constexpr float bfloat16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace detail

struct FromBits {};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  constexpr Half(uint16_t b, FromBits) : bits(b) {}
  constexpr Half(float f) : bits(detail::float_to_half_bits(f)) {}  // NOLINT: implicit like c10
  constexpr operator float() const { return detail::half_bits_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  constexpr BFloat16(uint16_t b, FromBits) : bits(b) {}
  constexpr BFloat16(float f) : bits(detail::float_to_bfloat16_bits(f)) {}  // NOLINT
  constexpr operator float() const { return detail::bfloat16_bits_to_float(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace kiln

template <>
class std::numeric_limits<kiln::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr kiln::Half lowest() { return {0xfbff, kiln::FromBits{}}; }
  static constexpr kiln::Half max() { return {0x7bff, kiln::FromBits{}}; }
  static constexpr kiln::Half min() { return {0x0400, kiln::FromBits{}}; }
  static constexpr kiln::Half epsilon() { return {0x1400, kiln::FromBits{}}; }
  static constexpr kiln::Half infinity() { return {0x7c00, kiln::FromBits{}}; }
  static constexpr kiln::Half quiet_NaN() { return {0x7e00, kiln::FromBits{}}; }
};

template <>
class std::numeric_limits<kiln::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr kiln::BFloat16 lowest() { return {0xff7f, kiln::FromBits{}}; }
  static constexpr kiln::BFloat16 max() { return {0x7f7f, kiln::FromBits{}}; }
  static constexpr kiln::BFloat16 min() { return {0x0080, kiln::FromBits{}}; }
  static constexpr kiln::BFloat16 epsilon() { return {0x3c00, kiln::FromBits{}}; }
  static constexpr kiln::BFloat16 infinity() { return {0x7f80, kiln::FromBits{}}; }
  static constexpr kiln::BFloat16 quiet_NaN() { return {0x7fc0, kiln::FromBits{}}; }
};
