#include <gtest/gtest.h>
#include <kiln/core/dtype.h>
#include <kiln/core/half.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

TEST(DType, ItemsizeAndCategories) {
  EXPECT_EQ(itemsize(kBool), 1u);
  EXPECT_EQ(itemsize(kBFloat16), 2u);
  EXPECT_EQ(itemsize(kInt32), 4u);
  EXPECT_EQ(itemsize(kFloat64), 8u);
  EXPECT_TRUE(is_floating_point(kFloat16));
  EXPECT_FALSE(is_floating_point(kInt64));
  EXPECT_TRUE(is_integral(kUInt8));
  EXPECT_FALSE(is_integral(kBool));
  EXPECT_TRUE(is_integral(kBool, /*include_bool=*/true));
}

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  EXPECT_EQ(dtype_from_name("long"), kInt64);
  EXPECT_EQ(dtype_from_name("half"), kFloat16);
  EXPECT_EQ(dtype_from_name("double"), kFloat64);
  EXPECT_FALSE(dtype_from_name("complex64").has_value());
}

// Expected values are torch.promote_types results (PyTorch's promotion lattice).
TEST(DType, PromoteTypesMatchesPyTorch) {
  struct Case {
    DType a, b, expected;
  };
  const Case cases[] = {
      {kBool, kBool, kBool},           {kBool, kUInt8, kUInt8},
      {kUInt8, kInt8, kInt16},         {kInt8, kInt16, kInt16},
      {kUInt8, kInt64, kInt64},        {kInt32, kInt64, kInt64},
      {kInt64, kFloat16, kFloat16},    {kFloat16, kBFloat16, kFloat32},
      {kBFloat16, kFloat32, kFloat32}, {kFloat32, kFloat64, kFloat64},
      {kInt64, kFloat32, kFloat32},    {kBool, kFloat64, kFloat64},
      {kUInt8, kBFloat16, kBFloat16},  {kInt16, kInt32, kInt32},
      {kUInt8, kUInt8, kUInt8},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.expected) << dtype_name(c.a) << "+" << dtype_name(c.b);
    EXPECT_EQ(promote_types(c.b, c.a), c.expected) << "symmetric";
  }
}

TEST(DType, CanCastMatchesPyTorch) {
  EXPECT_TRUE(can_cast(kInt64, kFloat32));
  EXPECT_FALSE(can_cast(kFloat32, kInt64));
  EXPECT_FALSE(can_cast(kInt32, kBool));
  EXPECT_TRUE(can_cast(kBool, kUInt8));
  EXPECT_TRUE(can_cast(kFloat64, kFloat16));
}

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);               // largest finite
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);               // rounds to inf
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(Half(0.1f).bits, 0x2e66);
  EXPECT_EQ(Half(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);  // tie rounds to even
  EXPECT_EQ(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(Half(0x3555, FromBits{})), 0.333251953125f);
  EXPECT_EQ(static_cast<float>(Half(0x0001, FromBits{})), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(Half(0xfc00, FromBits{})), -std::numeric_limits<float>::infinity());
}

TEST(BFloat16, KnownBitPatterns) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(-1.5f).bits, 0xbfc0);
  EXPECT_EQ(BFloat16(3.14159265f).bits, 0x4049);  // 3.140625
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(BFloat16(0x4049, FromBits{})), 3.140625f);
}

TEST(Half, RoundTripsEveryFiniteValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Half h(static_cast<uint16_t>(b), FromBits{});
    float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).bits, b) << std::hex << b;
  }
}

}  // namespace
}  // namespace kiln
