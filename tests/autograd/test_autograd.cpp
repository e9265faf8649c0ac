// The backward engine and the autograd API against hand-computed gradients.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

Tensor leaf(std::initializer_list<double> values) {
  return from_vector(std::vector<double>(values)).requires_grad_();
}

TEST(Autograd, ProductRuleAccumulatesIntoLeaves) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = (x * x).sum();  // dy/dx = 2x
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({2.0, 4.0, 6.0}, kFloat64)));
  // A second graph accumulates into the same .grad.
  (x * 3).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({5.0, 7.0, 9.0}, kFloat64)));
}

TEST(Autograd, BroadcastGradientsSumBackToInputShapes) {
  Tensor a = tensor({{1.0}, {2.0}}, kFloat64).requires_grad_();        // (2, 1)
  Tensor b = tensor({{10.0, 20.0, 30.0}}, kFloat64).requires_grad_();  // (1, 3)
  (a * b + a).sum().backward();
  // d/da = sum_j b_j + 3 per row; d/db = sum_i a_i per column.
  EXPECT_TRUE(all_close(a.grad(), tensor({{63.0}, {63.0}}, kFloat64)));
  EXPECT_TRUE(all_close(b.grad(), tensor({{3.0, 3.0, 3.0}}, kFloat64)));
}

TEST(Autograd, ScalarOperandsAndDivision) {
  Tensor x = leaf({2.0, 4.0});
  Tensor y = leaf({1.0, 8.0});
  (x / y - x * 2.0 + 1.0).sum().backward();
  // d/dx = 1/y - 2; d/dy = -x/y^2.
  EXPECT_TRUE(all_close(x.grad(), tensor({-1.0, -1.875}, kFloat64)));
  EXPECT_TRUE(all_close(y.grad(), tensor({-2.0, -0.0625}, kFloat64)));
}

TEST(Autograd, MatrixProduct) {
  Tensor a = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, kFloat64).requires_grad_();
  Tensor b = tensor({{1.0, 0.0}, {0.0, 1.0}, {2.0, 3.0}}, kFloat64).requires_grad_();
  a.mm(b).sum().backward();
  // d sum(AB) / dA = 1 B^T: each row is B's row sums; d/dB = A^T 1: each column is A's column sums.
  EXPECT_TRUE(all_close(a.grad(), tensor({{1.0, 1.0, 5.0}, {1.0, 1.0, 5.0}}, kFloat64)));
  EXPECT_TRUE(all_close(b.grad(), tensor({{5.0, 5.0}, {7.0, 7.0}, {9.0, 9.0}}, kFloat64)));
}

TEST(Autograd, ReductionsAndViews) {
  Tensor x = arange(6, kFloat64).reshape({2, 3}).requires_grad_();
  Tensor y = x.mean({1}).sum() + x.t().select(0, 2).sum() * 10.0 +
             x.unsqueeze(0).permute({2, 0, 1}).reshape({6}).sum(std::nullopt);
  y.backward();
  // mean over 3 -> 1/3 each; column 2 of x -> 10; the view sum -> 1.
  const double m = 1.0 / 3.0 + 1.0;
  EXPECT_TRUE(all_close(x.grad(), tensor({{m, m, m + 10}, {m, m, m + 10}}, kFloat64)));
  Tensor z = x.expand({4, 2, 3}).sum({0}, /*keepdim=*/true).squeeze(0).sum();
  Tensor gz = autograd::grad({z}, {x})[0];
  EXPECT_TRUE(all_close(gz, full({2, 3}, 4.0, kFloat64)));
}

TEST(Autograd, GradReturnsWithoutAccumulating) {
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  Tensor y = (x * w).sum();
  std::vector<Tensor> g = autograd::grad({y}, {x}, {}, /*retain_graph=*/true);
  EXPECT_TRUE(all_close(g[0], tensor({3.0, 4.0}, kFloat64)));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  Tensor unused = leaf({1.0});
  EXPECT_TRUE(throws_error([&] { autograd::grad({y}, {unused}, {}, true); },
                           {"appears to not have been used", "allow_unused"}));
  EXPECT_FALSE(autograd::grad({y}, {unused}, {}, true, false, /*allow_unused=*/true)[0].defined());
}

