// The backward ops behind the indexing/resample derivatives (embedding_dense_backward, the
// upsample and pad backward ops): their fast kernels against their decompositions (the
// index_put(accumulate) formulas autograd differentiates) on inputs large enough to cross the
// parallel chunking, and double backward through the decompositions against hand values.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

namespace kiln {
namespace {

using ops::IValue;
using ops::Stack;
using testing::all_close;

// The kernel's result (a plain call) and the decomposition's, which must agree.
void expect_kernel_matches_decomposition(const char* name, const Stack& args) {
  SCOPED_TRACE(name);
  const ops::OpDef& op = ops::OpRegistry::instance().get(name);
  ASSERT_TRUE(op.decomposition);
  const Tensor kernel = ops::call1(op, args);
  const Tensor reference = op.decomposition(args)[0];
  EXPECT_TRUE(all_close(kernel, reference, 1e-5, 1e-5));
}

std::vector<SymInt> sym(std::vector<int64_t> v) { return to_sym(v); }

TEST(DerivativesIndexKernels, UpsampleBackwardKernelsMatchDecompositions) {
  manual_seed(3);
  const Tensor g2 = randn({2, 3, 17, 23}, kFloat32);
  const IValue none;
  for (bool align : {false, true}) {
    expect_kernel_matches_decomposition("upsample_bilinear2d_backward",
                                        {g2, sym({17, 23}), sym({2, 3, 9, 12}), align, none, none});
  }
  expect_kernel_matches_decomposition("upsample_bilinear2d_backward",
                                      {g2.contiguous(MemoryFormat::ChannelsLast), sym({17, 23}),
                                       sym({2, 3, 40, 30}), false, 0.4, 0.8});
  expect_kernel_matches_decomposition("upsample_nearest2d_backward",
                                      {g2, sym({17, 23}), sym({2, 3, 7, 6}), 2.9, none});
  expect_kernel_matches_decomposition("_upsample_nearest_exact2d_backward",
                                      {g2, sym({17, 23}), sym({2, 3, 30, 6}), none, none});
  const Tensor g1 = randn({4, 5, 31}, kFloat64);
  expect_kernel_matches_decomposition("upsample_linear1d_backward",
                                      {g1, sym({31}), sym({4, 5, 12}), true, none});
  expect_kernel_matches_decomposition("_upsample_nearest_exact1d_backward",
                                      {g1, sym({31}), sym({4, 5, 40}), none});
}

TEST(DerivativesIndexKernels, PadBackwardKernelsMatchDecompositions) {
  manual_seed(4);
  const Tensor self3 = zeros({2, 3, 4, 5, 6});
  expect_kernel_matches_decomposition("reflection_pad3d_backward",
                                      {randn({2, 3, 8, 6, 9}), self3, sym({2, 1, 0, 1, 3, 1})});
  // A transposed (non-contiguous) gradient, and a crop.
  const Tensor g = randn({2, 3, 9, 9}).transpose(2, 3);
  expect_kernel_matches_decomposition("replication_pad2d_backward",
                                      {g, zeros({2, 3, 5, 8}), sym({-1, 2, 3, 1})});
  expect_kernel_matches_decomposition("reflection_pad1d_backward",
                                      {randn({64, 20}, kFloat64), zeros({64, 15}), sym({3, 2})});
}

TEST(DerivativesIndexKernels, EmbeddingDenseBackwardKernelMatchesDecomposition) {
  manual_seed(5);
  const Tensor idx = randint(0, 50, {12, 25}, TensorOptions(kInt64));
  const Tensor g = randn({12, 25, 8});
  expect_kernel_matches_decomposition("embedding_dense_backward",
                                      {g, idx, SymInt(50), SymInt(7), true});
  expect_kernel_matches_decomposition("embedding_dense_backward",
                                      {g, idx.to(kInt32), SymInt(50), SymInt(-1), false});
}

// d/dv <backward(v), u> = forward(u): the gradient of the backward op's output with respect to
// its incoming gradient is the forward op applied to the weights.
Tensor double_backward(const Tensor& x, const std::function<Tensor(const Tensor&)>& forward,
                       const Tensor& u) {
  Tensor y = forward(x);
  Tensor v = ones(y.sizes(), kFloat64).requires_grad_();
  Tensor gx = autograd::grad({y}, {x}, {v}, std::nullopt, /*create_graph=*/true)[0];
  return autograd::grad({(gx * u).sum()}, {v})[0];
}

TEST(DerivativesIndexKernels, DoubleBackwardThroughPadAndUpsample) {
  Tensor x = tensor({{{1.0, 2.0, 3.0}}}, kFloat64).requires_grad_();
  Tensor u = tensor({{{1.0, 2.0, 3.0}}}, kFloat64);
  // reflection_pad1d (2, 1) reads positions 2, 1, 0, 1, 2, 1.
  EXPECT_TRUE(all_close(double_backward(
                            x,
                            [](const Tensor& t) {
                              return reflection_pad1d(t, {2, 1});
                            },
                            u),
                        tensor({{{3.0, 2.0, 1.0, 2.0, 3.0, 2.0}}}, kFloat64)));
  Tensor x2 = tensor({{{1.0, 5.0}}}, kFloat64).requires_grad_();
  Tensor u2 = tensor({{{2.0, 4.0}}}, kFloat64);
  // Linear with aligned corners to 3 blends (u0, (u0 + u1) / 2, u1).
  EXPECT_TRUE(
      all_close(double_backward(
                    x2, [](const Tensor& t) { return upsample_linear1d(t, {3}, true); }, u2),
                tensor({{{2.0, 3.0, 4.0}}}, kFloat64)));
}

}  // namespace
}  // namespace kiln
