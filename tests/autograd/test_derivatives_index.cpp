// Derivatives of the indexing and resampling ops against hand-computed gradients: duplicate
// indices accumulate, overwritten positions get no gradient, embedding's padding_idx and
// scale_grad_by_freq, the edges of reflect/replicate pads, ties of scatter_reduce's amax.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;

Tensor f64(const NestedList& data) { return tensor(data, kFloat64); }
Tensor longs(const NestedList& data) { return tensor(data, kInt64); }
Tensor leaf(const NestedList& data) { return f64(data).requires_grad_(); }

// d sum(out * weights) / d input.
Tensor grad_of(const Tensor& out, const Tensor& input, const Tensor& weights) {
  return autograd::grad({(out * weights).sum()}, {input})[0];
}

TEST(DerivativesIndex, GatherDuplicateIndicesAccumulate) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x.gather(0, longs({0, 2, 0, 0}));
  // x0 is read by outputs 0, 2, 3 (weights 1 + 3 + 4), x2 by output 1.
  EXPECT_TRUE(all_close(grad_of(y, x, f64({1.0, 2.0, 3.0, 4.0})), f64({8.0, 0.0, 2.0})));
}

TEST(DerivativesIndex, AdvancedIndexDuplicatesAccumulate) {
  Tensor x = leaf({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  // x[[1, 1, 2], [0, 0, 1]]: x10 twice, x21 once.
  Tensor y = x.index({longs({1, 1, 2}), longs({0, 0, 1})});
  EXPECT_TRUE(
      all_close(grad_of(y, x, f64({1.0, 2.0, 3.0})), f64({{0.0, 0.0}, {3.0, 0.0}, {0.0, 3.0}})));
  // A boolean mask over rows picks rows 0 and 2.
  Tensor z = x.index({tensor({true, false, true})});
  EXPECT_TRUE(all_close(grad_of(z, x, f64({{1.0, 2.0}, {3.0, 4.0}})),
                        f64({{1.0, 2.0}, {0.0, 0.0}, {3.0, 4.0}})));
}

TEST(DerivativesIndex, IndexSelectDuplicateRowsAccumulate) {
  Tensor x = leaf({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor y = x.index_select(0, longs({2, 0, 2}));
  Tensor w = f64({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  EXPECT_TRUE(all_close(grad_of(y, x, w), f64({{3.0, 4.0}, {0.0, 0.0}, {6.0, 8.0}})));
}

TEST(DerivativesIndex, IndexPutZeroesOverwrittenPositionsUnlessAccumulating) {
  Tensor self = leaf({1.0, 2.0, 3.0, 4.0});
  Tensor values = leaf({10.0, 20.0, 30.0});
  Tensor w = f64({1.0, 2.0, 3.0, 4.0});
  const std::vector<Tensor> where_to = {longs({3, 1, 3})};
  {
    Tensor y = self.index_put(where_to, values, false);
    std::vector<Tensor> g = autograd::grad({(y * w).sum()}, {self, values});
    EXPECT_TRUE(all_close(g[0], f64({1.0, 0.0, 3.0, 0.0})));
    // Each value's gradient is the weight at its destination.
    EXPECT_TRUE(all_close(g[1], f64({4.0, 2.0, 4.0})));
  }
  {
    Tensor y = self.index_put(where_to, values, true);
    std::vector<Tensor> g = autograd::grad({(y * w).sum()}, {self, values});
    EXPECT_TRUE(all_close(g[0], w));
    EXPECT_TRUE(all_close(g[1], f64({4.0, 2.0, 4.0})));
  }
}

TEST(DerivativesIndex, ScatterSrcOverwritesSelf) {
  Tensor self = leaf({1.0, 2.0, 3.0});
  Tensor src = leaf({7.0, 8.0, 9.0});
  // Only src's first two elements are read (the index is shorter).
  Tensor y = self.scatter(0, longs({2, 0}), src);
  std::vector<Tensor> g = autograd::grad({(y * f64({1.0, 2.0, 3.0})).sum()}, {self, src});
  EXPECT_TRUE(all_close(g[0], f64({0.0, 2.0, 0.0})));
  EXPECT_TRUE(all_close(g[1], f64({3.0, 1.0, 0.0})));
}

TEST(DerivativesIndex, ScatterReduceAmaxSplitsTiesEvenly) {
  Tensor self = leaf({2.0, 0.0});
  Tensor src = leaf({2.0, 1.0, 3.0});
  // out0 = max(self0, src0, src1) = 2, tied between self0 and src0; out1 = max(self1, src2).
  Tensor y = self.scatter_reduce(0, longs({0, 0, 1}), src, "amax", true);
  EXPECT_TRUE(all_close(y.detach(), f64({2.0, 3.0})));
  std::vector<Tensor> g = autograd::grad({(y * f64({4.0, 10.0})).sum()}, {self, src});
  EXPECT_TRUE(all_close(g[0], f64({2.0, 0.0})));
  EXPECT_TRUE(all_close(g[1], f64({2.0, 0.0, 10.0})));
}

TEST(DerivativesIndex, ScatterReduceProdWithAZeroFactor) {
  Tensor self = leaf({2.0, 5.0});
  Tensor src = leaf({0.0, 3.0, 4.0});
  // out0 = self0 * src0 * src1 = 0; out1 = self1 * src2 = 20.
  Tensor y = self.scatter_reduce(0, longs({0, 0, 1}), src, "prod", true);
  std::vector<Tensor> g = autograd::grad({y.sum()}, {self, src});
  // d out0 / d self0 = src0 src1 = 0; d out0 / d src0 = self0 src1 = 6; d / d src1 = 0.
  EXPECT_TRUE(all_close(g[0], f64({0.0, 4.0})));
  EXPECT_TRUE(all_close(g[1], f64({6.0, 0.0, 5.0})));
}

TEST(DerivativesIndex, EmbeddingPaddingIdxGetsNoGradient) {
  Tensor weight = leaf({{1.0, 1.0}, {2.0, 2.0}, {3.0, 3.0}, {4.0, 4.0}});
  Tensor y = embedding(weight, longs({{0, 2}, {2, 3}}), /*padding_idx=*/2);
  Tensor w = f64({{{1.0, 2.0}, {3.0, 4.0}}, {{5.0, 6.0}, {7.0, 8.0}}});
  EXPECT_TRUE(
      all_close(grad_of(y, weight, w), f64({{1.0, 2.0}, {0.0, 0.0}, {0.0, 0.0}, {7.0, 8.0}})));
}

TEST(DerivativesIndex, EmbeddingScaleGradByFrequency) {
  Tensor weight = leaf({{1.0, 1.0}, {2.0, 2.0}, {3.0, 3.0}, {4.0, 4.0}});
  Tensor y = embedding(weight, longs({1, 1, 3}), -1, /*scale_grad_by_freq=*/true);
  Tensor w = f64({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  // Row 1 is read twice: its summed gradient is divided by 2.
  EXPECT_TRUE(
      all_close(grad_of(y, weight, w), f64({{0.0, 0.0}, {2.0, 3.0}, {0.0, 0.0}, {5.0, 6.0}})));
}

const ops::OpDef& embedding_backward_op() {
  return ops::OpRegistry::instance().get("embedding_dense_backward");
}

TEST(DerivativesIndex, EmbeddingDenseBackwardKernel) {
  Tensor g = tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}, {7.0, 8.0}}, kFloat32);
  Tensor idx = longs({1, 0, 1, 3});
  Tensor plain = ops::call1(embedding_backward_op(), {g, idx, SymInt(5), SymInt(-1), false});
  EXPECT_TRUE(all_close(
      plain, tensor({{3.0, 4.0}, {6.0, 8.0}, {0.0, 0.0}, {7.0, 8.0}, {0.0, 0.0}}, kFloat32)));
  Tensor padded_scaled = ops::call1(embedding_backward_op(), {g, idx, SymInt(5), SymInt(3), true});
  EXPECT_TRUE(
      all_close(padded_scaled,
                tensor({{3.0, 4.0}, {3.0, 4.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}, kFloat32)));
}

// A vocabulary larger than a parallel chunk with many repeats: every row sums its reads.
TEST(DerivativesIndex, EmbeddingDenseBackwardManyRows) {
  const int64_t vocab = 3000, dim = 16, n = 4000;
  Tensor idx = arange(n, TensorOptions(kInt64)) * 7 % vocab;  // rows 0..vocab-1, some twice
  Tensor g = ones({n, dim}, kFloat32);
  Tensor out = ops::call1(embedding_backward_op(), {g, idx, SymInt(vocab), SymInt(-1), false});
  // Row r is read once per i < n with 7 i = r (mod 3000); 7 is invertible mod 3000, so rows
  // hit by i in [3000, 4000) are read twice.
  std::vector<float> expected(static_cast<size_t>(vocab), 0.0f);
  for (int64_t i = 0; i < n; ++i) expected[static_cast<size_t>(i * 7 % vocab)] += 1.0f;
  EXPECT_TRUE(all_close(out.select(1, dim - 1), from_vector(expected)));
  EXPECT_TRUE(all_close(out.select(1, 0), from_vector(expected)));
}

TEST(DerivativesIndex, EmbeddingDoubleBackwardThroughDecomposition) {
  Tensor weight = leaf({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor idx = longs({2, 0, 2});
  Tensor v = f64({{1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}}).requires_grad_();
  Tensor y = embedding(weight, idx);
  Tensor gw = autograd::grad({y}, {weight}, {v}, std::nullopt, /*create_graph=*/true)[0];
  // gw[r] = sum of v[i] with idx[i] = r; d sum(gw * u) / d v[i] = u[idx[i]].
  Tensor u = f64({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor gv = autograd::grad({(gw * u).sum()}, {v})[0];
  EXPECT_TRUE(all_close(gv, f64({{5.0, 6.0}, {1.0, 2.0}, {5.0, 6.0}})));
}

TEST(DerivativesIndex, EmbeddingBagSumWithPerSampleWeights) {
  Tensor weight = leaf({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor psw = leaf({0.5, 2.0, 3.0});
  // bag 0 = 0.5 W0 + 2 W2; bag 1 = 3 W0.
  Tensor y = embedding_bag(weight, longs({0, 2, 0}), longs({0, 2}), 0, psw);
  Tensor w = f64({{1.0, 2.0}, {3.0, 4.0}});
  std::vector<Tensor> g = autograd::grad({(y * w).sum()}, {weight, psw});
  EXPECT_TRUE(all_close(g[0], f64({{9.5, 13.0}, {0.0, 0.0}, {2.0, 4.0}})));
  // d / d psw_i = <bag weight, W[idx_i]>: <(1,2), W0>, <(1,2), W2>, <(3,4), W0>.
  EXPECT_TRUE(all_close(g[1], f64({5.0, 17.0, 11.0})));
}

TEST(DerivativesIndex, EmbeddingBagMeanAndMax) {
  Tensor weight = leaf({{1.0, 8.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor idx = longs({0, 1, 2, 1});
  Tensor off = longs({0, 3, 3});  // bags {0, 1, 2}, {}, {1}
  Tensor w = f64({{3.0, 6.0}, {100.0, 100.0}, {1.0, 2.0}});
  Tensor mean = embedding_bag(weight, idx, off, 1);
  EXPECT_TRUE(all_close(grad_of(mean, weight, w), f64({{1.0, 2.0}, {2.0, 4.0}, {1.0, 2.0}})));
  // Max of bag 0 is W2 in column 0 and W0 in column 1; bag 2 is W1; the empty bag gives none.
  Tensor max = embedding_bag(weight, idx, off, 2);
  EXPECT_TRUE(all_close(grad_of(max, weight, w), f64({{0.0, 6.0}, {1.0, 2.0}, {3.0, 0.0}})));
}

TEST(DerivativesIndex, MaskedSelectWithBroadcastMask) {
  Tensor x = leaf({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor y = x.masked_select(tensor({true, false, true}));
  EXPECT_TRUE(
      all_close(grad_of(y, x, f64({1.0, 2.0, 3.0, 4.0})), f64({{1.0, 0.0, 2.0}, {3.0, 0.0, 4.0}})));
}

TEST(DerivativesIndex, ReflectionPadEdgesReceiveTheirReflections) {
  Tensor x = leaf({{{1.0, 2.0, 3.0}}});
  // Padding (2, 1) reads x2, x1, x0, x1, x2, x1.
  Tensor y = reflection_pad1d(x, {2, 1});
  EXPECT_TRUE(all_close(y.detach(), f64({{{3.0, 2.0, 1.0, 2.0, 3.0, 2.0}}})));
  EXPECT_TRUE(
      all_close(grad_of(y, x, f64({{{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}}})), f64({{{3.0, 12.0, 6.0}}})));
}

TEST(DerivativesIndex, ReflectionPad2dMatchesTorch) {
  Tensor x = arange(1.0, 13.0, 1.0, TensorOptions(kFloat64)).reshape({1, 1, 3, 4});
  x.requires_grad_();
  Tensor y = reflection_pad2d(x, {2, 1, 1, 2});
  Tensor w = arange(1.0, 1.0 + static_cast<double>(y.numel()), 1.0, TensorOptions(kFloat64))
                 .reshape(y.sizes());
  // x.grad after (F.pad(x, (2, 1, 1, 2), mode='reflect') * w).sum().backward() in PyTorch 2.x.
  EXPECT_TRUE(all_close(
      grad_of(y, x, w),
      f64({{{{48.0, 96.0, 152.0, 54.0}, {51.0, 102.0, 165.0, 60.0}, {24.0, 48.0, 76.0, 27.0}}}})));
}

TEST(DerivativesIndex, ReplicationAndCircularPadEdges) {
  Tensor x = leaf({{{1.0, 2.0, 3.0}}});
  Tensor w = f64({{{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}}});
  // Replicate (2, 1) reads x0, x0, x0, x1, x2, x2.
  EXPECT_TRUE(all_close(grad_of(replication_pad1d(x, {2, 1}), x, w), f64({{{6.0, 4.0, 11.0}}})));
  // Circular (2, 1) reads x1, x2, x0, x1, x2, x0.
  EXPECT_TRUE(all_close(grad_of(pad_circular(x, {2, 1}), x, w), f64({{{9.0, 5.0, 7.0}}})));
  // Constant padding drops the pad's gradient; a negative pad's cropped element gets zero.
  EXPECT_TRUE(all_close(grad_of(constant_pad_nd(x, {1, -1}), x, f64({{{1.0, 2.0, 3.0}}})),
                        f64({{{2.0, 3.0, 0.0}}})));
}

TEST(DerivativesIndex, UpsampleNearestAndLinear) {
  Tensor x = leaf({{{1.0, 2.0}}});
  // Nearest 2x reads x0, x0, x1, x1.
  EXPECT_TRUE(all_close(grad_of(upsample_nearest1d(x, {4}), x, f64({{{1.0, 2.0, 3.0, 4.0}}})),
                        f64({{{3.0, 7.0}}})));
  // Linear with aligned corners to 3: x0, (x0 + x1) / 2, x1.
  EXPECT_TRUE(all_close(grad_of(upsample_linear1d(x, {3}, true), x, f64({{{1.0, 2.0, 3.0}}})),
                        f64({{{2.0, 4.0}}})));
  Tensor x2 = leaf({{{{1.0, 2.0}, {3.0, 4.0}}}});
  Tensor w = arange(1.0, 10.0, 1.0, TensorOptions(kFloat64)).reshape({1, 1, 3, 3});
  // x.grad after (F.interpolate(x, size=(3, 3), mode='bilinear') * w).sum().backward() in
  // PyTorch 2.x.
  EXPECT_TRUE(all_close(grad_of(upsample_bilinear2d(x2, {3, 3}, false), x2, w),
                        f64({{{{5.25, 8.25}, {14.25, 17.25}}}})));
}

TEST(DerivativesIndex, PixelShuffleGradientIsTheInversePermutation) {
  Tensor x = arange(0.0, 8.0, 1.0, TensorOptions(kFloat64)).reshape({1, 4, 1, 2});
  x.requires_grad_();
  Tensor y = pixel_shuffle(x, 2);  // (1, 1, 2, 4)
  // With the output itself (detached) as weights, each input's gradient is its own value.
  EXPECT_TRUE(all_close(grad_of(y, x, y.detach()), x.detach()));
}

}  // namespace
}  // namespace kiln
