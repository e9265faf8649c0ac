// Losses against float64 loops written here: cross entropy (log-sum-exp, NLL with weights and
// ignore_index, label smoothing, probability targets, K-dim inputs), nll_loss, and each
// elementwise loss formula, for every reduction; options and string reductions; bad input.
#include "test_util.h"

#include <kiln/ops/loss.h>

#include <cmath>
#include <limits>
#include <numeric>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

Tensor random_input(IntList sizes, DType dtype = kFloat32, double scale = 2.0, uint64_t seed = 3) {
  manual_seed(seed);
  return (randn(sizes, kFloat64) * scale).to(dtype);
}

Tensor random_classes(IntList sizes, int64_t c, uint64_t seed = 5) {
  manual_seed(seed);
  return randint(c, sizes);
}

// Logits (N, C, K...) viewed as N x C x K with the class dim in the middle.
struct Geometry {
  int64_t n, c, k;
};
Geometry geometry(const Tensor& x) {
  if (x.dim() == 1) return {1, x.size(0), 1};
  int64_t k = 1;
  for (int64_t d = 2; d < x.dim(); ++d) k *= x.size(d);
  return {x.size(0), x.size(1), k};
}

// log_softmax over the class dim by float64 loops.
std::vector<double> ref_log_softmax(const Tensor& x) {
  const Geometry g = geometry(x);
  const std::vector<double> v = x.tolist<double>();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t j = 0; j < g.k; ++j) {
      auto at = [&](int64_t c) { return static_cast<size_t>((i * g.c + c) * g.k + j); };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < g.c; ++c) m = std::max(m, v[at(c)]);
      double s = 0.0;
      for (int64_t c = 0; c < g.c; ++c) s += std::exp(v[at(c)] - m);
      for (int64_t c = 0; c < g.c; ++c) out[at(c)] = v[at(c)] - m - std::log(s);
    }
  }
  return out;
}

// Cross entropy against class indices with weight, ignore_index and label smoothing (PyTorch's
// definition): per element (1 - eps) * w[t] * -logp[t] + eps / C * sum_c w[c] * -logp[c]; mean
// divides by the sum of w[t] over non-ignored targets. Without label smoothing on log-probability
// input (`already_log`), this is nll_loss.
Tensor ref_cross_entropy(const Tensor& x, const Tensor& target, const std::vector<double>& w,
                         int64_t ignore, Reduction r, double eps, bool already_log = false) {
  const Geometry g = geometry(x);
  const std::vector<double> lp = already_log ? x.tolist<double>() : ref_log_softmax(x);
  const std::vector<int64_t> t = target.tolist<int64_t>();
  auto weight = [&](int64_t c) { return w.empty() ? 1.0 : w[static_cast<size_t>(c)]; };
  std::vector<double> per;
  double total = 0.0, total_weight = 0.0;
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t j = 0; j < g.k; ++j) {
      const int64_t cls = t[static_cast<size_t>(i * g.k + j)];
      double loss = 0.0;
      if (cls != ignore) {
        auto logp = [&](int64_t c) { return lp[static_cast<size_t>((i * g.c + c) * g.k + j)]; };
        double smooth = 0.0;
        for (int64_t c = 0; c < g.c; ++c) smooth -= weight(c) * logp(c);
        loss = (1.0 - eps) * -weight(cls) * logp(cls) + eps / static_cast<double>(g.c) * smooth;
        total_weight += weight(cls);
      }
      per.push_back(loss);
      total += loss;
    }
  }
  if (r == Reduction::Sum) return scalar_tensor(total, kFloat64);
  if (r == Reduction::Mean) return scalar_tensor(total / total_weight, kFloat64);
  DimVector shape;
  if (x.dim() >= 2) shape.push_back(g.n);
  for (int64_t d = 2; d < x.dim(); ++d) shape.push_back(x.size(d));
  return from_vector(per, shape, kFloat64);
}

