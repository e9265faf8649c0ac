// GradScaler against hand-computed values: the scaled loss, gradients divided back, the step
// skipped on inf/NaN, the scale's backoff and growth, and misuse raising.
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

// loss = sum(w * x) has gradient x; after an SGD step (lr 0.5) w = w0 - 0.5 x.
struct Problem {
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor x = tensor({0.5, -1.0, 4.0});
  optim::SGD opt{{w}, {.lr = 0.5}};
  Tensor loss() const { return (w * x).sum(); }
};

TEST(GradScaler, ScalesTheLossAndStepsWithTheTrueGradients) {
  Problem p;
  GradScaler scaler({.init_scale = 1024.0});
  const Tensor scaled = scaler.scale(p.loss());
  EXPECT_DOUBLE_EQ(scaled.item<double>(), 1024.0 * (0.5 - 2.0 + 12.0));
  scaled.backward();
  EXPECT_TRUE(all_close(p.w.grad(), p.x * 1024.0, 0, 0));
  EXPECT_TRUE(scaler.step(p.opt));
  EXPECT_TRUE(all_close(p.w.grad(), p.x, 0, 0));  // unscaled in place
  EXPECT_TRUE(all_close(p.w.detach(), tensor({0.75, 2.5, 1.0}), 0, 0));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1024.0);  // growth only after growth_interval clean steps
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST(GradScaler, SkipsTheStepOnInfOrNanAndBacksOff) {
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    Problem p;
    GradScaler scaler({.init_scale = 8.0});
    scaler.scale(p.loss()).backward();
    Tensor g = p.w.grad().select(0, 1);
    g.fill_(bad);
    EXPECT_FALSE(scaler.step(p.opt));
    EXPECT_TRUE(all_close(p.w.detach(), tensor({1.0, 2.0, 3.0}), 0, 0));  // unchanged
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 4.0);
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
}

TEST(GradScaler, GrowsAfterGrowthIntervalCleanSteps) {
  Problem p;
  GradScaler scaler({.init_scale = 2.0, .growth_factor = 3.0, .growth_interval = 2});
  for (double want : {2.0, 6.0, 6.0, 18.0}) {
    p.opt.zero_grad();
    scaler.scale(p.loss()).backward();
    scaler.step(p.opt);
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), want);
  }
}

TEST(GradScaler, UnscaleBeforeClippingThenStep) {
  Problem p;
  GradScaler scaler({.init_scale = 16.0});
  scaler.scale(p.loss()).backward();
  scaler.unscale_(p.opt);
  EXPECT_TRUE(all_close(p.w.grad(), p.x, 0, 0));
  optim::clip_grad_norm_({p.w}, 1.0);
  const Tensor clipped = p.w.grad().clone();
  EXPECT_TRUE(scaler.step(p.opt));  // does not unscale again
  EXPECT_TRUE(all_close(p.w.detach(), tensor({1.0, 2.0, 3.0}) - clipped * 0.5, 1e-6, 1e-6));
  EXPECT_TRUE(throws_error([&] { scaler.unscale_(p.opt); }, {"already called"}));
  scaler.update();
  scaler.unscale_(p.opt);  // allowed again after update()
}

TEST(GradScaler, MisuseRaisesAndDisabledIsANoOp) {
  EXPECT_TRUE(throws_error([] { GradScaler s({.init_scale = 0.0}); }, {"init_scale"}));
  EXPECT_TRUE(throws_error([] { GradScaler s({.backoff_factor = 1.5}); }, {"backoff_factor"}));
  GradScaler scaler;
  EXPECT_TRUE(throws_error([&] { scaler.update(); }, {"no unscale_() or step()"}));
  Problem p;
  GradScaler off({.enabled = false});
  const Tensor loss = p.loss();
  EXPECT_TRUE(off.scale(loss).is_same(loss));
  loss.backward();
  EXPECT_TRUE(off.step(p.opt));
  EXPECT_TRUE(all_close(p.w.detach(), tensor({0.75, 2.5, 1.0}), 0, 0));
  EXPECT_EQ(off.get_scale(), 1.0);
}

}  // namespace
}  // namespace kiln