TEST(Autograd, SecondOrderWithCreateGraph) {
  Tensor x = leaf({2.0, -1.0});
  Tensor y = (x * x * x).sum();  // dy/dx = 3x^2, d2y/dx2 = 6x
  Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(all_close(g, tensor({12.0, 3.0}, kFloat64)));
  EXPECT_TRUE(g.requires_grad());
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(all_close(gg, tensor({12.0, -6.0}, kFloat64)));
  // backward(create_graph) leaves a differentiable .grad.
  Tensor z = (x.exp()).sum();
  z.backward(Tensor(), std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(x.grad().requires_grad());
  // As in PyTorch, such a .grad and its leaf reference each other through the graph; resetting
  // .grad after use breaks the cycle.
  x.mutable_grad() = Tensor();
}

TEST(Autograd, RetainGraphAndReleasedGraph) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x.exp().sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({2 * std::exp(1.0), 2 * std::exp(2.0)}, kFloat64)));
  EXPECT_TRUE(throws_error([&] { y.backward(); }, {"backward through the graph a second time"}));
}

TEST(Autograd, GradModeGuards) {
  Tensor x = leaf({1.0});
  {
    autograd::NoGradGuard no_grad;
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    {
      autograd::EnableGradGuard enable;
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_FALSE(autograd::GradMode::is_enabled());
  }
  EXPECT_TRUE(autograd::GradMode::is_enabled());
  {
    autograd::InferenceMode inference;
    EXPECT_TRUE(autograd::InferenceMode::is_enabled());
    EXPECT_FALSE((x * 2).requires_grad());
  }
  EXPECT_FALSE(autograd::InferenceMode::is_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
  // Grad mode is per thread.
  bool other_thread_enabled = false;
  {
    autograd::NoGradGuard no_grad;
    std::thread t([&] { other_thread_enabled = autograd::GradMode::is_enabled(); });
    t.join();
  }
  EXPECT_TRUE(other_thread_enabled);
}

TEST(Autograd, HooksAndRetainGrad) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3;
  y.retain_grad();
  const size_t doubling = x.register_hook([](const Tensor& g) { return g * 2; });
  y.register_hook([](const Tensor& g) { return g + 1; });
  y.sum().backward();
  // y's gradient 1 becomes 2 (its hook, which retain_grad's record follows), times 3, doubled.
  EXPECT_TRUE(all_close(y.grad(), tensor({2.0, 2.0}, kFloat64)));
  EXPECT_TRUE(all_close(x.grad(), tensor({12.0, 12.0}, kFloat64)));
  x.remove_hook(doubling);
  x.mutable_grad() = Tensor();
  (x * 3).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({3.0, 3.0}, kFloat64)));
}

TEST(Autograd, InPlaceOnNonLeafRewritesHistory) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  y.mul_(3);
  y.add_(x);  // y = 6x + x
  y.exp_();
  EXPECT_EQ(y.grad_fn()->name(), "ExpBackward0");
  y.sum().backward();
  // d/dx exp(7x) = 7 exp(7x)
  EXPECT_TRUE(all_close(x.grad(), tensor({7 * std::exp(7.0), 7 * std::exp(14.0)}, kFloat64)));
}

TEST(Autograd, InPlaceThroughViews) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * 1;
  y.select(0, 0).mul_(5);  // y = [5 x0, x1, x2]
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  (y * y).sum().backward();  // d/dx = [50 x0, 2 x1, 2 x2]
  EXPECT_TRUE(all_close(x.grad(), tensor({50.0, 4.0, 6.0}, kFloat64)));

  // A plain buffer written with a value that requires grad starts carrying history.
  Tensor w = leaf({4.0});
  Tensor buffer = zeros({3}, kFloat64);
  buffer.select(0, 1).copy_(w.sum() * 3);
  EXPECT_TRUE(buffer.requires_grad());
  (buffer * tensor({1.0, 2.0, 3.0}, kFloat64)).sum().backward();
  EXPECT_TRUE(all_close(w.grad(), tensor({6.0}, kFloat64)));
}

