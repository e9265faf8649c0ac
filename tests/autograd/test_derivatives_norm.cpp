// The normalization backward ops: each fused kernel against its decomposition in kiln ops run in
// float64 (an independent formula), the layouts they keep, and gradients of the norm ops against
// values PyTorch gives.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

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

}  // namespace
}  // namespace kiln
