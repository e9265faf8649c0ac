// The reductions', scans', sorts' and views' gradients at the points where conventions matter
// (ties, zeros, the zero vector), against gradients worked out by hand (the same numbers
// PyTorch 2.x gives; each is derived in its comment).
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;

Tensor leaf(const NestedList& values) { return tensor(values, kFloat64).requires_grad_(); }
Tensor f64(const NestedList& values) { return tensor(values, kFloat64); }

TEST(ReduceDerivatives, AmaxSharesTheGradientEvenlyAmongTies) {
  Tensor x = leaf({{1.0, 3.0, 3.0}, {2.0, 0.0, 2.0}});
  // Row 0's max 3 is tied twice: each gets half of 1; row 1's max 2 twice: half of 2 each.
  x.amax({1}).backward(f64({1.0, 2.0}));
  EXPECT_TRUE(all_close(x.grad(), f64({{0.0, 0.5, 0.5}, {1.0, 0.0, 1.0}})));

  Tensor y = leaf({{1.0, -3.0}, {-3.0, 2.0}});
  // The min -3 appears twice over the whole tensor.
  y.amin({}, /*keepdim=*/true).backward(f64({{4.0}}));
  EXPECT_TRUE(all_close(y.grad(), f64({{0.0, 2.0}, {2.0, 0.0}})));
}

TEST(ReduceDerivatives, FullMaxSharesTheGradientAmongAllTies) {
  Tensor x = leaf({{1.0, 3.0, 3.0}, {2.0, 0.0, 3.0}});
  x.max().backward();  // three elements equal 3: a third each
  const double third = 1.0 / 3.0;
  EXPECT_TRUE(all_close(x.grad(), f64({{0.0, third, third}, {0.0, 0.0, third}})));

  Tensor y = leaf({4.0, -1.0, 2.0});
  (y.min() * 5.0).backward();  // a single min: all of it
  EXPECT_TRUE(all_close(y.grad(), f64({0.0, 5.0, 0.0})));
}

TEST(ReduceDerivatives, MaxDimGivesTheGradientToTheReturnedIndex) {
  Tensor x = leaf({{1.0, 3.0, 3.0}, {2.0, 0.0, 2.0}});
  auto [values, indices] = x.max(1);
  // Ties: max.dim returns the first index (1 and 0), which alone gets the gradient.
  EXPECT_EQ(indices.tolist<int64_t>(), (std::vector<int64_t>{1, 0}));
  values.backward(f64({1.0, 2.0}));
  EXPECT_TRUE(all_close(x.grad(), f64({{0.0, 1.0, 0.0}, {2.0, 0.0, 0.0}})));

  Tensor y = leaf({{5.0, 1.0}, {0.0, 7.0}});
  auto [mins, min_indices] = y.min(0, /*keepdim=*/true);
  mins.backward(f64({{3.0, 4.0}}));
  EXPECT_TRUE(all_close(y.grad(), f64({{0.0, 4.0}, {3.0, 0.0}})));
}

TEST(ReduceDerivatives, ProdIsExactWithOneZero) {
  Tensor x = leaf({2.0, 0.0, 3.0, 4.0});
  x.prod().backward();
  // d/dx_i = product of the others: only the zero's others (2*3*4) are all non-zero.
  EXPECT_TRUE(all_close(x.grad(), f64({0.0, 24.0, 0.0, 0.0})));
}

TEST(ReduceDerivatives, ProdIsZeroEverywhereWithTwoZeros) {
  Tensor x = leaf({2.0, 0.0, 3.0, 0.0});
  x.prod().backward();  // every product of three elements contains a zero
  EXPECT_TRUE(all_close(x.grad(), f64({0.0, 0.0, 0.0, 0.0})));
}

TEST(ReduceDerivatives, ProdDimHandlesRowsWithNoneOneAndTwoZeros) {
  Tensor x = leaf({{2.0, 3.0, 4.0}, {2.0, 0.0, 5.0}, {0.0, 3.0, 0.0}});
  x.prod(1).backward(f64({1.0, 2.0, 3.0}));
  // Row 0: (3*4, 2*4, 2*3); row 1: 2 * (0, 2*5, 0); row 2: all zero.
  EXPECT_TRUE(all_close(x.grad(), f64({{12.0, 8.0, 6.0}, {0.0, 20.0, 0.0}, {0.0, 0.0, 0.0}})));
}

