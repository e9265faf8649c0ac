// Hand-checked gradients of the pointwise ops at PyTorch's conventions for non-smooth points
// (clamp's bounds pass the gradient, maximum/minimum split it between ties, hardtanh/relu6 stop
// it at their limits, abs/relu give 0 at 0), the exact weight gradient of nll_loss, and the
// fused activation backward kernels against their decompositions. Values are worked out by hand
// in the comments, or (where marked) printed by PyTorch 2.x.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;

Tensor f64(const std::vector<double>& v) { return from_vector(v); }
Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }

// d sum(y) / d x.
Tensor grad_of(const Tensor& y, const Tensor& x) {
  return autograd::grad({y.sum()}, {x}, {}, std::nullopt, false, /*allow_unused=*/true)[0];
}

const ops::OpDef& op(const char* name) { return ops::OpRegistry::instance().get(name); }

TEST(PointwiseDerivatives, ClampPassesTheGradientAtItsBounds) {
  Tensor x = leaf({-2.0, -1.0, 0.0, 1.0, 2.0});
  EXPECT_TRUE(all_close(grad_of(x.clamp(-1.0, 1.0), x), f64({0, 1, 1, 1, 0})));
  EXPECT_TRUE(all_close(grad_of(x.clamp_min(0.0), x), f64({0, 0, 1, 1, 1})));
  EXPECT_TRUE(all_close(grad_of(x.clamp_max(0.0), x), f64({1, 1, 1, 0, 0})));
}

TEST(PointwiseDerivatives, ClampTensorBoundsTakeTheGradientWhereTheyWin) {
  // x = lo at element 1 (self keeps it), x = hi at element 3; element 4 has lo > hi (hi wins).
  Tensor x = leaf({-2.0, -1.0, 0.0, 1.0, 0.0});
  Tensor lo = leaf({-1.0, -1.0, -1.0, -1.0, 2.0});
  Tensor hi = leaf({1.0, 1.0, 1.0, 1.0, 1.0});
  auto g = autograd::grad({clamp(x, lo, hi).sum()}, {x, lo, hi});
  EXPECT_TRUE(all_close(g[0], f64({0, 1, 1, 1, 0})));
  EXPECT_TRUE(all_close(g[1], f64({1, 0, 0, 0, 0})));
  EXPECT_TRUE(all_close(g[2], f64({0, 0, 0, 0, 1})));
}

TEST(PointwiseDerivatives, MaximumAndMinimumSplitTiesEvenly) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = leaf({1.0, 1.0, 4.0});
  auto gmax = autograd::grad({maximum(x, y).sum()}, {x, y});
  EXPECT_TRUE(all_close(gmax[0], f64({0.5, 1, 0})));
  EXPECT_TRUE(all_close(gmax[1], f64({0.5, 0, 1})));
  auto gmin = autograd::grad({minimum(x, y).sum()}, {x, y});
  EXPECT_TRUE(all_close(gmin[0], f64({0.5, 0, 1})));
  EXPECT_TRUE(all_close(gmin[1], f64({0.5, 1, 0})));
}

TEST(PointwiseDerivatives, HardtanhAndRelu6StopTheGradientAtTheirLimits) {
  Tensor x = leaf({-1.5, -1.0, 0.0, 1.0, 1.5});
  EXPECT_TRUE(all_close(grad_of(hardtanh(x, -1.0, 1.0), x), f64({0, 0, 1, 0, 0})));
  Tensor r = leaf({-1.0, 0.0, 3.0, 6.0, 7.0});
  EXPECT_TRUE(all_close(grad_of(ops::call1(op("relu6"), {r}), r), f64({0, 0, 1, 0, 0})));
}

TEST(PointwiseDerivatives, AbsReluLeakyReluAndEluAtZero) {
  Tensor x = leaf({-1.0, 0.0, 2.0});
  EXPECT_TRUE(all_close(grad_of(abs(x), x), f64({-1, 0, 1})));
  EXPECT_TRUE(all_close(grad_of(relu(x), x), f64({0, 0, 1})));
  // leaky_relu_backward: slope where x <= 0.
  EXPECT_TRUE(all_close(grad_of(leaky_relu(x, 0.1), x), f64({0.1, 0.1, 1})));
  // elu (alpha 2): alpha e^x where x <= 0, so 2 e^-1 and 2 at 0; 1 above.
  EXPECT_TRUE(all_close(grad_of(elu(x, 2.0), x), f64({2.0 * std::exp(-1.0), 2.0, 1.0})));
}