// Probability targets: per sample -sum_c w[c] p[c] logp[c]; mean divides by the sample count.
Tensor ref_cross_entropy_probs(const Tensor& x, const Tensor& p, const std::vector<double>& w,
                               Reduction r, double eps) {
  const Geometry g = geometry(x);
  const std::vector<double> lp = ref_log_softmax(x);
  const std::vector<double> pv = p.tolist<double>();
  std::vector<double> per;
  double total = 0.0;
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t j = 0; j < g.k; ++j) {
      double loss = 0.0;
      for (int64_t c = 0; c < g.c; ++c) {
        const size_t at = static_cast<size_t>((i * g.c + c) * g.k + j);
        const double target = pv[at] * (1.0 - eps) + eps / static_cast<double>(g.c);
        loss -= (w.empty() ? 1.0 : w[static_cast<size_t>(c)]) * target * lp[at];
      }
      per.push_back(loss);
      total += loss;
    }
  }
  if (r == Reduction::Sum) return scalar_tensor(total, kFloat64);
  if (r == Reduction::Mean) return scalar_tensor(total / static_cast<double>(g.n * g.k), kFloat64);
  return from_vector(per, {g.n}, kFloat64);
}

const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

TEST(Loss, CrossEntropyClassIndicesEveryReduction) {
  Tensor x = random_input({6, 7});
  Tensor t = random_classes({6}, 7);
  for (Reduction r : kReductions) {
    Tensor got = cross_entropy(x, t, {.reduction = r});
    EXPECT_EQ(got.dtype(), kFloat32);
    EXPECT_TRUE(all_close(got, ref_cross_entropy(x, t, {}, -100, r, 0.0), 1e-5, 1e-6));
  }
  // The default is mean.
  EXPECT_TRUE(all_close(cross_entropy(x, t), ref_cross_entropy(x, t, {}, -100, Reduction::Mean, 0),
                        1e-5, 1e-6));
}

TEST(Loss, CrossEntropyWeightAndIgnoreIndexMeanDividesBySummedWeights) {
  Tensor x = random_input({5, 4}, kFloat64);
  Tensor t = tensor({0, 3, 1, 3, 2}, kInt64);
  const std::vector<double> w = {0.5, 2.0, 1.5, 0.25};
  Tensor wt = from_vector(w, {4}, kFloat64);
  for (Reduction r : kReductions) {
    Tensor got = cross_entropy(x, t, {.weight = wt, .ignore_index = 3, .reduction = r});
    EXPECT_TRUE(all_close(got, ref_cross_entropy(x, t, w, 3, r, 0.0), 1e-12, 1e-12));
  }
  // By hand: the mean is sum_i w[t_i] * nll_i over rows 0, 2, 4 divided by w[0] + w[1] + w[2].
  const auto lp = ref_log_softmax(x);
  const double expected = (0.5 * -lp[0] + 2.0 * -lp[2 * 4 + 1] + 1.5 * -lp[4 * 4 + 2]) / 4.0;
  EXPECT_NEAR(cross_entropy(x, t, {.weight = wt, .ignore_index = 3}).item<double>(), expected,
              1e-12);
}

TEST(Loss, CrossEntropyFusedPathMatchesComposedPath) {
  // requires_grad keeps cross_entropy off its fused CPU kernel (log_softmax + nll_loss instead).
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = random_input({33, 45}, dt, 4.0);
    Tensor slow = x.clone();
    slow.requires_grad_(true);
    Tensor t = random_classes({33}, 45);
    t.select(0, 3).fill_(int64_t{-100});
    Tensor w = random_input({45}, dt, 1.0).abs();
    for (Reduction r : kReductions) {
      EXPECT_TRUE(all_close(cross_entropy(x, t, {.weight = w, .reduction = r}),
                            cross_entropy(slow, t, {.weight = w, .reduction = r}).detach(), 1e-5,
                            1e-6));
    }
  }
}

TEST(Loss, CrossEntropyLabelSmoothing) {
  Tensor x = random_input({6, 5});
  Tensor t = tensor({0, 4, -100, 2, 1, 4}, kInt64);
  const std::vector<double> w = {1.0, 0.5, 2.0, 1.5, 0.75};
  Tensor wt = from_vector(w, {5}, kFloat32);
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(cross_entropy(x, t, {.reduction = r, .label_smoothing = 0.1}),
                          ref_cross_entropy(x, t, {}, -100, r, 0.1), 1e-5, 1e-6));
    EXPECT_TRUE(
        all_close(cross_entropy(x, t, {.weight = wt, .reduction = r, .label_smoothing = 0.3}),
                  ref_cross_entropy(x, t, w, -100, r, 0.3), 1e-5, 1e-6));
  }
  // The brief's example form.
  Tensor t0 = t.clamp_min(0);
  Tensor got = cross_entropy(
      x, t0,
      {.weight = wt, .ignore_index = 0, .reduction = Reduction::Sum, .label_smoothing = 0.1});
  EXPECT_TRUE(all_close(got, ref_cross_entropy(x, t0, w, 0, Reduction::Sum, 0.1), 1e-5, 1e-5));
}