TEST(ReduceDerivatives, CumprodIsExactWithZeros) {
  Tensor x = leaf({2.0, 3.0, 0.0, 4.0, 0.0});
  x.cumprod(0).backward(f64({1.0, 2.0, 3.0, 4.0, 5.0}));
  // d/dx_k = sum_{i >= k} g_i * prod_{j <= i, j != k} x_j:
  //   x0: 1*1 + 2*3 = 7 (later products contain x2 = 0); x1: 2*2 = 4;
  //   x2 (first zero): 3*(2*3) + 4*(2*3*4) + 5*0 = 114; x3, x4: every product contains x2 = 0.
  EXPECT_TRUE(all_close(x.grad(), f64({7.0, 4.0, 114.0, 0.0, 0.0})));
}

TEST(ReduceDerivatives, CumsumSumsTheGradientFromTheEnd) {
  Tensor x = leaf({{1.0, 2.0, 3.0}});
  x.cumsum(1).backward(f64({{1.0, 10.0, 100.0}}));
  EXPECT_TRUE(all_close(x.grad(), f64({{111.0, 110.0, 100.0}})));
}

TEST(ReduceDerivatives, TwoNormIsZeroAtTheZeroVector) {
  Tensor x = leaf({{0.0, 0.0}, {3.0, 4.0}});
  x.norm(2, {1}).backward(f64({1.0, 1.0}));
  // Row 1: x / |x| = (0.6, 0.8); row 0 is the zero vector: 0 (not NaN).
  EXPECT_TRUE(all_close(x.grad(), f64({{0.0, 0.0}, {0.6, 0.8}})));
}

TEST(ReduceDerivatives, OtherNormOrders) {
  Tensor x = leaf({3.0, -4.0, 0.0});
  x.norm(1).backward();  // sign(x), 0 at 0
  EXPECT_TRUE(all_close(x.grad(), f64({1.0, -1.0, 0.0})));

  Tensor y = leaf({3.0, -4.0, 4.0});
  y.norm(std::numeric_limits<double>::infinity())
      .backward();  // max |y| = 4 tied twice: half each, with y's sign
  EXPECT_TRUE(all_close(y.grad(), f64({0.0, -0.5, 0.5})));

  Tensor z = leaf({3.0, -4.0});
  z.norm(3).backward();
  // d/dz_i = sign(z_i) |z_i|^2 / ||z||_3^2 with ||z||_3 = 91^(1/3).
  const double n2 = std::pow(91.0, 2.0 / 3.0);
  EXPECT_TRUE(all_close(z.grad(), f64({9.0 / n2, -16.0 / n2})));

  Tensor w = leaf({3.0, -4.0});
  w.norm(0).backward();  // a count of non-zeros: gradient 0
  EXPECT_TRUE(all_close(w.grad(), f64({0.0, 0.0})));
}

TEST(ReduceDerivatives, VarStdAndVarMean) {
  Tensor x = leaf({1.0, 2.0, 6.0});  // mean 3, deviations (-2, -1, 3), sum of squares 14
  x.var().backward();                // 2 (x - mean) / (n - 1)
  EXPECT_TRUE(all_close(x.grad(), f64({-2.0, -1.0, 3.0})));

  Tensor y = leaf({1.0, 2.0, 6.0});
  y.std({}, Scalar(0)).backward();  // (x - mean) / (n std), std = sqrt(14 / 3)
  const double s = std::sqrt(14.0 / 3.0);
  EXPECT_TRUE(all_close(y.grad(), f64({-2.0 / (3 * s), -1.0 / (3 * s), 3.0 / (3 * s)})));

  Tensor c = leaf({5.0, 5.0});
  c.std().backward();  // std 0: gradient 0, not NaN
  EXPECT_TRUE(all_close(c.grad(), f64({0.0, 0.0})));

  Tensor z = leaf({1.0, 2.0, 6.0});
  auto [var, mean] = var_mean(z);
  (var + mean * 3.0).backward();  // var's gradient plus 3 / n each
  EXPECT_TRUE(all_close(z.grad(), f64({-1.0, 0.0, 4.0})));
}

TEST(ReduceDerivatives, LogsumexpIsTheSoftmax) {
  Tensor x = leaf({0.0, std::log(3.0)});
  x.logsumexp({0}).backward();
  EXPECT_TRUE(all_close(x.grad(), f64({0.25, 0.75})));
}

TEST(ReduceDerivatives, SortAndTopkScatterBackByIndex) {
  Tensor x = leaf({{3.0, 1.0, 2.0}});
  auto [sorted, order] = x.sort(1);  // values 1, 2, 3 from indices 1, 2, 0
  sorted.backward(f64({{10.0, 20.0, 30.0}}));
  EXPECT_TRUE(all_close(x.grad(), f64({{30.0, 10.0, 20.0}})));

  Tensor y = leaf({5.0, 9.0, 1.0, 7.0});
  auto [top, top_indices] = y.topk(2);  // 9 (index 1), 7 (index 3)
  top.backward(f64({1.0, 2.0}));
  EXPECT_TRUE(all_close(y.grad(), f64({0.0, 1.0, 0.0, 2.0})));
}

