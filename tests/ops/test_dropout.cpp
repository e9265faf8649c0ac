// Dropout: mask statistics within a binomial tolerance, exact scaling, reproducibility from the
// seed (and independence from the thread count), p = 0 / p = 1 / eval edge cases, the in-place
// forms, whole-channel dropout, and bad p.
#include "test_util.h"

#include <kiln/ops/dropout.h>

#include <cmath>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

double fraction_true(const Tensor& mask) {
  return mask.to(kFloat64).sum().item<double>() / static_cast<double>(mask.numel());
}

TEST(Dropout, MaskFractionWithinBinomialTolerance) {
  manual_seed(123);
  const int64_t n = 1 << 20;
  for (double p : {0.1, 0.5, 0.8}) {
    auto [out, mask] = native_dropout(ones({n}), p);
    EXPECT_EQ(mask.dtype(), kBool);
    const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(n));
    EXPECT_NEAR(1.0 - fraction_true(mask), p, 6 * sigma) << p;
  }
}

TEST(Dropout, ScalingIsExactAndMatchesMask) {
  manual_seed(1);
  Tensor x = randn({300, 7});
  const double p = 0.3;
  auto [out, mask] = native_dropout(x, p);
  const auto xv = x.tolist<double>(), ov = out.tolist<double>();
  const auto mv = mask.tolist<bool>();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  for (size_t i = 0; i < xv.size(); ++i) {
    EXPECT_EQ(ov[i], mv[i] ? static_cast<double>(static_cast<float>(xv[i]) * scale) : 0.0) << i;
  }
  Tensor y = dropout(ones({1000}, kFloat64), 0.75);
  for (double v : y.tolist<double>()) EXPECT_TRUE(v == 0.0 || v == 4.0) << v;
}

TEST(Dropout, SameSeedSameMask) {
  Tensor x = randn({64, 65});
  manual_seed(42);
  Tensor a = dropout(x, 0.5);
  manual_seed(42);
  Tensor b = dropout(x, 0.5);
  EXPECT_TRUE(all_close(a, b, 0.0, 0.0));
  Tensor c = dropout(x, 0.5);  // the generator moved on
  EXPECT_FALSE(all_close(a, c, 0.0, 0.0));
  Generator g1(7), g2(7);
  EXPECT_TRUE(all_close(dropout(x, 0.4, true, &g1), dropout(x, 0.4, true, &g2), 0.0, 0.0));
  // The mask does not depend on how the elements are split over threads.
  const int threads = get_num_threads();
  Tensor big = ones({200000});
  set_num_threads(1);
  Generator h1(9);
  Tensor one = native_dropout(big, 0.5, true, &h1).second;
  set_num_threads(2);
  Generator h2(9);
  Tensor two = native_dropout(big, 0.5, true, &h2).second;
  set_num_threads(threads);
  EXPECT_TRUE(one.eq(two).all().item<bool>());
}

TEST(Dropout, EdgeCases) {
  Tensor x = randn({5, 6});
  EXPECT_TRUE(all_close(dropout(x, 0.5, false), x, 0.0, 0.0));
  EXPECT_TRUE(all_close(dropout(x, 0.0), x, 0.0, 0.0));
  EXPECT_TRUE(all_close(dropout(x, 1.0), zeros({5, 6}), 0.0, 0.0));
  auto [eval_out, eval_mask] = native_dropout(x, 0.5, false);
  EXPECT_TRUE(all_close(eval_out, x, 0.0, 0.0));
  EXPECT_TRUE(eval_mask.all().item<bool>());
  auto [all_out, none_kept] = native_dropout(x, 1.0);
  EXPECT_FALSE(none_kept.any().item<bool>());
  EXPECT_TRUE(all_close(all_out, zeros({5, 6}), 0.0, 0.0));
  EXPECT_TRUE(native_dropout(x, 0.0).second.all().item<bool>());
  EXPECT_EQ(dropout(zeros({0, 3}), 0.5).numel(), 0);
  EXPECT_EQ(native_dropout(zeros({0, 3}), 0.5).second.numel(), 0);
  EXPECT_EQ(dropout(scalar_tensor(2.0), 0.0).item<double>(), 2.0);
  Tensor nc = randn({6, 5}).t();
  auto [nc_out, nc_mask] = native_dropout(nc, 0.5);
  EXPECT_TRUE(all_close(nc_out, nc * nc_mask * 2.0, 0.0, 0.0));
  for (DType dt : {kFloat64, kBFloat16, kFloat16}) {
    Tensor h = ones({100}, dt);
    Tensor y = dropout(h, 0.5);
    EXPECT_EQ(y.dtype(), dt);
    for (double v : y.tolist<double>()) EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
  }
}