TEST(Loss, CrossEntropyProbabilityTargets) {
  Tensor x = random_input({4, 6}, kFloat64);
  Tensor p = softmax(random_input({4, 6}, kFloat64, 1.0, 9), 1);
  const std::vector<double> w = {1.0, 2.0, 0.5, 1.0, 3.0, 0.1};
  Tensor wt = from_vector(w, {6}, kFloat64);
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(cross_entropy(x, p, {.reduction = r}),
                          ref_cross_entropy_probs(x, p, {}, r, 0.0), 1e-12, 1e-12));
    EXPECT_TRUE(
        all_close(cross_entropy(x, p, {.weight = wt, .reduction = r, .label_smoothing = 0.2}),
                  ref_cross_entropy_probs(x, p, w, r, 0.2), 1e-12, 1e-12));
  }
}

TEST(Loss, CrossEntropyKDimAndUnbatchedInputs) {
  Tensor x = random_input({2, 3, 4, 5});
  Tensor t = random_classes({2, 4, 5}, 3);
  const std::vector<double> w = {0.3, 1.0, 2.0};
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(
        cross_entropy(x, t,
                      {.weight = from_vector(w, {3}, kFloat32), .ignore_index = 1, .reduction = r}),
        ref_cross_entropy(x, t, w, 1, r, 0.0), 1e-5, 1e-6));
  }
  Tensor x3 = random_input({2, 4, 3}, kFloat64);
  Tensor t3 = random_classes({2, 3}, 4);
  Tensor none = cross_entropy(x3, t3, {.reduction = "none"});
  EXPECT_EQ(IntList(none.sizes()), IntList({2, 3}));
  EXPECT_TRUE(
      all_close(none, ref_cross_entropy(x3, t3, {}, -100, Reduction::None, 0), 1e-12, 1e-12));
  Tensor x5 = random_input({2, 3, 2, 2, 2});
  Tensor t5 = random_classes({2, 2, 2, 2}, 3);
  EXPECT_TRUE(all_close(cross_entropy(x5, t5, {.label_smoothing = 0.2}),
                        ref_cross_entropy(x5, t5, {}, -100, Reduction::Mean, 0.2), 1e-5, 1e-6));
  // (C) logits with a 0-dim target.
  Tensor x1 = random_input({5});
  Tensor t1 = scalar_tensor(int64_t{3}, kInt64);
  EXPECT_TRUE(all_close(cross_entropy(x1, t1),
                        ref_cross_entropy(x1, t1, {}, -100, Reduction::Mean, 0), 1e-5, 1e-6));
}

TEST(Loss, CrossEntropyTargetsStridesMagnitudesAndEmpty) {
  Tensor x = random_input({5, 8});
  Tensor t = random_classes({5}, 8);
  EXPECT_TRUE(all_close(cross_entropy(x, t.to(kUInt8)), cross_entropy(x, t), 0.0, 0.0));
  Tensor xt = random_input({8, 5}).t();
  EXPECT_TRUE(all_close(cross_entropy(xt, t, {.reduction = Reduction::None}),
                        ref_cross_entropy(xt, t, {}, -100, Reduction::None, 0), 1e-5, 1e-6));
  Tensor big = random_input({5, 8}) * 1e4;
  Tensor loss = cross_entropy(big, t, {.reduction = Reduction::None});
  EXPECT_TRUE(loss.isfinite().all().item<bool>());
  EXPECT_TRUE(all_close(loss, ref_cross_entropy(big, t, {}, -100, Reduction::None, 0), 1e-5, 1e-2));
  EXPECT_TRUE(std::isnan(cross_entropy(zeros({0, 4}), zeros({0}, kInt64)).item<double>()));
  EXPECT_EQ(cross_entropy(zeros({0, 4}), zeros({0}, kInt64), {.reduction = "sum"}).item<double>(),
            0.0);
  EXPECT_EQ(cross_entropy(zeros({0, 4}), zeros({0}, kInt64), {.reduction = "none"}).numel(), 0);
  // Every target ignored: the mean is 0 / 0.
  Tensor ignored = full({5}, int64_t{-100}, kInt64);
  EXPECT_TRUE(std::isnan(cross_entropy(x, ignored).item<double>()));
}