TEST(Autograd, ErrorsNamePyTorchsRules) {
  Tensor x = leaf({1.0, 2.0});
  EXPECT_TRUE(throws_error([&] { x.add_(1); }, {"add_", "leaf Variable that requires grad"}));
  EXPECT_TRUE(throws_error([&] { x.select(0, 0).mul_(2); }, {"view of a leaf Variable"}));
  Tensor y = x * 2;
  EXPECT_TRUE(throws_error([&] { y.requires_grad_(false); }, {"leaf variables"}));
  EXPECT_TRUE(throws_error([&] { y.backward(); }, {"implicitly created only for scalar outputs"}));
  EXPECT_TRUE(throws_error([&] { y.backward(ones({3}, kFloat64)); }, {"Mismatch in shape"}));
  Tensor out = empty({2}, kFloat64);
  EXPECT_TRUE(throws_error(
      [&] {
        ops::call(ops::OpRegistry::instance().get("add.out"), {x, x, Scalar(1), out});
      },
      {"add.out", "out=", "automatic differentiation"}));
  // A saved tensor changed in place: exp saves its result.
  Tensor e = (x * 2).exp();
  Tensor s = e.sum();
  {
    autograd::NoGradGuard no_grad;
    e.add_(1);
  }
  EXPECT_TRUE(throws_error(
      [&] { s.backward(); },
      {"modified by an inplace operation", "ExpBackward0", "version 1", "expected version 0"}));
  Tensor i = tensor({1, 2});
  EXPECT_TRUE(throws_error([&] { i.requires_grad_(); }, {"floating point"}));
}