TEST(PointwiseDerivatives, SoftplusAboveTheThresholdIsTheIdentity) {
  // beta 2, threshold 3: sigmoid(2x) below 2x = 3, 1 above it.
  Tensor x = leaf({0.0, 1.0, 2.0});
  const double s2 = 1.0 / (1.0 + std::exp(-2.0));
  EXPECT_TRUE(all_close(grad_of(softplus(x, 2.0, 3.0), x), f64({0.5, s2, 1.0})));
}

TEST(PointwiseDerivatives, LogitWithEpsHasNoGradientWhereItClamps) {
  Tensor x = leaf({0.05, 0.5, 0.95});
  // 1 / (x (1 - x)) = 4 at 0.5; x outside [0.1, 0.9] is clamped: 0.
  EXPECT_TRUE(all_close(grad_of(logit(x, 0.1), x), f64({0, 4, 0})));
}

TEST(PointwiseDerivatives, NanToNumPassesTheGradientOnlyThroughFiniteValues) {
  Tensor x = leaf({NAN, INFINITY, -INFINITY, 1.5});
  EXPECT_TRUE(all_close(grad_of(nan_to_num(x, 0.0, 1.0, -1.0), x), f64({0, 0, 0, 1})));
}

TEST(PointwiseDerivatives, PowOfZeroToTheZeroHasAZeroGradient) {
  Tensor x = leaf({0.0, 2.0});
  Tensor e = leaf({0.0, 3.0});
  auto g = autograd::grad({pow(x, e).sum()}, {x, e});
  // d/dx = e x^(e-1): 0 (e = 0), 3 * 4 = 12; d/de = x^e log x: 0 (x = 0, e >= 0), 8 log 2.
  EXPECT_TRUE(all_close(g[0], f64({0, 12})));
  EXPECT_TRUE(all_close(g[1], f64({0, 8 * std::log(2.0)})));
  EXPECT_TRUE(all_close(grad_of(pow(x, Scalar(0.0)), x), f64({0, 0})));
}

// The in-place variants differentiate through the functional op on the old value.
TEST(PointwiseDerivatives, InPlaceVariants) {
  Tensor x = leaf({-2.0, 0.5, 3.0});
  Tensor y = x * 1.0;
  y.clamp_(-1.0, 1.0);
  y.relu_();
  y.mul_(3.0);
  // d/dx of 3 relu(clamp(x, -1, 1)): 0 (clamped), 3, 0 (clamped).
  EXPECT_TRUE(all_close(grad_of(y, x), f64({0, 3, 0})));

  Tensor z = x * 2.0;
  Tensor value = scalar_tensor(5.0, kFloat64).requires_grad_();
  ops::call(op("masked_fill_.Tensor"), {z, tensor({true, false, true}), value});
  auto g = autograd::grad({(z * f64({1, 2, 3})).sum()}, {x, value});
  EXPECT_TRUE(all_close(g[0], f64({0, 4, 0})));
  EXPECT_NEAR(g[1].item<double>(), 1 + 3, 1e-12);
}

// Python-number operands take the short formulas (and get no gradient of their own).
TEST(PointwiseDerivatives, NumberOperands) {
  Tensor x = leaf({-2.0, 0.5, 3.0});
  EXPECT_TRUE(all_close(grad_of(pow(x, Scalar(2)), x), f64({-4, 1, 6})));
  EXPECT_TRUE(all_close(grad_of(pow(x, Scalar(3.0)), x), f64({12, 0.75, 27})));
  EXPECT_TRUE(all_close(grad_of(pow(x, Scalar(1.0)), x), f64({1, 1, 1})));
  EXPECT_TRUE(all_close(grad_of(x * 2.0, x), f64({2, 2, 2})));
  EXPECT_TRUE(all_close(grad_of(x / 4.0, x), f64({0.25, 0.25, 0.25})));
  EXPECT_TRUE(all_close(grad_of(where(x > 0.0, x, 0.0), x), f64({0, 1, 1})));
  EXPECT_TRUE(all_close(grad_of(maximum(x, 0.5), x), f64({0, 0.5, 1})));
}