TEST(Loss, CrossEntropyErrors) {
  Tensor x = random_input({4, 5});
  Tensor t = tensor({0, 1, 2, 3}, kInt64);
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(x, tensor({0, 7, 1, 2}, kInt64));
      },
      {"cross_entropy", "target 7", "out of bounds", "C = 5"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(x, tensor({0, -3, 1, 2}, kInt64));
      },
      {"target -3", "C = 5"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(random_input({2, 3, 4}), tensor({0, 7, 1, 2}, kInt64));
      },
      {"batch_size (2)", "(4)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(x, tensor({0, 1, 2}, kInt64));
      },
      {"batch_size (4)", "(3)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(random_input({2, 3, 4}), random_classes({2, 5}, 3));
      },
      {"target size [2, 4]", "[2, 5]"}));
  EXPECT_TRUE(throws_error([&] { cross_entropy(x, t, {.weight = ones({4})}); },
                           {"weight", "5 classes", "[4]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(x, rand({4, 6}));
      },
      {"probabilit", "[4, 5]", "[4, 6]"}));
  EXPECT_THROW(cross_entropy(x, t.to(kInt32)), TypeError);
  EXPECT_TRUE(throws_error([&] { cross_entropy(x, t.to(kInt32)); }, {"int32", "int64"}));
  EXPECT_THROW(cross_entropy(x, zeros({4, 5}, kInt64)), TypeError);
  EXPECT_TRUE(throws_error(
      [&] {
        cross_entropy(x, rand({4, 5}), {.ignore_index = 1});
      },
      {"ignore_index"}));
  EXPECT_TRUE(throws_error([&] { cross_entropy(x, t, {.label_smoothing = 1.5}); },
                           {"label_smoothing", "1.5"}));
}

TEST(Loss, NllLossAndTotalWeight) {
  Tensor lp = log_softmax(random_input({6, 4}, kFloat64), 1);
  Tensor t = tensor({0, 3, -100, 1, 2, 3}, kInt64);
  const std::vector<double> w = {0.5, 1.0, 2.0, 4.0};
  Tensor wt = from_vector(w, {4}, kFloat64);
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(nll_loss(lp, t, {.weight = wt, .reduction = r}),
                          ref_cross_entropy(lp, t, w, -100, r, 0, true), 1e-12, 1e-12));
  }
  const auto& fwd = ops::OpRegistry::instance().get("nll_loss_forward");
  auto outs = ops::call(fwd, {lp, t, wt, int64_t{1}, int64_t{-100}});
  EXPECT_DOUBLE_EQ(outs[1].item<double>(), 0.5 + 4.0 + 1.0 + 2.0 + 4.0);
  auto none = ops::call(fwd, {lp, t, wt, int64_t{0}, int64_t{-100}});
  EXPECT_EQ(none[0].dim(), 1);
  EXPECT_EQ(none[1].item<double>(), 0.0);
  // nll_loss2d over (N, C, H, W).
  Tensor lp4 = log_softmax(random_input({2, 3, 2, 2}, kFloat32), 1);
  Tensor t4 = random_classes({2, 2, 2}, 3);
  const auto& nll2d = ops::OpRegistry::instance().get("nll_loss2d");
  EXPECT_TRUE(all_close(ops::call1(nll2d, {lp4, t4}),
                        ref_cross_entropy(lp4, t4, {}, -100, Reduction::Mean, 0, true), 1e-5,
                        1e-6));
  EXPECT_TRUE(throws_error(
      [&] {
        ops::call(fwd, {lp, t, wt, int64_t{5}, int64_t{-100}});
      },
      {"reduction", "5"}));
  EXPECT_THROW(nll_loss(lp, t, {.weight = wt.to(kFloat32)}), TypeError);
}

