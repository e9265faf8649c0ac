// Split reductions (reduction_splitting.h): reductions with few outputs over long loops compiled
// in two kernels (partials over chunks, then their reduction) give eager's results, forward and
// backward, for sums, products, maxima and minima, integer and 16-bit types, row-major and
// channels-last inputs; what is split is said on the fusion channel, and options decide.
#include "capture/capture_test_util.h"
#include "inductor/lowering.h"
#include "inductor/reduction_splitting.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;

CompileOptions splitting(const std::string& on = "true") {
  return {.backend = std::string("inductor"), .options = {{"split_reductions", on}}};
}

// The number of reductions the compilations of `f` split (from the fusion channel).
template <typename F>
size_t splits_of(F&& run) {
  LogCapture logs("fusion");
  run();
  size_t total = 0;
  for (const std::string& line : logs.records) {
    const size_t at = line.find(" long reductions with few outputs split in two");
    if (at == std::string::npos) continue;
    const size_t start = line.rfind(' ', at - 1) + 1;
    total += std::stoul(line.substr(start, at - start));
  }
  return total;
}

TEST(InductorReductionSplitting, SumsMaximaAndProductsMatchEager) {
  manual_seed(3);
  const Tensor x = randn({16, 8, 32, 32});
  const Tensor near_one = 1.0 + randn({4096}) * 1e-3;
  auto f = [](const Tensor& x, const Tensor& p) {
    return std::make_tuple(x.sum({0, 2, 3}), x.amax({0, 2, 3}), x.amin({0, 2, 3}), x.sum(),
                           x.square().mean({0, 2, 3}), p.prod());
  };
  auto compiled = compile(f, splitting());
  std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> got;
  // Per channel 8 outputs of 16384 (16 chunks), the total 1 of 131072, the product 1 of 4096.
  EXPECT_EQ(splits_of([&] { got = compiled(x, near_one); }), 6u);
  const auto want = f(x.to(kFloat64), near_one.to(kFloat64));
  EXPECT_TRUE(all_close(std::get<0>(got).to(kFloat64), std::get<0>(want), 1e-5, 1e-4));
  EXPECT_TRUE(all_close(std::get<1>(got).to(kFloat64), std::get<1>(want), 0, 0));
  EXPECT_TRUE(all_close(std::get<2>(got).to(kFloat64), std::get<2>(want), 0, 0));
  EXPECT_TRUE(all_close(std::get<3>(got).to(kFloat64), std::get<3>(want), 1e-5, 1e-3));
  EXPECT_TRUE(all_close(std::get<4>(got).to(kFloat64), std::get<4>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<5>(got).to(kFloat64), std::get<5>(want), 1e-5, 1e-6));
}

TEST(InductorReductionSplitting, IntegersAndHalfTypesMatchEager) {
  manual_seed(4);
  const Tensor counts = randint(-1000, 1000, {32, 4, 512}, DType::Int64);
  const Tensor flags = randn({32, 4, 512}) > 0.5;
  const Tensor half = randn({32, 4, 512}).to(DType::BFloat16);
  auto f = [](const Tensor& c, const Tensor& b, const Tensor& h) {
    return std::make_tuple(c.sum({0, 2}), b.any(), h.sum({0, 2}), h.amax({0, 2}));
  };
  auto compiled = compile(f, splitting());
  std::tuple<Tensor, Tensor, Tensor, Tensor> got;
  EXPECT_GE(splits_of([&] { got = compiled(counts, flags, half); }), 3u);
  const auto want = f(counts, flags, half);
  EXPECT_TRUE(all_close(std::get<0>(got).to(kFloat64), std::get<0>(want).to(kFloat64), 0,
                        0));  // exact: int64 partials
  EXPECT_TRUE(all_close(std::get<1>(got).to(kFloat64), std::get<1>(want).to(kFloat64), 0, 0));
  // The bfloat16 sum rounds once, from float64 partials: as eager's (float accumulation) within
  // one bfloat16 step.
  EXPECT_TRUE(all_close(std::get<2>(got).to(kFloat32), std::get<2>(want).to(kFloat32), 1e-2, 1e-2));
  EXPECT_TRUE(all_close(std::get<3>(got).to(kFloat64), std::get<3>(want).to(kFloat64), 0, 0));
}

// Batch norm's statistics and its gradients' sums per channel, on row-major and channels-last
// activations, split (the pass's reason to be) and compiled against eager, forward and backward.
TEST(InductorReductionSplitting, BatchNormTrainingMatchesEager) {
  for (const MemoryFormat format : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
    SCOPED_TRACE(format == MemoryFormat::Contiguous ? "row-major" : "channels-last");
    manual_seed(5);
    const Tensor x0 = randn({16, 8, 24, 24}).contiguous(format);
    const Tensor w0 = randn({8}), b0 = randn({8});
    auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
      auto [y, mean, invstd] =
          native_batch_norm(x, w, b, Tensor(), Tensor(), /*training=*/true, 0.1, 1e-5);
      return (y.relu() * y).mean();
    };
    auto run = [&](auto&& g) {
      const Tensor x = x0.detach().requires_grad_(true), w = w0.detach().requires_grad_(true),
                   b = b0.detach().requires_grad_(true);
      const Tensor loss = g(x, w, b);
      loss.backward();
      return std::vector<Tensor>{loss, x.grad(), w.grad(), b.grad()};
    };
    auto compiled = compile(f, splitting());
    std::vector<Tensor> got;
    EXPECT_GE(splits_of([&] { got = run(compiled); }), 4u);
    const std::vector<Tensor> want = run(f);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(all_close(got[i], want[i], 1e-4, 1e-5)) << i;
    }
    EXPECT_TRUE(got[1].is_contiguous(format));
  }
}

TEST(InductorReductionSplitting, OptionsDecideAndShortOrManyOutputsStayWhole) {
  const Tensor x = randn({16, 8, 32, 32});
  auto per_channel = [](const Tensor& x) { return x.sum({0, 2, 3}); };
  EXPECT_EQ(splits_of([&] { compile(per_channel, splitting("false"))(x); }), 0u);
  // The CPU's default: whole.
  EXPECT_EQ(splits_of([&] {
              compile(per_channel, CompileOptions{.backend = std::string("inductor")})(x);
            }),
            0u);
  EXPECT_TRUE(inductor::splits_reductions({}, Device::cuda()));
  EXPECT_FALSE(inductor::splits_reductions({}, Device::cpu()));
  // Rows of 1024 (too short) and 4096 outputs (enough blocks already).
  auto rows = [](const Tensor& x) { return x.sum(-1); };
  EXPECT_EQ(splits_of([&] { compile(rows, splitting())(x); }), 0u);
}

}  // namespace
}  // namespace kiln