TEST(Autograd, DeepChainsNeedNoDeepStack) {
  Tensor x = leaf({1.0});
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({1.0}, kFloat64)));
  // Freeing an unused chain of the same length is iterative too.
  Tensor z = x;
  for (int i = 0; i < 100000; ++i) z = z + 0.0;
  z = Tensor();
  y = Tensor();
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(Autograd, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  // d mean_i(-log softmax(x_i)[y_i]) / dx = (softmax(x) - onehot(y)) / N, computed here in float64.
  Tensor x = tensor({{1.0, 2.0, 0.5}, {0.0, -1.0, 3.0}}, kFloat64).requires_grad_();
  Tensor y = tensor({int64_t{1}, int64_t{2}});
  cross_entropy(x, y).backward();
  std::vector<double> expected;
  const double rows[2][3] = {{1.0, 2.0, 0.5}, {0.0, -1.0, 3.0}};
  const int target[2] = {1, 2};
  for (int i = 0; i < 2; ++i) {
    double z = 0;
    for (double v : rows[i]) z += std::exp(v);
    for (int j = 0; j < 3; ++j)
      expected.push_back((std::exp(rows[i][j]) / z - (j == target[i])) / 2);
  }
  EXPECT_TRUE(all_close(x.grad(), from_vector(expected, {2, 3}), 1e-12, 1e-12));
  // With sum reduction, a class weight and an ignored sample.
  Tensor x2 = x.detach().clone().requires_grad_();
  Tensor w = tensor({1.0, 2.0, 3.0}, kFloat64);
  cross_entropy(x2, tensor({int64_t{1}, int64_t{-100}}), {.weight = w, .reduction = "sum"})
      .backward();
  const double z0 = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  std::vector<double> e2 = {
      2 * std::exp(1.0) / z0, 2 * (std::exp(2.0) / z0 - 1), 2 * std::exp(0.5) / z0, 0, 0, 0};
  EXPECT_TRUE(all_close(x2.grad(), from_vector(e2, {2, 3}), 1e-12, 1e-12));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A leaf's first gradient may be taken over without a copy only when nothing else holds it.
TEST(Autograd, LeafGradientNeverAliasesAUsersTensor) {
  Tensor x = from_vector(std::vector<double>{1, 2, 3}).requires_grad_();
  Tensor upstream = from_vector(std::vector<double>{1, 1, 1});
  (x + 1).backward(upstream);  // add's formula passes the incoming gradient through unchanged
  Tensor gx = x.grad();
  gx.mul_(5);
  EXPECT_EQ(upstream.tolist<double>(), (std::vector<double>{1, 1, 1}));
  Tensor y = from_vector(std::vector<double>{1, 2, 3}).requires_grad_();
  (y * y).sum().backward();  // a fresh gradient nobody else holds
  EXPECT_EQ(y.grad().tolist<double>(), (std::vector<double>{2, 4, 6}));
  // Through a transpose, a user's tensor is still copied: the view's root is the user's.
  Tensor w = from_vector(std::vector<double>{1, 2, 3, 4}).view({2, 2}).requires_grad_();
  Tensor upstream2 = from_vector(std::vector<double>{1, 2, 3, 4}).view({2, 2});
  w.t().backward(upstream2);
  Tensor gw = w.grad();
  gw.mul_(5);
  EXPECT_EQ(upstream2.flatten().tolist<double>(), (std::vector<double>{1, 2, 3, 4}));
}

// A gradient that is a view covering all of a product nobody else holds (a linear layer's
// weight gradient, a transposed product) becomes .grad as it is: no copy per parameter per step.
TEST(Autograd, LeafTakesOverAViewOfAFreshProduct) {
  manual_seed(7);
  Tensor w = randn({8, 4}).requires_grad_();
  Tensor x = randn({5, 4});
  const void* incoming = nullptr;
  w.register_hook([&](const Tensor& g) {
    incoming = g.data_ptr();
    return Tensor();
  });
  kiln::mm(x, w.t()).sum().backward();  // w's gradient: the transpose of a fresh product
  EXPECT_EQ(w.grad().data_ptr(), incoming);
  EXPECT_EQ(IntList(w.grad().strides()), IntList({4, 1}));
  // Values: d sum(x @ w^T) / dw[i][j] = sum_k x[k][j].
  EXPECT_TRUE(testing::all_close(w.grad(), x.sum({0}).unsqueeze(0).expand({8, 4}), 1e-5, 1e-5));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Only the outputs a formula reads are saved: batch_norm's formula reads its statistics, not its
// result, so relu_ on the result (torchvision's ResNet) is fine; exp's reads its result.
TEST(Autograd, InPlaceOnAnOutputTheFormulaDoesNotRead) {
  manual_seed(5);
  Tensor x = randn({4, 3, 2, 2}, kFloat64).requires_grad_();
  Tensor y = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), /*training=*/true, 0.1, 1e-5);
  y.relu_();
  y.sum().backward();
  EXPECT_TRUE(x.grad().defined());
  Tensor z = layer_norm(x, {2, 2});
  z.relu_();
  EXPECT_NO_THROW(z.sum().backward());

  Tensor e = x.exp();
  e.mul_(2);
  EXPECT_TRUE(testing::throws_error([&] { e.sum().backward(); }, {"inplace operation"}));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// PyTorch's layout contract: a dense leaf's .grad has the leaf's strides, whatever layout the
// formula produced (mm's weight gradient comes out transposed here).
TEST(Autograd, LeafGradientsFollowTheLeafsLayout) {
  manual_seed(6);
  Tensor w = randn({16, 3}).requires_grad_();
  Tensor x = randn({5, 16});
  kiln::mm(x, w).sum().backward();
  EXPECT_EQ(IntList(w.grad().strides()), IntList({3, 1}));
  EXPECT_NO_THROW(w.grad().view({-1}));
  Tensor wt = randn({3, 16}).t().detach().requires_grad_();  // a dense transposed leaf
  kiln::mm(x, wt).sum().backward();
  EXPECT_EQ(IntList(wt.grad().strides()), IntList(wt.strides()));
  // Values: d sum(x @ w) / dw[i][j] = sum_k x[k][i].
  EXPECT_TRUE(testing::all_close(w.grad(), x.sum({0}).unsqueeze(1).expand({16, 3}), 1e-5, 1e-5));
}

}  // namespace
}  // namespace kiln