TEST(PointwiseDerivatives, WhereAndMaskedFillRouteTheGradient) {
  Tensor cond = tensor({true, false, true});
  Tensor a = leaf({1.0, 2.0, 3.0});
  Tensor b = leaf({4.0, 5.0, 6.0});
  auto g = autograd::grad({(where(cond, a, b) * f64({1, 2, 3})).sum()}, {a, b});
  EXPECT_TRUE(all_close(g[0], f64({1, 0, 3})));
  EXPECT_TRUE(all_close(g[1], f64({0, 2, 0})));

  // The mask (2, 3) broadcasts self (3); the value gets the sum of the gradient over the mask.
  Tensor self = leaf({1.0, 2.0, 3.0});
  Tensor value = scalar_tensor(7.0, kFloat64).requires_grad_();
  Tensor mask = tensor({{true, false, false}, {true, true, false}});
  Tensor w = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto gm = autograd::grad({(masked_fill(self, mask, value) * w).sum()}, {self, value});
  EXPECT_TRUE(all_close(gm[0], f64({0, 2, 3 + 6})));
  EXPECT_NEAR(gm[1].item<double>(), 1 + 4 + 5, 1e-12);
}

TEST(PointwiseDerivatives, RegressionLossesAtTheirKinks) {
  Tensor x = leaf({1.0, 2.0, 0.0, -3.0});
  Tensor t = f64({0.0, 0.0, 0.0, 0.0});
  // mse mean: 2 (x - t) / 4.
  EXPECT_TRUE(all_close(grad_of(mse_loss(x, t), x), f64({0.5, 1.0, 0.0, -1.5})));
  // smooth_l1 beta 0 is l1: sign, 0 at a tie (sum).
  SmoothL1LossOptions l1;
  l1.reduction = Reduction::Sum;
  l1.beta = 0.0;
  EXPECT_TRUE(all_close(grad_of(smooth_l1_loss(x, t, l1), x), f64({1, 1, 0, -1})));
  // smooth_l1 beta 2: d / beta inside, sign outside; |d| = 2 is at the edge (1).
  l1.beta = 2.0;
  EXPECT_TRUE(all_close(grad_of(smooth_l1_loss(x, t, l1), x), f64({0.5, 1, 0, -1})));
  // huber delta 1: d clamped to [-1, 1].
  HuberLossOptions huber;
  huber.reduction = Reduction::Sum;
  EXPECT_TRUE(all_close(grad_of(huber_loss(x, t, huber), x), f64({1, 1, 0, -1})));
}

TEST(PointwiseDerivatives, BinaryCrossEntropyTargetGradientIsFiniteAtZero) {
  Tensor x = f64({0.0, 0.5, 0.8});
  Tensor t = leaf({0.5, 0.5, 1.0});
  BinaryCrossEntropyOptions o;
  o.reduction = Reduction::Sum;
  // d/dt = max(log(1 - x), -100) - max(log x, -100): 100 at x = 0 (clamped log), 0 at 0.5.
  EXPECT_TRUE(all_close(grad_of(binary_cross_entropy(x, t, o), t),
                        f64({100.0, 0.0, std::log(0.2) - std::log(0.8)})));
  // d/dx = (x - t) / (x (1 - x)) at x = 0.8, t = 1: -0.2 / 0.16 = -1.25.
  Tensor x2 = leaf({0.8});
  EXPECT_TRUE(all_close(grad_of(binary_cross_entropy(x2, f64({1.0}), o), x2), f64({-1.25})));
}

// At exactly 0 and 1 (the op-info samples stay inside, for central differences): the logs clamp
// at -100, and self's gradient divides by max(x (1 - x), 1e-12). Values from PyTorch 2.x.
TEST(PointwiseDerivatives, BinaryCrossEntropyAtZeroAndOne) {
  Tensor x = leaf({0.0, 1.0});
  Tensor t = f64({0.25, 0.25});
  BinaryCrossEntropyOptions o;
  o.reduction = Reduction::None;
  Tensor loss = binary_cross_entropy(x, t, o);
  EXPECT_TRUE(all_close(loss.detach(), f64({25.0, 75.0})));
  EXPECT_TRUE(all_close(grad_of(loss, x), f64({-250000000998.9507, 750000002996.852}), 1e-6));
}

