// The normalization backward ops: each fused kernel against its decomposition in kiln ops run in
// float64 (an independent formula), the layouts they keep, and gradients of the norm ops against
// values PyTorch gives.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

#include <cmath>

namespace kiln {
namespace {

using ops::IValue;
using ops::OpRegistry;
using ops::Stack;

// The arguments with every floating tensor in float64.
Stack in_float64(const Stack& args) {
  Stack out;
  for (const IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().is_floating_point()) {
      out.emplace_back(v.to_tensor().to(kFloat64));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

class NormBackwardKernel : public ::testing::TestWithParam<const char*> {};

TEST_P(NormBackwardKernel, MatchesDecompositionInFloat64) {
  const ops::OpDef& op = OpRegistry::instance().get(GetParam());
  ASSERT_TRUE(static_cast<bool>(op.decomposition));
  for (const ops::Sample& s : op.samples()) {
    SCOPED_TRACE(s.description);
    std::vector<Tensor> kernel = ops::call(op, s.args);
    std::vector<Tensor> reference = op.decomposition(in_float64(s.args));
    ASSERT_EQ(kernel.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(kernel[i].defined(), reference[i].defined()) << "output " << i;
      if (!kernel[i].defined()) continue;
      EXPECT_EQ(IntList(kernel[i].sizes()), IntList(reference[i].sizes())) << "output " << i;
      const bool low = kernel[i].dtype() == kBFloat16;
      EXPECT_TRUE(testing::all_close(kernel[i].to(kFloat64), reference[i], low ? 2e-2 : 1e-4,
                                     low ? 2e-2 : 1e-5))
          << "output " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, NormBackwardKernel,
                         ::testing::Values("native_layer_norm_backward",
                                           "native_batch_norm_backward",
                                           "native_group_norm_backward"));

TEST(NormBackward, ChannelsLastGradInputKeepsLayout) {
  Tensor x = randn({2, 8, 3, 3}).contiguous(MemoryFormat::ChannelsLast).requires_grad_(true);
  Tensor w = randn({8}).requires_grad_(true);
  Tensor y = batch_norm(x, w, Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  Tensor gx = autograd::grad({(y * y).sum()}, {x})[0];
  EXPECT_EQ(gx.suggest_memory_format(), MemoryFormat::ChannelsLast);
}

// y = layer_norm(x, [3], w, b); loss = sum(y * c). PyTorch 2.x, float64:
//   x = [[1, 2, 4], [-1, 0, 3]], w = [0.5, 1, 2], b = [0, 0, 1], c = [[1, 2, 3], [-1, 0.5, 2]]
//   x.grad, w.grad, b.grad after loss.backward().
TEST(NormBackward, LayerNormMatchesPyTorch) {
  auto f64 = [](std::vector<double> v, IntList shape) { return from_vector(v, shape, kFloat64); };
  Tensor x = f64({1, 2, 4, -1, 0, 3}, {2, 3}).requires_grad_(true);
  Tensor w = f64({0.5, 1, 2}, {3}).requires_grad_(true);
  Tensor b = f64({0, 0, 1}, {3}).requires_grad_(true);
  Tensor c = f64({1, 2, 3, -1, 0.5, 2}, {2, 3});
  Tensor loss = (layer_norm(x, {3}, w, b, 1e-5) * c).sum();
  std::vector<Tensor> g = autograd::grad({loss}, {x, w, b});
  EXPECT_TRUE(
      testing::all_close(g[0],
                         f64({0.11452740111915394, -0.171813436867142, 0.057286035747989406,
                              0.033939267262687756, -0.045259031807112715, 0.011319764544425182},
                             {2, 3}),
                         1e-6, 1e-8));
  EXPECT_TRUE(testing::all_close(
      g[1], f64({-0.08846255291383343, -0.730636561432442, 6.754526882840716}, {3}), 1e-6, 1e-8));
  EXPECT_TRUE(testing::all_close(g[2], f64({0, 2.5, 5}, {3}), 1e-6, 1e-8));
}

// Double backward runs through native_layer_norm_backward's decomposition: the gradient of
// sum(dL/dx * d) matches central differences of dL/dx in float64.
TEST(NormBackward, LayerNormDoubleBackwardMatchesFiniteDifferences) {
  manual_seed(3);
  Tensor x = randn({3, 6}, kFloat64).requires_grad_(true);
  Tensor w = randn({6}, kFloat64), c = randn({3, 6}, kFloat64), d = randn({3, 6}, kFloat64);
  auto first = [&](const Tensor& in, bool create) {
    Tensor loss = (layer_norm(in, {6}, w, Tensor(), 1e-5) * c).sum();
    return autograd::grad({loss}, {in}, {}, std::nullopt, create)[0];
  };
  Tensor g = first(x, true);
  Tensor second = autograd::grad({(g * d).sum()}, {x})[0];
  const std::vector<double> analytic = second.tolist<double>();
  for (int64_t j : {0, 4, 9, 17}) {
    auto at = [&](double delta) {
      Tensor xp = x.detach().clone();
      xp.data_ptr<double>()[j] += delta;
      xp.requires_grad_(true);
      return (first(xp, false) * d).sum().item<double>();
    };
    const double numeric = (at(1e-6) - at(-1e-6)) / 2e-6;
    EXPECT_NEAR(analytic[j], numeric, 1e-5 + 1e-4 * std::abs(numeric)) << "element " << j;
  }
}

// The fused op cannot replay its dropout mask in backward; scaled_dot_product_attention takes
// its math path when dropout meets inputs that require grad, and differentiates.
TEST(AttentionBackward, DropoutGoesThroughTheMathPath) {
  manual_seed(5);
  Tensor q = randn({2, 3, 4, 8}).requires_grad_(true);
  Tensor k = randn({2, 3, 5, 8}).requires_grad_(true);
  Tensor v = randn({2, 3, 5, 8}).requires_grad_(true);
  Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.5);
  std::vector<Tensor> g = autograd::grad({out.sum()}, {q, k, v});
  EXPECT_EQ(IntList(g[2].sizes()), IntList(v.sizes()));
  // Each value row gets the dropped-and-rescaled weights' column sums: at most 2x softmax's.
  EXPECT_TRUE(isfinite(g[0]).all().item<bool>());
  EXPECT_LE(g[2].sum().item<double>(), 2.0 * 2 * 3 * 4 * 8 + 1e-3);

  Tensor qf = q.detach().requires_grad_(true);
  auto flash = _scaled_dot_product_flash_attention_for_cpu(qf, k.detach(), v.detach(), 0.5);
  EXPECT_THROW(autograd::grad({std::get<0>(flash).sum()}, {qf}), Error);
}

}  // namespace
}  // namespace kiln
