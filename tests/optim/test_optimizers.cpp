// Optimizers and schedulers against PyTorch: reference_values.inc holds torch.optim's results
// (written by make_reference_values.py) for every option combination that changes the update.
#include <kiln/kiln.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "test_util.h"

namespace kiln::optim {
namespace {

using kiln::testing::all_close;
using kiln::testing::throws_error;

struct OptimizerCase {
  const char* name;
  std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)> make;
  std::vector<std::vector<double>> params_after_step;  // one entry per step
};
struct SchedulerCase {
  const char* name;
  const char* optimizer;  // "SGD" (lr 0.2) or "Adam" (lr 0.2)
  std::function<std::unique_ptr<LRScheduler>(Optimizer&)> make;
  std::vector<double> lrs;        // after construction, then after each step
  std::vector<double> momentums;  // SGD's momentum or Adam's beta1 at the same points
};
struct ClipCase {
  double norm_type, max_norm, total_norm;
  std::vector<double> grad_a, grad_b;
};

#include "optim/reference_values.inc"

Tensor f32(const std::vector<double>& v, IntList shape) {
  return from_vector(v, shape).to(kFloat32);
}

Tensor make_param() {
  Tensor p = f32(kP0, {2, 3});
  p.requires_grad_(true);
  return p;
}

TEST(Optimizers, MatchPyTorchForEveryOptionCombination) {
  for (const auto& c : kOptimizerCases) {
    SCOPED_TRACE(c.name);
    Tensor p = make_param();
    auto opt = c.make({p});
    for (size_t s = 0; s < kGrads.size(); ++s) {
      p.mutable_grad() = f32(kGrads[s], {2, 3});
      opt->step();
      EXPECT_TRUE(all_close(p, f32(c.params_after_step[s], {2, 3}), 1e-5, 1e-6)) << "step " << s;
    }
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
}

TEST(Optimizers, SinglePassUpdatesEqualTheirElementwiseOps) {
  // A dense float32 parameter takes Adam's, AdamW's and SGD-with-momentum's one-pass kernels
  // (vector lanes and a scalar tail); the same values in a transposed layout take the
  // elementwise ops one by one. Every option combination must give the very same bits,
  // parameters and optimizer state.
  for (const auto& c : kOptimizerCases) {
    const std::string name = c.name;
    if (name.rfind("Adam", 0) != 0 && name.rfind("SGD", 0) != 0) continue;
    SCOPED_TRACE(name);
    manual_seed(4);
    const Tensor start = randn({37, 29});
    Tensor dense = start.clone().requires_grad_(true);
    Tensor strided = start.t().contiguous().t().requires_grad_(true);
    ASSERT_FALSE(strided.is_contiguous());
    auto fused = c.make({dense}), elementwise = c.make({strided});
    for (int step = 0; step < 3; ++step) {
      const Tensor g = randn({37, 29});
      dense.mutable_grad() = g.clone();
      strided.mutable_grad() = g.t().contiguous().t();
      fused->step();
      elementwise->step();
      EXPECT_TRUE(all_close(dense, strided, 0, 0)) << "step " << step;
    }
    const OptimizerState a = fused->state_dict(), b = elementwise->state_dict();
    if (!a.state.empty()) {
      for (const auto& [key, value] : a.state.at(0)) {
        if (value.dim() == 0) continue;  // the step count
        EXPECT_TRUE(all_close(value, b.state.at(0).at(key), 0, 0)) << key;
      }
    }
    EXPECT_FALSE(all_close(dense, start, 1e-3, 0)) << "the parameter moved";
  }
}

TEST(Optimizers, StateDictRoundTripContinuesLikePyTorch) {
  // Two steps, a state dict, a fresh optimizer loading it, the third step: PyTorch's values.
  for (const auto& c : kOptimizerCases) {
    SCOPED_TRACE(c.name);
    Tensor p = make_param();
    auto opt = c.make({p});
    for (size_t s = 0; s < 2; ++s) {
      p.mutable_grad() = f32(kGrads[s], {2, 3});
      opt->step();
    }
    OptimizerState saved = opt->state_dict();
    Tensor q = p.detach().clone();
    q.requires_grad_(true);
    auto fresh = c.make({q});
    fresh->load_state_dict(saved);
    q.mutable_grad() = f32(kGrads[2], {2, 3});
    fresh->step();
    EXPECT_TRUE(all_close(q, f32(c.params_after_step[2], {2, 3}), 1e-5, 1e-6));
  }
}

TEST(Optimizers, StateDictHasPyTorchsStructure) {
  Tensor a = make_param(), b = make_param();
  Adam adam({a, b}, AdamOptions{.lr = 0.1, .amsgrad = true});
  a.mutable_grad() = f32(kGrads[0], {2, 3});  // b has no grad: skipped, no state
  adam.step();
  adam.step();
  EXPECT_TRUE(all_close(b, f32(kP0, {2, 3}), 0, 0));
  OptimizerState s = adam.state_dict();
  ASSERT_EQ(s.state.size(), 1u);
  const auto& st = s.state.at(0);
  EXPECT_EQ(st.size(), 4u);
  EXPECT_EQ(st.at("step").dim(), 0);
  EXPECT_EQ(st.at("step").dtype(), kFloat32);
  EXPECT_EQ(st.at("step").item<double>(), 2.0);
  // exp_avg after two steps of the same gradient g: (1 - 0.9^2) g.
  EXPECT_TRUE(all_close(st.at("exp_avg"), f32(kGrads[0], {2, 3}) * 0.19, 1e-6, 1e-7));
  ASSERT_EQ(s.param_groups.size(), 1u);
  EXPECT_EQ(s.param_groups[0].params, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(std::get<double>(s.param_groups[0].options.at("lr")), 0.1);
  EXPECT_EQ(std::get<std::vector<double>>(s.param_groups[0].options.at("betas")),
            (std::vector<double>{0.9, 0.999}));
  EXPECT_TRUE(std::get<bool>(s.param_groups[0].options.at("amsgrad")));
  EXPECT_EQ(std::get<double>(s.param_groups[0].options.at("weight_decay")), 0.0);
}

TEST(Optimizers, LoadStateDictRejectsMismatchesAndChangesNothing) {
  Tensor a = make_param();
  SGD sgd({a}, SGDOptions{.lr = 0.1, .momentum = 0.9});
  a.mutable_grad() = f32(kGrads[0], {2, 3});
  sgd.step();
  OptimizerState s = sgd.state_dict();

  OptimizerState two_groups = s;
  two_groups.param_groups.push_back(s.param_groups[0]);
  EXPECT_TRUE(throws_error([&] { sgd.load_state_dict(two_groups); },
                           {"different number of parameter groups"}));
  OptimizerState wrong_size = s;
  wrong_size.param_groups[0].params.push_back(1);
  EXPECT_TRUE(throws_error([&] { sgd.load_state_dict(wrong_size); }, {"doesn't match the size"}));
  OptimizerState wrong_shape = s;
  wrong_shape.state[0]["momentum_buffer"] = zeros({3});
  wrong_shape.param_groups[0].options["lr"] = 0.5;
  EXPECT_TRUE(throws_error([&] { sgd.load_state_dict(wrong_shape); }, {"momentum_buffer", "[3]"}));
  EXPECT_EQ(sgd.lr(0), 0.1);  // unchanged by the failed load
  OptimizerState wrong_type = s;
  wrong_type.param_groups[0].options["nesterov"] = 1.0;
  EXPECT_TRUE(throws_error([&] { sgd.load_state_dict(wrong_type); }, {"nesterov", "bool"}));

  // A loaded state is a copy: stepping does not write into the caller's dict.
  Tensor before = s.state.at(0).at("momentum_buffer").clone();
  sgd.load_state_dict(s);
  sgd.step();
  EXPECT_TRUE(all_close(s.state.at(0).at("momentum_buffer"), before, 0, 0));
}

TEST(Optimizers, ParamGroupsHaveTheirOwnOptions) {
  // PyTorch: Adam([{"params": [a]}, {"params": [b], "lr": 0.5, "weight_decay": 0.1}], lr=0.1).
  Tensor a = tensor({1.0, -2.0}), b = tensor({0.5, 0.25, -1.0});
  a.requires_grad_(true);
  b.requires_grad_(true);
  Adam adam({{{a}, std::nullopt}, {{b}, AdamOptions{.lr = 0.5, .weight_decay = 0.1}}},
            AdamOptions{.lr = 0.1});
  ASSERT_EQ(adam.num_param_groups(), 2u);
  const std::vector<std::vector<double>> ga = {{0.3, -0.1}, {0.1, 0.2}},
                                         gb = {{0.2, 0.0, -0.4}, {-0.3, 0.5, 0.1}};
  for (size_t s = 0; s < 2; ++s) {
    a.mutable_grad() = f32(ga[s], {2});
    b.mutable_grad() = f32(gb[s], {3});
    adam.step();
  }
  EXPECT_TRUE(all_close(a, f32(kGroupsA, {2}), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(b, f32(kGroupsB, {3}), 1e-5, 1e-6));
  OptimizerState s = adam.state_dict();
  EXPECT_EQ(s.param_groups[1].params, (std::vector<int64_t>{1}));
  EXPECT_TRUE(all_close(s.state.at(1).at("exp_avg_sq"), f32(kGroupsBExpAvgSq, {3}), 1e-5, 1e-9));

  Tensor c = tensor({0.0});
  c.requires_grad_(true);
  adam.add_param_group({{c}, std::nullopt});
  EXPECT_EQ(adam.num_param_groups(), 3u);
  EXPECT_EQ(adam.options(2).lr, 0.1);
  EXPECT_TRUE(throws_error(
      [&] {
        adam.add_param_group({{a}, std::nullopt});
      },
      {"more than one parameter group"}));
}

TEST(Optimizers, RejectBadParametersAndOptions) {
  Tensor leaf = make_param();
  Tensor non_leaf = leaf * 2;
  EXPECT_TRUE(throws_error([&] { SGD({non_leaf}); }, {"SGD", "non-leaf"}));
  EXPECT_TRUE(throws_error([&] { SGD(std::vector<Tensor>{}); }, {"empty parameter list"}));
  EXPECT_TRUE(throws_error([&] { SGD({leaf, leaf}); }, {"more than one parameter group"}));
  EXPECT_TRUE(throws_error([&] { SGD({tensor({1, 2})}); }, {"floating point", "int64"}));
  EXPECT_TRUE(throws_error([&] { SGD({leaf}, SGDOptions{.lr = -1}); }, {"Invalid learning rate"}));
  EXPECT_TRUE(throws_error([&] { SGD({leaf}, SGDOptions{.nesterov = true}); }, {"Nesterov"}));
  EXPECT_TRUE(throws_error(
      [&] {
        Adam({leaf}, AdamOptions{.betas = {0.9, 1.0}});
      },
      {"Invalid beta parameter at index 1"}));
  EXPECT_TRUE(
      throws_error([&] { RMSprop({leaf}, RMSpropOptions{.eps = -1}); }, {"Invalid epsilon"}));
}

TEST(Optimizers, ZeroGradClearsOrZeroes) {
  Tensor a = make_param(), b = make_param();
  SGD sgd({a, b});
  a.mutable_grad() = f32(kGrads[0], {2, 3});
  sgd.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(a.grad().defined());
  EXPECT_TRUE(all_close(a.grad(), zeros({2, 3}), 0, 0));
  EXPECT_FALSE(b.grad().defined());
  sgd.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(Optimizers, TrainOnARealBackwardPass) {
  // Minimizes sum((w - t)^2) through autograd: w converges to t.
  Tensor w = zeros({3});
  w.requires_grad_(true);
  Tensor t = tensor({1.0, -2.0, 0.5});
  AdamW opt({w}, AdamWOptions{.lr = 0.1, .weight_decay = 0});
  for (int i = 0; i < 300; ++i) {
    opt.zero_grad();
    ((w - t) * (w - t)).sum().backward();
    opt.step();
  }
  EXPECT_TRUE(all_close(w.detach(), t, 1e-2, 1e-2));
}

TEST(LRSchedulers, MatchPyTorch) {
  for (const auto& c : kSchedulerCases) {
    SCOPED_TRACE(c.name);
    Tensor p = zeros({2});
    p.requires_grad_(true);
    std::unique_ptr<Optimizer> opt;
    if (std::string(c.optimizer) == "SGD") {
      opt = std::make_unique<SGD>(std::vector<Tensor>{p}, SGDOptions{.lr = 0.2});
    } else {
      opt = std::make_unique<Adam>(std::vector<Tensor>{p}, AdamOptions{.lr = 0.2});
    }
    auto sched = c.make(*opt);
    for (size_t s = 0; s < c.lrs.size(); ++s) {
      if (s > 0) {
        opt->step();
        sched->step();
      }
      ASSERT_EQ(sched->get_last_lr().size(), 1u);
      EXPECT_NEAR(sched->get_last_lr()[0], c.lrs[s], 1e-12 + 1e-12 * std::abs(c.lrs[s]))
          << "step " << s;
      EXPECT_EQ(opt->lr(0), sched->get_last_lr()[0]);
      EXPECT_NEAR(opt->momentum(0), c.momentums[s], 1e-12) << "step " << s;
      EXPECT_EQ(sched->last_epoch(), static_cast<int64_t>(s));
    }
  }
}

TEST(LRSchedulers, ChainAndRejectBadArguments) {
  // Two schedulers on one optimizer multiply (PyTorch's chainable form): StepLR halves every
  // 2 epochs, LambdaLR-free MultiStepLR scales by 0.1 at epoch 3.
  Tensor p = zeros({1});
  p.requires_grad_(true);
  SGD sgd({p}, SGDOptions{.lr = 1.0});
  StepLR a(sgd, 2, 0.5);
  MultiStepLR b(sgd, {3}, 0.1);
  const double expected[] = {1.0, 1.0, 0.5, 0.05, 0.025};
  EXPECT_DOUBLE_EQ(sgd.lr(0), expected[0]);
  for (int e = 1; e < 5; ++e) {
    a.step();
    b.step();
    EXPECT_NEAR(sgd.lr(0), expected[e], 1e-15) << "epoch " << e;
  }

  EXPECT_TRUE(throws_error([&] { OneCycleLR(sgd, 1.0, 0); }, {"total_steps"}));
  EXPECT_TRUE(
      throws_error([&] { OneCycleLR(sgd, 1.0, 5, OneCycleLROptions{.anneal_strategy = "x"}); },
                   {"anneal_strategy"}));
  EXPECT_TRUE(throws_error([&] { LinearLR(sgd, 0.0); }, {"Starting multiplicative factor"}));
  OneCycleLR one(sgd, 1.0, 3);
  for (int i = 0; i < 3; ++i) one.step();
  EXPECT_TRUE(throws_error([&] { one.step(); }, {"Tried to step 4 times", "total steps is 3"}));
}

TEST(LRSchedulers, ResumeFromStateDicts) {
  // CosineAnnealingLR(T_max=4, eta_min=0.01) from lr 0.2 (reference_values.inc): stop after
  // 3 steps, rebuild optimizer and scheduler, load both states, and continue with PyTorch's rates.
  const SchedulerCase* c = nullptr;
  for (const auto& k : kSchedulerCases)
    if (std::string(k.name) == "CosineAnnealingLR") c = &k;
  ASSERT_NE(c, nullptr);
  Tensor p = zeros({2});
  p.requires_grad_(true);
  SGD sgd({p}, SGDOptions{.lr = 0.2});
  CosineAnnealingLR sched(sgd, 4, 0.01);
  for (int i = 0; i < 3; ++i) sched.step();
  OptimizerState opt_state = sgd.state_dict();
  LRSchedulerState sched_state = sched.state_dict();

  SGD sgd2({p}, SGDOptions{.lr = 0.2});
  CosineAnnealingLR sched2(sgd2, 4, 0.01);
  sgd2.load_state_dict(opt_state);
  sched2.load_state_dict(sched_state);
  EXPECT_EQ(sched2.last_epoch(), 3);
  for (size_t s = 4; s < c->lrs.size(); ++s) {
    sched2.step();
    EXPECT_NEAR(sgd2.lr(0), c->lrs[s], 1e-12) << "step " << s;
  }
  EXPECT_TRUE(throws_error([&] { sched2.load_state_dict(LRSchedulerState{}); }, {"param groups"}));
}

TEST(ClipGrad, NormMatchesPyTorch) {
  for (const auto& c : kClipCases) {
    SCOPED_TRACE(c.norm_type);
    Tensor a = zeros({2, 2}), b = zeros({3}), unused = zeros({4});
    for (Tensor* t : {&a, &b, &unused}) t->requires_grad_(true);
    a.mutable_grad() = tensor({{0.3, -4.0}, {1.5, 2.0}});
    b.mutable_grad() = tensor({-0.5, 3.0, 0.25});
    Tensor total = clip_grad_norm_({a, b, unused}, c.max_norm, c.norm_type);
    EXPECT_EQ(total.dim(), 0);
    EXPECT_NEAR(total.item<double>(), c.total_norm, 1e-5 * c.total_norm);
    EXPECT_TRUE(all_close(a.grad(), f32(c.grad_a, {2, 2}), 1e-5, 1e-7));
    EXPECT_TRUE(all_close(b.grad(), f32(c.grad_b, {3}), 1e-5, 1e-7));
    EXPECT_FALSE(unused.grad().defined());
  }
}

TEST(ClipGrad, NonFiniteNormAndValueClipping) {
  Tensor a = zeros({2});
  a.requires_grad_(true);
  a.mutable_grad() = tensor({std::numeric_limits<double>::infinity(), 1.0});
  EXPECT_TRUE(throws_error([&] { clip_grad_norm_({a}, 1.0, 2.0, true); }, {"non-finite"}));
  EXPECT_TRUE(std::isinf(clip_grad_norm_({a}, 1.0).item<double>()));
  EXPECT_EQ(clip_grad_norm_({zeros({1})}, 1.0).item<double>(), 0.0);  // no grads: 0

  a.mutable_grad() = tensor({-3.0, 0.2});
  nn::utils::clip_grad_value_({a}, 0.5);
  EXPECT_TRUE(all_close(a.grad(), tensor({-0.5, 0.2}), 0, 0));
}

}  // namespace
}  // namespace kiln::optim