// Elementwise losses: reference values of f(input - target) per element, reduced.
template <typename F>
Tensor ref_pointwise(const Tensor& a, const Tensor& b, Reduction r, F f) {
  const DimVector shape((a + b).sizes());  // the broadcast shape
  const auto va = a.expand(shape).tolist<double>(), vb = b.expand(shape).tolist<double>();
  std::vector<double> out;
  double total = 0.0;
  for (size_t i = 0; i < va.size(); ++i) {
    out.push_back(f(va[i], vb[i]));
    total += out.back();
  }
  if (r == Reduction::Sum) return scalar_tensor(total, kFloat64);
  if (r == Reduction::Mean) return scalar_tensor(total / static_cast<double>(out.size()), kFloat64);
  return from_vector(out, shape, kFloat64);
}

TEST(Loss, RegressionLossesMatchFormulas) {
  Tensor a = random_input({4, 9}, kFloat32, 2.0, 1);
  Tensor b = random_input({9}, kFloat32, 2.0, 2);  // broadcast along rows
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(
        mse_loss(a, b, r),
        ref_pointwise(a, b, r, [](double x, double y) { return (x - y) * (x - y); }), 1e-5, 1e-5));
    EXPECT_TRUE(all_close(
        l1_loss(a, b, r),
        ref_pointwise(a, b, r, [](double x, double y) { return std::abs(x - y); }), 1e-5, 1e-5));
    for (double beta : {1.0, 0.5, 0.0}) {
      auto f = [beta](double x, double y) {
        const double d = std::abs(x - y);
        return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
      };
      EXPECT_TRUE(all_close(smooth_l1_loss(a, b, {.reduction = r, .beta = beta}),
                            ref_pointwise(a, b, r, f), 1e-5, 1e-5))
          << beta;
    }
    for (double delta : {1.0, 0.3, 2.5}) {
      auto f = [delta](double x, double y) {
        const double d = std::abs(x - y);
        return d < delta ? 0.5 * d * d : delta * (d - 0.5 * delta);
      };
      EXPECT_TRUE(all_close(huber_loss(a, b, {.reduction = r, .delta = delta}),
                            ref_pointwise(a, b, r, f), 1e-5, 1e-5))
          << delta;
    }
  }
  // Strings for the reduction, float64 promotion, strided inputs and empty inputs.
  EXPECT_EQ(mse_loss(a, b.to(kFloat64), "sum").dtype(), kFloat64);
  EXPECT_TRUE(all_close(mse_loss(a, b, "sum"), mse_loss(a, b, Reduction::Sum), 0.0, 0.0));
  Tensor at = random_input({9, 4}).t();
  EXPECT_TRUE(all_close(
      l1_loss(at, a, "none"),
      ref_pointwise(at, a, Reduction::None, [](double x, double y) { return std::abs(x - y); }),
      1e-6, 1e-6));
  EXPECT_TRUE(std::isnan(mse_loss(zeros({0}), zeros({0})).item<double>()));
  EXPECT_EQ(huber_loss(zeros({0}), zeros({0}), {.reduction = "sum"}).item<double>(), 0.0);
  EXPECT_TRUE(throws_error([&] { mse_loss(a, random_input({5})); }, {"mse_loss", "9", "5"}));
  EXPECT_TRUE(throws_error([&] { mse_loss(a, b, "average"); }, {"none", "mean", "sum", "average"}));
  EXPECT_TRUE(throws_error([&] { smooth_l1_loss(a, b, {.beta = -1.0}); }, {"beta", "-1"}));
  EXPECT_THROW(mse_loss(ones({3}, kInt64), ones({3}, kInt64)), TypeError);
}

