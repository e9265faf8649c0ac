// nn::init and layers' default initialization: kiln's random draws differ from PyTorch's, so the
// distributions' parameters are checked (bounds, mean, standard deviation over many draws).
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace kiln {
namespace {

using namespace kiln::nn;
using testing::all_close;
using testing::throws_error;

struct Stats {
  double min, max, mean, std;
};

Stats stats_of(const Tensor& t) {
  Tensor d = t.detach().to(kFloat64);
  return {d.min().item<double>(), d.max().item<double>(), d.mean().item<double>(),
          d.std().item<double>()};
}

// U(-b, b): within the bounds, reaching close to them, std b / sqrt(3).
void expect_uniform(const Tensor& t, double bound) {
  Stats s = stats_of(t);
  EXPECT_GE(s.min, -bound);
  EXPECT_LE(s.max, bound);
  EXPECT_LT(s.min, -0.95 * bound);
  EXPECT_GT(s.max, 0.95 * bound);
  EXPECT_NEAR(s.mean, 0.0, 0.05 * bound);
  EXPECT_NEAR(s.std, bound / std::sqrt(3.0), 0.05 * bound / std::sqrt(3.0));
}

TEST(NnInit, GainAndFans) {
  EXPECT_DOUBLE_EQ(init::calculate_gain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("conv2d"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("selu"), 0.75);
  EXPECT_TRUE(throws_error([] { init::calculate_gain("swish"); }, {"swish"}));
  auto fans = init::calculate_fan_in_and_fan_out(empty({8, 3, 5, 5}));
  EXPECT_EQ(fans.first, 75);
  EXPECT_EQ(fans.second, 200);
  EXPECT_TRUE(throws_error([] { init::calculate_fan_in_and_fan_out(empty({4})); }, {"fewer"}));
}

TEST(NnInit, Distributions) {
  manual_seed(1);
  Tensor t = empty({400, 500});
  expect_uniform(init::uniform_(t, -0.3, 0.3), 0.3);
  Stats n = stats_of(init::normal_(t, 1.5, 0.2));
  EXPECT_NEAR(n.mean, 1.5, 0.002);
  EXPECT_NEAR(n.std, 0.2, 0.002);
  EXPECT_TRUE(all_close(init::constant_(t, 0.7), full({400, 500}, 0.7)));
  EXPECT_TRUE(all_close(init::ones_(t), ones({400, 500})));
  EXPECT_TRUE(all_close(init::zeros_(t), zeros({400, 500})));
  // xavier: std = gain * sqrt(2 / (fan_in + fan_out)).
  const double xstd = 2.0 * std::sqrt(2.0 / 900.0);
  expect_uniform(init::xavier_uniform_(t, 2.0), std::sqrt(3.0) * xstd);
  EXPECT_NEAR(stats_of(init::xavier_normal_(t, 2.0)).std, xstd, 0.01 * xstd);
  // kaiming: std = gain / sqrt(fan); fan_in = 500, fan_out = 400.
  expect_uniform(init::kaiming_uniform_(t, 0.0, "fan_in", "relu"),
                 std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(500.0));
  EXPECT_NEAR(stats_of(init::kaiming_normal_(t, 0.0, "fan_out", "relu")).std,
              std::sqrt(2.0 / 400.0), 0.01 * std::sqrt(2.0 / 400.0));
  EXPECT_TRUE(throws_error([&] { init::kaiming_uniform_(t, 0.0, "fan_avg"); }, {"fan_avg"}));
  // trunc_normal: inside [a, b]; N(0, 1) truncated to [-1, 2] has mean
  // (phi(-1) - phi(2)) / (Phi(2) - Phi(-1)) = 0.22964 and std 0.72095 (closed form).
  Stats tn = stats_of(init::trunc_normal_(t, 0.0, 1.0, -1.0, 2.0));
  EXPECT_GE(tn.min, -1.0);
  EXPECT_LE(tn.max, 2.0);
  EXPECT_NEAR(tn.mean, 0.22964, 0.005);
  EXPECT_NEAR(tn.std, 0.72095, 0.005);
}

TEST(NnInit, OrthogonalAndEye) {
  manual_seed(2);
  for (auto shape :
       {std::vector<int64_t>{6, 4}, std::vector<int64_t>{3, 7}, std::vector<int64_t>{4, 2, 3}}) {
    Tensor w = init::orthogonal_(empty(shape, kFloat64), 1.5);
    Tensor m = w.reshape({shape[0], -1});
    // Rows or columns (whichever are fewer) are orthonormal, scaled by gain.
    Tensor gram = m.size(0) < m.size(1) ? m.mm(m.t()) : m.t().mm(m);
    EXPECT_TRUE(all_close(gram, eye(gram.size(0), kFloat64) * 2.25, 1e-10, 1e-10));
  }
  EXPECT_TRUE(all_close(init::eye_(empty({2, 3})), eye(2, 3)));
}

TEST(NnInit, LayerDefaultsMatchPyTorch) {
  manual_seed(3);
  // Linear: kaiming_uniform(a = sqrt(5)) gives U(-1/sqrt(in), 1/sqrt(in)); bias the same.
  Linear lin(400, 300);
  expect_uniform(lin.weight, 1.0 / std::sqrt(400.0));
  Linear wide(400, 3000);
  expect_uniform(wide.bias, 1.0 / std::sqrt(400.0));
  // Conv2d: fan_in = in / groups * k * k.
  Conv2d conv(64, 128, 3, 1, 0, 1, 2);
  expect_uniform(conv.weight, 1.0 / std::sqrt(32.0 * 9.0));
  Conv2d conv_b(16, 3000, 3);
  expect_uniform(conv_b.bias, 1.0 / std::sqrt(16.0 * 9.0));
  // ConvTranspose2d: weight (in, out / groups, k, k), fan_in from its dim 1.
  ConvTranspose2d convt(64, 128, 3);
  expect_uniform(convt.weight, 1.0 / std::sqrt(128.0 * 9.0));
  // Embedding: N(0, 1).
  Embedding emb(1000, 200);
  Stats e = stats_of(emb.weight);
  EXPECT_NEAR(e.mean, 0.0, 0.01);
  EXPECT_NEAR(e.std, 1.0, 0.01);
  // Bilinear: U(-1/sqrt(in1), 1/sqrt(in1)).
  Bilinear bil(100, 30, 40);
  expect_uniform(bil.weight, 0.1);
  // Normalization layers: ones and zeros.
  BatchNorm2d bn(5);
  EXPECT_TRUE(all_close(bn.weight, ones({5}), 0, 0));
  EXPECT_TRUE(all_close(bn.bias, zeros({5}), 0, 0));
  EXPECT_TRUE(all_close(bn.running_mean, zeros({5}), 0, 0));
  EXPECT_TRUE(all_close(bn.running_var, ones({5}), 0, 0));
  GroupNorm gn(2, 6);
  EXPECT_TRUE(all_close(gn.weight, ones({6}), 0, 0));
  RMSNorm rms(7);
  EXPECT_TRUE(all_close(rms.weight, ones({7}), 0, 0));
}

}  // namespace
}  // namespace kiln