// The formulas are written in differentiable ops: a gradient taken with create_graph has a
// gradient itself.
TEST(ReduceDerivatives, ProdAndVarHaveSecondDerivatives) {
  for (auto [values, expected] :
       {std::pair{std::vector<double>{2.0, 3.0, 5.0}, std::vector<double>{0.0, 5.0, 3.0}},
        std::pair{std::vector<double>{2.0, 0.0, 5.0}, std::vector<double>{0.0, 5.0, 0.0}}}) {
    Tensor x = from_vector(values).requires_grad_();
    // d/dx of (d prod / d x0) = d/dx (x1 x2) = (0, x2, x1).
    Tensor g = autograd::grad({x.prod()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    g.select(0, 0).backward();
    EXPECT_TRUE(all_close(x.grad(), from_vector(expected)));
  }
  Tensor y = leaf({1.0, 2.0, 6.0});
  // d var / d y0 = 2 (y0 - mean) / (n - 1); its gradient is (delta_0j - 1/n) for n = 3.
  Tensor g = autograd::grad({y.var()}, {y}, {}, std::nullopt, /*create_graph=*/true)[0];
  g.select(0, 0).backward();
  EXPECT_TRUE(all_close(y.grad(), f64({2.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0})));
}

TEST(ShapeDerivatives, CatFlipRollRepeatTriangles) {
  Tensor a = leaf({{1.0, 2.0}});
  Tensor b = leaf({{3.0}});
  cat({a, b}, 1).backward(f64({{10.0, 20.0, 30.0}}));
  EXPECT_TRUE(all_close(a.grad(), f64({{10.0, 20.0}})));
  EXPECT_TRUE(all_close(b.grad(), f64({{30.0}})));

  Tensor x = leaf({1.0, 2.0, 3.0});
  x.flip({0}).backward(f64({1.0, 2.0, 3.0}));
  EXPECT_TRUE(all_close(x.grad(), f64({3.0, 2.0, 1.0})));

  Tensor r = leaf({1.0, 2.0, 3.0});
  r.roll({1}).backward(f64({1.0, 2.0, 3.0}));  // output i came from input i - 1
  EXPECT_TRUE(all_close(r.grad(), f64({2.0, 3.0, 1.0})));

  Tensor p = leaf({1.0, 2.0});
  p.repeat({2, 2}).backward(f64({{1.0, 2.0, 3.0, 4.0}, {5.0, 6.0, 7.0, 8.0}}));
  // Element 0 appears at columns 0 and 2 of both rows: 1 + 3 + 5 + 7.
  EXPECT_TRUE(all_close(p.grad(), f64({16.0, 20.0})));

  Tensor t = leaf({{1.0, 2.0}, {3.0, 4.0}});
  t.tril().backward(f64({{1.0, 2.0}, {3.0, 4.0}}));
  EXPECT_TRUE(all_close(t.grad(), f64({{1.0, 0.0}, {3.0, 4.0}})));
}

TEST(ViewDerivatives, ViewsScatterTheGradientIntoZeros) {
  Tensor x = leaf({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  x.diagonal(1).backward(f64({10.0, 20.0}));  // elements (0, 1) and (1, 2)
  EXPECT_TRUE(all_close(x.grad(), f64({{0.0, 10.0, 0.0}, {0.0, 0.0, 20.0}})));

  Tensor s = leaf({1.0, 2.0, 3.0, 4.0, 5.0});
  s.slice(0, 1, 5, 2).backward(f64({7.0, 8.0}));  // elements 1 and 3
  EXPECT_TRUE(all_close(s.grad(), f64({0.0, 7.0, 0.0, 8.0, 0.0})));

  Tensor u = leaf({{1.0, 2.0}, {3.0, 4.0}});
  std::vector<Tensor> rows = u.unbind(0);
  (rows[1] * 2.0).sum().backward();  // no gradient reaches row 0
  EXPECT_TRUE(all_close(u.grad(), f64({{0.0, 0.0}, {2.0, 2.0}})));

  Tensor v = leaf({1.0, 2.0, 3.0});
  std::vector<Tensor> pieces = v.split_with_sizes({1, 2});
  (pieces[0] * 5.0 + pieces[1].sum()).sum().backward();
  EXPECT_TRUE(all_close(v.grad(), f64({5.0, 1.0, 1.0})));
}

}  // namespace
}  // namespace kiln