TEST(Dropout, InPlaceFormsMatchFunctional) {
  Tensor x = randn({10, 10});
  manual_seed(5);
  Tensor expected = dropout(x, 0.3);
  manual_seed(5);
  Tensor y = x.clone();
  Tensor& r = dropout_(y, 0.3);
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(all_close(y, expected, 0.0, 0.0));
  Tensor z = x.clone();
  dropout_(z, 0.3, false);
  EXPECT_TRUE(all_close(z, x, 0.0, 0.0));
  dropout_(z, 1.0);
  EXPECT_TRUE(all_close(z, zeros({10, 10}), 0.0, 0.0));
  Tensor f = ones({4, 8, 3, 3});
  manual_seed(6);
  Tensor fexpected = feature_dropout(f, 0.5);
  manual_seed(6);
  feature_dropout_(f, 0.5);
  EXPECT_TRUE(all_close(f, fexpected, 0.0, 0.0));
}

// Every (n, c) channel is either all zero or all 1 / (1 - p).
void expect_whole_channels(const Tensor& y, int64_t channels, int64_t per_channel, double scale) {
  const auto v = y.tolist<double>();
  int64_t zeroed = 0;
  for (int64_t ch = 0; ch < channels; ++ch) {
    const double first = v[static_cast<size_t>(ch * per_channel)];
    EXPECT_TRUE(first == 0.0 || first == static_cast<double>(static_cast<float>(scale))) << first;
    zeroed += first == 0.0;
    for (int64_t i = 1; i < per_channel; ++i) {
      ASSERT_EQ(v[static_cast<size_t>(ch * per_channel + i)], first) << ch;
    }
  }
  EXPECT_GT(zeroed, 0);
  EXPECT_LT(zeroed, channels);
}

TEST(Dropout, FeatureDropoutZeroesWholeChannels) {
  manual_seed(11);
  expect_whole_channels(feature_dropout(ones({8, 16, 4, 5}), 0.5), 8 * 16, 20, 2.0);
  expect_whole_channels(dropout2d(ones({8, 16, 4, 5}), 0.5), 8 * 16, 20, 2.0);
  // Unbatched (C, H, W): each of the C channels.
  expect_whole_channels(dropout2d(ones({64, 3, 3}), 0.25), 64, 9, 1.0 / 0.75);
  EXPECT_TRUE(all_close(feature_dropout(ones({2, 3, 4}), 0.5, false), ones({2, 3, 4}), 0, 0));
  EXPECT_TRUE(throws_error([&] { feature_dropout(ones({4}), 0.5); },
                           {"feature_dropout", "at least 2 dimensions", "[4]"}));
  EXPECT_TRUE(throws_error([&] { dropout2d(ones({4, 4}), 0.5); }, {"dropout2d", "2-D"}));
}

TEST(Dropout, ProbabilityOutsideUnitIntervalIsAnError) {
  Tensor x = ones({3});
  EXPECT_TRUE(throws_error([&] { dropout(x, 1.5); }, {"dropout", "between 0 and 1", "1.5"}));
  EXPECT_TRUE(throws_error([&] { dropout(x, -0.1, false); }, {"between 0 and 1", "-0.1"}));
  EXPECT_TRUE(throws_error([&] { native_dropout(x, 2.0); }, {"native_dropout", "2"}));
  EXPECT_TRUE(throws_error([&] { feature_dropout(ones({2, 2}), -1.0); }, {"feature_dropout"}));
  EXPECT_TRUE(throws_error([&] { dropout_(x, 1.01); }, {"dropout_"}));
  EXPECT_THROW(native_dropout(ones({3}, kInt64), 0.5), TypeError);
}

}  // namespace
}  // namespace kiln