TEST(Loss, BinaryCrossEntropyClampsLogs) {
  Tensor x = tensor({{0.0, 1.0, 0.3}, {0.9, 0.5, 1e-30}}, kFloat64);
  Tensor y = tensor({{1.0, 0.0, 0.2}, {1.0, 0.0, 0.7}}, kFloat64);
  auto f = [](double p, double t) {
    return -(t * std::max(std::log(p), -100.0) + (1 - t) * std::max(std::log1p(-p), -100.0));
  };
  for (Reduction r : kReductions) {
    EXPECT_TRUE(all_close(binary_cross_entropy(x, y, {.reduction = r}), ref_pointwise(x, y, r, f),
                          1e-12, 1e-12));
  }
  // log(0) is clamped to -100: a confident wrong answer costs exactly 100.
  EXPECT_EQ(binary_cross_entropy(tensor({0.0}, kFloat32), tensor({1.0}, kFloat32)).item<double>(),
            100.0);
  Tensor w = tensor({0.5, 2.0, 1.0}, kFloat64);
  Tensor weighted = binary_cross_entropy(x, y, {.weight = w, .reduction = "none"});
  EXPECT_TRUE(all_close(weighted, ref_pointwise(x, y, Reduction::None, f) * w, 1e-12, 1e-12));
  EXPECT_TRUE(throws_error([&] { binary_cross_entropy(x * 2.0, y); },
                           {"binary_cross_entropy", "between 0 and 1", "2"}));
  EXPECT_TRUE(
      throws_error([&] { binary_cross_entropy(x, y - 1.0); }, {"target", "between 0 and 1"}));
  EXPECT_TRUE(throws_error([&] { binary_cross_entropy(x, y.view({-1})); }, {"[6]", "[2, 3]"}));
}

TEST(Loss, BinaryCrossEntropyWithLogitsIsStable) {
  Tensor x = tensor({{-100.0, 100.0, -3.0}, {1000.0, -1000.0, 0.5}}, kFloat32);
  Tensor y = tensor({{1.0, 0.0, 0.25}, {1.0, 0.0, 1.0}}, kFloat32);
  Tensor pw = tensor({2.0, 0.5, 3.0}, kFloat32);
  Tensor w = tensor({{1.0, 2.0, 0.5}, {1.0, 1.0, 1.0}}, kFloat32);
  // loss = -w (pw y log(sigmoid(x)) + (1 - y) log(1 - sigmoid(x))), logs of sigmoid in a stable
  // form: log(sigmoid(x)) = -log1p(exp(-x)) for x > 0, x - log1p(exp(x)) otherwise.
  auto log_sigmoid = [](double v) {
    return v > 0 ? -std::log1p(std::exp(-v)) : v - std::log1p(std::exp(v));
  };
  const auto xv = x.tolist<double>(), yv = y.tolist<double>(), wv = w.tolist<double>();
  std::vector<double> expected;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double p = pw.tolist<double>()[i % 3];
    expected.push_back(-wv[i] *
                       (p * yv[i] * log_sigmoid(xv[i]) + (1 - yv[i]) * log_sigmoid(-xv[i])));
  }
  Tensor got =
      binary_cross_entropy_with_logits(x, y, {.weight = w, .pos_weight = pw, .reduction = "none"});
  EXPECT_TRUE(got.isfinite().all().item<bool>());
  EXPECT_TRUE(all_close(got, from_vector(expected, {2, 3}, kFloat64), 1e-5, 1e-5));
  EXPECT_NEAR(
      binary_cross_entropy_with_logits(x, y, {.weight = w, .pos_weight = pw}).item<double>(),
      std::accumulate(expected.begin(), expected.end(), 0.0) / 6.0, 1e-3);
}

TEST(Loss, KlDiv) {
  Tensor lp = log_softmax(random_input({3, 4}, kFloat64), 1);
  Tensor positive = softmax(random_input({3, 4}, kFloat64, 1.0, 8), 1);
  Tensor p = positive.clone();
  p.select(0, 0).select(0, 1).fill_(0.0);  // xlogy(0, 0) = 0
  auto f = [](double x, double t) { return t == 0 ? 0.0 : t * (std::log(t) - x); };
  for (Reduction r : kReductions) {
    EXPECT_TRUE(
        all_close(kl_div(lp, p, {.reduction = r}), ref_pointwise(lp, p, r, f), 1e-12, 1e-12));
    EXPECT_TRUE(all_close(kl_div(lp, positive.log(), {.reduction = r, .log_target = true}),
                          ref_pointwise(lp, positive, r, f), 1e-12, 1e-12));
  }
}

TEST(Loss, ParseReduction) {
  EXPECT_EQ(parse_reduction("none"), Reduction::None);
  EXPECT_EQ(parse_reduction("mean"), Reduction::Mean);
  EXPECT_EQ(parse_reduction("sum"), Reduction::Sum);
  EXPECT_THROW(parse_reduction("Sum"), Error);
  ReductionArg r = "sum";
  EXPECT_EQ(static_cast<Reduction>(r), Reduction::Sum);
}

}  // namespace
}  // namespace kiln