// d/dx = sigmoid(x) - t, also at x = 0 (where a min/abs form of log-sigmoid has kinks) and for
// huge logits.
TEST(PointwiseDerivatives, BinaryCrossEntropyWithLogitsAtZeroAndLargeLogits) {
  Tensor x = leaf({0.0, 1000.0, -1000.0, 2.0});
  Tensor t = f64({0.25, 1.0, 0.0, 0.5});
  BinaryCrossEntropyWithLogitsOptions o;
  o.reduction = Reduction::Sum;
  const double s2 = 1.0 / (1.0 + std::exp(-2.0));
  EXPECT_TRUE(all_close(grad_of(binary_cross_entropy_with_logits(x, t, o), x),
                        f64({0.25, 0.0, 0.0, s2 - 0.5}), 1e-12, 1e-14));
}

TEST(PointwiseDerivatives, NllLossWeightGradientIncludesTheMeanDenominator) {
  // x = [[-1, -2, -3], [-4, -5, -6]], targets 0 and 2, w = [1, 2, 3]:
  // sum: L = -(1 * -1 + 3 * -6) = 19, dL/dw = [1, 0, 6].
  // mean: L = (w0 + 6 w2) / (w0 + w2) = 19 / 4, dL/dw0 = (1 * 4 - 19) / 16 = -0.9375,
  //       dL/dw2 = (6 * 4 - 19) / 16 = 0.3125; dL/dx[0, 0] = -1/4, dL/dx[1, 2] = -3/4.
  Tensor x = from_vector(std::vector<double>{-1, -2, -3, -4, -5, -6}, {2, 3}).requires_grad_();
  Tensor target = tensor({0, 2}, kInt64);
  Tensor w = leaf({1.0, 2.0, 3.0});
  const ops::OpDef& forward = op("nll_loss_forward");
  Tensor sum = ops::call(forward, {x, target, w, int64_t{2}, int64_t{-100}})[0];
  EXPECT_TRUE(all_close(autograd::grad({sum}, {w})[0], f64({1, 0, 6})));
  Tensor mean = ops::call(forward, {x, target, w, int64_t{1}, int64_t{-100}})[0];
  EXPECT_NEAR(mean.item<double>(), 4.75, 1e-12);
  auto g = autograd::grad({mean}, {x, w});
  EXPECT_TRUE(all_close(g[0], from_vector(std::vector<double>{-0.25, 0, 0, 0, 0, -0.75}, {2, 3})));
  EXPECT_TRUE(all_close(g[1], f64({-0.9375, 0, 0.3125})));
  // An ignored sample contributes to neither.
  Tensor ignored = tensor({0, -100}, kInt64);
  Tensor m2 = ops::call(forward, {x, ignored, w, int64_t{1}, int64_t{-100}})[0];
  EXPECT_TRUE(all_close(autograd::grad({m2}, {w})[0], f64({0, 0, 0})));
}

TEST(PointwiseDerivatives, NllLoss2dGradientScattersToTheTargetClass) {
  // (N=1, C=2, H=1, W=2), targets [1, 0], no weight, sum: -1 at each target.
  Tensor x = zeros({1, 2, 1, 2}, kFloat64).requires_grad_();
  Tensor target = tensor({{{1, 0}}}, kInt64);
  Tensor out =
      ops::call(op("nll_loss2d_forward"), {x, target, ops::IValue(), int64_t{2}, int64_t{-100}})[0];
  Tensor expected = from_vector(std::vector<double>{0, -1, -1, 0}, {1, 2, 1, 2});
  EXPECT_TRUE(all_close(autograd::grad({out}, {x})[0], expected));
}

// gelu's derivative from PyTorch 2.x: torch.ops.aten.gelu_backward(ones, x, approximate=...)
// at x = [-2, -0.5, 0, 1, 3].
TEST(PointwiseDerivatives, GeluBackwardMatchesPyTorch) {
  Tensor x = f64({-2.0, -0.5, 0.0, 1.0, 3.0});
  Tensor g = ones({5}, kFloat64);
  const ops::OpDef& backward = op("gelu_backward");
  Tensor erf_form =
      f64({-0.08523180107819692, 0.13250487534383712, 0.5, 1.0833154705876864, 1.011945647204184});
  Tensor tanh_form =
      f64({-0.0860992566236183, 0.13263009646535764, 0.5, 1.0829640838457826, 1.0115841666309695});
  EXPECT_TRUE(all_close(ops::call1(backward, {g, x, "none"}), erf_form, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(ops::call1(backward, {g, x, "tanh"}), tanh_form, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(ops::call1(backward, {g.to(kFloat32), x.to(kFloat32), "none"}),
                        erf_form.to(kFloat32), 1e-5, 1e-6));
  // And through gelu itself.
  Tensor xl = x.clone().requires_grad_();
  EXPECT_TRUE(all_close(grad_of(gelu(xl, "tanh"), xl), tanh_form, 1e-12, 1e-14));
}

TEST(PointwiseDerivatives, GeluDoubleBackwardGoesThroughTheDecomposition) {
  // d2 gelu / dx2 at 0 and 1, from PyTorch 2.x (double backward).
  Tensor x = leaf({0.0, 1.0});
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    Tensor d = autograd::grad({gelu(x, approximate).sum()}, {x}, {}, std::nullopt, true)[0];
    Tensor dd = autograd::grad({d.sum()}, {x})[0];
    const double second =
        std::string(approximate) == "none" ? 0.24197072451914337 : 0.24214819798377296;
    EXPECT_TRUE(all_close(dd, f64({0.7978845608028654, second}), 1e-10, 1e-12));
  }
}

// The fused kernels equal their decompositions over wide ranges, float32 SIMD bodies and tails
// included, broadcasting and non-contiguous operands.
TEST(PointwiseDerivatives, FusedBackwardKernelsMatchTheirDecompositions) {
  manual_seed(11);
  struct Case {
    const char* op;
    ops::Stack extra;
    double scale;  // x = randn * scale (+ 0: sigmoid/tanh take results, mapped into range below)
  };
  const Case cases[] = {
      {"gelu_backward", {"none"}, 4.0},
      {"gelu_backward", {"tanh"}, 4.0},
      {"threshold_backward", {Scalar(0.25)}, 2.0},
      {"hardtanh_backward", {Scalar(-1.0), Scalar(1.0)}, 2.0},
      {"hardtanh_backward", {Scalar(0.0), Scalar(6.0)}, 5.0},
      {"silu_backward", {}, 6.0},
      {"sigmoid_backward", {}, 0.0},
      {"tanh_backward", {}, 0.0},
      {"leaky_relu_backward", {Scalar(0.1), false}, 2.0},
      {"softplus_backward", {Scalar(1.0), Scalar(20.0)}, 30.0},
      {"softplus_backward", {Scalar(2.0), Scalar(3.0)}, 2.0},
  };
  for (const Case& c : cases) {
    const ops::OpDef& o = op(c.op);
    for (DType d : {kFloat32, kFloat64}) {
      SCOPED_TRACE(std::string(c.op) + " " + std::string(dtype_name(d)));
      Tensor g = randn({37, 19}, d);
      Tensor x = (randn({19, 37}, d) * c.scale).t();  // non-contiguous
      if (c.scale == 0.0) x = tanh(randn({19, 37}, d)).t();
      for (const Tensor& grad : {g, randn({19}, d)}) {  // same shape, then broadcast
        ops::Stack args{grad, x};
        args.insert(args.end(), c.extra.begin(), c.extra.end());
        EXPECT_TRUE(all_close(ops::call1(o, args), o.decomposition(args)[0],
                              d == kFloat32 ? 1e-5 : 1e-12, 1e-6));
      }
    }
  }
  // elu_backward takes self (or the result) last.
  const ops::OpDef& elu_backward = op("elu_backward");
  for (bool is_result : {false, true}) {
    for (DType d : {kFloat32, kFloat64}) {
      ops::Stack args{randn({37, 19}, d), Scalar(1.5), Scalar(2.0),
                      Scalar(0.5),        is_result,   (randn({19, 37}, d) * 3.0).t()};
      EXPECT_TRUE(all_close(ops::call1(elu_backward, args), elu_backward.decomposition(args)[0],
                            d == kFloat32 ? 1e-5 : 1e-12, 1e-6));
    }
  }
  // threshold_backward: nothing at or below the threshold, NaN self passes the gradient.
  Tensor t = ops::call1(op("threshold_backward"),
                        {f64({1, 2, 3, 4}), f64({0.0, -1.0, NAN, 0.5}), Scalar(0.0)});
  EXPECT_TRUE(all_close(t, f64({0, 0, 3, 4})));
  // hardtanh_backward: nothing at the limits either.
  Tensor h = ops::call1(op("hardtanh_backward"),
                        {f64({1, 2, 3, 4}), f64({-1.0, 0.0, 1.0, 2.0}), Scalar(-1.0), Scalar(1.0)});
  EXPECT_TRUE(all_close(h, f64({0, 2, 0, 0})));
}

// From PyTorch 2.x: torch.ops.aten.{silu,sigmoid,tanh}_backward(ones, x) at x = [-2, 0, 0.5].
TEST(PointwiseDerivatives, SiluSigmoidTanhBackwardMatchPyTorch) {
  Tensor g = ones({3}, kFloat64);
  Tensor x = f64({-2.0, 0.0, 0.5});
  EXPECT_TRUE(all_close(ops::call1(op("silu_backward"), {g, x}),
                        f64({-0.09078424878489547, 0.5, 0.7399611873026519}), 1e-12, 1e-14));
  EXPECT_TRUE(
      all_close(ops::call1(op("sigmoid_backward"), {g, x}), f64({-6.0, 0.0, 0.25}), 1e-12, 1e-14));
  EXPECT_TRUE(
      all_close(ops::call1(op("tanh_backward"), {g, x}), f64({-3.0, 1.0, 0.75}), 1e-12, 1e-14));
  // Through the ops themselves.
  Tensor xl = x.clone().requires_grad_();
  EXPECT_TRUE(all_close(grad_of(silu(xl), xl), f64({-0.09078424878489547, 0.5, 0.7399611873026519}),
                        1e-12, 1e-14));
}

// Double backward: the derivative formulas are written in differentiable ops, so the gradient of
// u = <d f / dx, v> matches central differences of u (float64, smooth points only).
TEST(PointwiseDerivatives, FormulasAreDifferentiableAgain) {
  manual_seed(5);
  using Fn = std::function<Tensor(const Tensor&)>;
  const Tensor t = rand({6}, kFloat64) * 0.8 + 0.1;
  const std::pair<const char*, Fn> cases[] = {
      {"pow", [](const Tensor& x) { return pow(x, x * 0.5 + 1.0); }},
      {"pow number", [](const Tensor& x) { return pow(x, Scalar(3.5)); }},
      {"atan2", [](const Tensor& x) { return atan2(x, x * x + 1.0); }},
      {"maximum", [](const Tensor& x) { return maximum(x * x, x + 1.5); }},
      {"clamp", [](const Tensor& x) { return (x * x).clamp(0.2, 0.7); }},
      {"lerp", [](const Tensor& x) { return lerp(x, x * x, x); }},
      {"addcdiv", [](const Tensor& x) { return addcdiv(x, x * x, x + 2.0, 0.5); }},
      {"elu", [](const Tensor& x) { return elu(x - 0.5, 1.5); }},
      {"softplus", [](const Tensor& x) { return softplus(x * 3.0, 2.0, 5.0); }},
      {"gelu tanh", [](const Tensor& x) { return gelu(x * 2.0, "tanh"); }},
      {"silu", [](const Tensor& x) { return silu(x * 3.0); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x * 3.0); }},
      {"tanh", [](const Tensor& x) { return tanh(x * 3.0); }},
      {"logit", [](const Tensor& x) { return logit(x, 0.05); }},
      {"mse_loss", [t](const Tensor& x) { return mse_loss(x * x, t); }},
      {"huber_loss", [t](const Tensor& x) { return huber_loss(x * 3.0, t, {}); }},
      {"binary_cross_entropy", [t](const Tensor& x) { return binary_cross_entropy(x, t, {}); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.first);
    const Fn& f = c.second;  // not a structured binding: lambdas capture it (clang 14)
    const Tensor x0 = rand({6}, kFloat64) * 0.8 + 0.1;  // in (0.1, 0.9)
    const Tensor v = randn(f(x0).sizes(), kFloat64);
    const Tensor w = randn({6}, kFloat64);
    // u(x) = <d <f(x), v> / dx, w>.
    auto u = [&](const Tensor& x, bool create_graph) {
      Tensor y = (f(x) * v).sum();
      Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, create_graph)[0];
      return (g * w).sum();
    };
    Tensor x = x0.clone().requires_grad_();
    const std::vector<double> analytic = autograd::grad({u(x, true)}, {x})[0].tolist<double>();
    const double eps = 1e-6;
    for (int64_t i = 0; i < 6; ++i) {
      Tensor plus = x0.clone(), minus = x0.clone();
      plus.data_ptr<double>()[i] += eps;
      minus.data_ptr<double>()[i] -= eps;
      const double up = u(plus.requires_grad_(), false).item<double>();
      const double down = u(minus.requires_grad_(), false).item<double>();
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic[static_cast<size_t>(i)], numeric, 1e-5 + 1e-4 * std::abs(numeric))
          << "element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln
