// Inference freezing: batch norm folded into the preceding convolution, constant folding over
// parameters and buffers (checked on the frozen graphs), compiled against eager, parameters
// changed between calls (in place, copy_ of new weights), and freezing turned off.
#include "capture/capture_test_util.h"
#include "inductor/freezing.h"
#include "inductor/freezing_test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::count_ops;
using testing::LogCapture;
using testing::RecordedGraphs;
using testing::recording;

// Conv (no bias) + BatchNorm2d + ReLU in eval mode, with running statistics away from 0 and 1.
std::shared_ptr<nn::Sequential> conv_bn_relu(DType dtype) {
  auto conv = std::make_shared<nn::Conv2d>(3, 6, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                           std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1,
                                           /*bias=*/false);
  auto bn = std::make_shared<nn::BatchNorm2d>(6);
  auto block = std::make_shared<nn::Sequential>(conv, bn, std::make_shared<nn::ReLU>());
  block->to(dtype);
  autograd::NoGradGuard no_grad;
  bn->running_mean.copy_(randn({6}).to(dtype) * 0.3);
  bn->running_var.copy_(rand({6}).to(dtype) + 0.5);
  bn->weight.copy_(randn({6}).to(dtype));
  bn->bias.copy_(randn({6}).to(dtype));
  block->eval();
  return block;
}

TEST(InductorFreezing, ConvBatchNormReluFoldsIntoOneConvolution) {
  manual_seed(1);
  auto block = conv_bn_relu(kFloat64);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(block, recording(record));
  const Tensor x = randn({2, 3, 8, 8}).to(kFloat64);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), 1e-10, 1e-10));

  ASSERT_EQ(record->graphs.size(), 1u);
  const graph::Graph& inference = record->graphs[0];
  EXPECT_EQ(count_ops(inference, "rsqrt"), 1u) << inference.str();
  const inductor::ConstantSplit frozen = inductor::freeze(inference);
  // Main graph: the convolution with the folded weight and bias, then the ReLU; batch norm's
  // arithmetic went to the constant graph, which returns the folded weight and bias.
  EXPECT_EQ(count_ops(frozen.main, "convolution"), 1u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "mul"), 0u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "add"), 0u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "rsqrt"), 0u) << frozen.main.str();
  EXPECT_EQ(frozen.num_folded(), 2u) << frozen.constants.str();
  EXPECT_EQ(count_ops(frozen.constants, "rsqrt"), 1u) << frozen.constants.str();
  EXPECT_EQ(count_ops(frozen.constants, "convolution"), 0u) << frozen.constants.str();
  // The constant graph reads the conv weight, the four batch-norm tensors and eps (a captured
  // constant).
  EXPECT_EQ(frozen.constant_inputs.size(), 6u);
}

// Float64 convolutions run im2col + GEMM; float32 ones oneDNN on the packed weight.
void check_parameter_changes(DType dtype, double tol) {
  LogCapture logs("perf_hints");
  manual_seed(2);
  auto block = conv_bn_relu(dtype);
  auto compiled = compile(block, {.backend = std::string("inductor")});
  const Tensor x = randn({2, 3, 8, 8}).to(dtype);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  auto conv = std::dynamic_pointer_cast<nn::Conv2d>(block->children().at(0));
  auto bn = std::dynamic_pointer_cast<nn::BatchNorm2d>(block->children().at(1));
  ASSERT_TRUE(conv && bn);
  conv->weight.add_(1);  // in place
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  conv->weight.copy_(randn(conv->weight.sizes()).to(dtype));  // new weights loaded
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  bn->running_var.mul_(3);            // a buffer
  bn->weight.select(0, 2).fill_(-2);  // written through a view
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  // Unchanged parameters: the same result again, without folding again.
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), tol, tol));
  // One rerun per change: add_, copy_, then the two buffer/view writes together.
  EXPECT_EQ(logs.count("runs again"), 3u) << logs.all();
}

TEST(InductorFreezing, ParametersChangedAfterTheFirstCallGiveTheNewResult) {
  check_parameter_changes(kFloat64, 1e-10);
}

TEST(InductorFreezing, ParametersChangedUnderAPackedWeightGiveTheNewResult) {
  auto record = std::make_shared<RecordedGraphs>();
  manual_seed(2);
  auto block = conv_bn_relu(kFloat32);
  auto compiled = compile(block, recording(record));
  autograd::NoGradGuard no_grad;
  (*compiled)(randn({2, 3, 8, 8}));
  ASSERT_EQ(record->graphs.size(), 1u);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  EXPECT_EQ(count_ops(frozen.main, "_convolution_packed"), 1u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.constants, "_pack_convolution_weight"), 1u);
  check_parameter_changes(kFloat32, 1e-5);
}

TEST(InductorFreezing, APackedWeightGivesTheConvolutionsResultAndAStaleOneIsIgnored) {
  manual_seed(9);
  const Tensor x = randn({2, 64, 14, 14}), w = randn({64, 64, 3, 3}) * 0.1, b = randn({64});
  const auto& pack = ops::OpRegistry::instance().get("_pack_convolution_weight");
  const auto& packed_conv = ops::OpRegistry::instance().get("_convolution_packed");
  const std::vector<int64_t> one = {1, 1};
  Tensor packed = ops::call1(pack, {w, x.sizes().vec(), true, one, one, one, int64_t{1}});
  ASSERT_GT(packed.numel(), w.numel() * 4) << "oneDNN reads this weight blocked";
  auto run = [&](const Tensor& p) {
    return ops::call1(packed_conv, {x, w, p, b, one, one, one, int64_t{1}});
  };
  const Tensor want = conv2d(x, w, b, 1, 1);
  EXPECT_TRUE(all_close(run(packed), want, 1e-5, 1e-5));
  // A packed copy of other values is used as it is (the freezing runtime keeps it current)...
  Tensor other = ops::call1(pack, {w * 2, x.sizes().vec(), true, one, one, one, int64_t{1}});
  EXPECT_FALSE(all_close(run(other), want, 1e-5, 1e-5));
  // ...but one whose layout header matches no primitive is ignored: the weight is reordered.
  other.zero_();
  EXPECT_TRUE(all_close(run(other), want, 1e-5, 1e-5));
}

TEST(InductorFreezing, TheConstantGraphRunsAgainOnlyWhenAParameterChanged) {
  manual_seed(3);
  auto block = conv_bn_relu(kFloat32);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(block, recording(record));
  const Tensor x = randn({1, 3, 6, 6});
  autograd::NoGradGuard no_grad;
  (*compiled)(x);
  ASSERT_EQ(record->graphs.size(), 1u);
  // The same frozen runtime, driven directly with the module's tensors.
  inductor::FrozenGraph frozen(inductor::freeze(record->graphs[0]));
  // The inputs aot passed: x, then the module's own parameter and buffer tensors.
  std::vector<Tensor> inputs = record->examples.at(0);
  const std::vector<Tensor> first = frozen.folded(inputs);
  frozen.folded(inputs);
  EXPECT_EQ(frozen.constant_runs(), 1u);
  block->parameters().at(0).add_(0.5);
  const std::vector<Tensor> second = frozen.folded(inputs);
  EXPECT_EQ(frozen.constant_runs(), 2u);
  EXPECT_FALSE(all_close(first.at(0), second.at(0)));
  // Another tensor in a parameter's place (same values) counts as a change too.
  inputs[1] = inputs[1].clone();
  frozen.folded(inputs);
  EXPECT_EQ(frozen.constant_runs(), 3u);
}

TEST(InductorFreezing, CapturedTensorsFoldAndReturnedValuesAreNewOnEachCall) {
  LogCapture logs("aot_graphs");
  manual_seed(8);
  Tensor w = randn({2, 3});
  auto f =
      compile([&w](const Tensor& x) { return std::make_tuple(x * w.exp(), w.sin().view({-1})); },
              {.backend = std::string("inductor")});
  const Tensor x = randn({2, 3});
  autograd::NoGradGuard no_grad;
  auto [y, e] = f(x);
  EXPECT_TRUE(all_close(y, x * w.exp()));
  EXPECT_TRUE(all_close(e, w.sin().view({-1})));
  e.fill_(0);  // the caller's tensor, not a kept folded value
  w.add_(1);   // a captured tensor changed in place
  auto [y2, e2] = f(x);
  EXPECT_TRUE(all_close(y2, x * w.exp()));
  EXPECT_TRUE(all_close(e2, w.sin().view({-1})));
  EXPECT_EQ(logs.count("frozen "), 1u) << logs.all();  // exp(w) for the product was folded
}

TEST(InductorFreezing, FreezingOffCompilesTheGraphAsItIs) {
  manual_seed(4);
  auto block = conv_bn_relu(kFloat32);
  const Tensor x = randn({2, 3, 8, 8});
  autograd::NoGradGuard no_grad;
  {
    LogCapture logs("aot_graphs");
    auto compiled = compile(block, {.backend = std::string("inductor")});
    EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), 1e-5, 1e-5));
    EXPECT_EQ(logs.count("frozen "), 1u) << logs.all();
  }
  {
    LogCapture logs("aot_graphs");
    auto compiled =
        compile(block, {.backend = std::string("inductor"), .options = {{"freezing", "false"}}});
    EXPECT_TRUE(all_close((*compiled)(x), block->forward(x), 1e-5, 1e-5));
    EXPECT_EQ(logs.count("frozen "), 0u) << logs.all();
    EXPECT_EQ(logs.count("rsqrt"), 1u) << logs.all();
  }
}

TEST(InductorFreezing, BatchNormInTrainingModeWithoutGradStillUpdatesItsStatistics) {
  manual_seed(5);
  auto eager = std::make_shared<nn::BatchNorm2d>(3);
  auto bn = std::make_shared<nn::BatchNorm2d>(3);
  auto compiled = compile(bn, {.backend = std::string("inductor")});
  autograd::NoGradGuard no_grad;
  for (int step = 0; step < 3; ++step) {
    const Tensor x = randn({4, 3, 5, 5}) * (step + 1.0) + 0.5;
    EXPECT_TRUE(all_close((*compiled)(x), eager->forward(x), 1e-5, 1e-6)) << step;
    EXPECT_TRUE(all_close(bn->running_mean, eager->running_mean, 1e-5, 1e-7)) << step;
    EXPECT_TRUE(all_close(bn->running_var, eager->running_var, 1e-5, 1e-7)) << step;
  }
}

TEST(InductorFreezing, LinearAndBatchNorm1dInference) {
  manual_seed(6);
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(8, 5),
                                                std::make_shared<nn::BatchNorm1d>(5),
                                                std::make_shared<nn::Linear>(5, 3));
  model->eval();
  auto compiled = compile(model, {.backend = std::string("inductor")});
  const Tensor x = randn({4, 8});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), model->forward(x), 1e-5, 1e-6));
  model->parameters().back().add_(1);
  EXPECT_TRUE(all_close((*compiled)(x), model->forward(x), 1e-5, 1e-6));
}

TEST(InductorFreezing, ResNet18EvalInferenceMatchesEager) {
  LogCapture logs("perf_hints");
  manual_seed(7);
  auto model = models::resnet18(10);
  model->eval();
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(model, recording(record));
  const Tensor x = randn({2, 3, 64, 64});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), model->forward(x), 1e-4, 1e-4));
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  ASSERT_EQ(record->graphs.size(), 1u);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  // Every batch norm folded into its convolution: no per-channel arithmetic left but the
  // residual adds and the ReLUs.
  // Every convolution runs on channels-last activations (the input converted once, layout_
  // optimization's tests check the layouts) and reads its weight packed in the constant graph.
  EXPECT_EQ(count_ops(frozen.main, "_convolution_packed"), 20u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "convolution"), 0u);
  size_t layout_copies = 0;  // _to_copy without a dtype (the pool's index arithmetic casts)
  for (const auto& n : frozen.main.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->op->full_name() == "_to_copy") {
      layout_copies += n->args.at(1).is_none() ? 1 : 0;
    }
  }
  EXPECT_EQ(layout_copies, 1u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.constants, "_pack_convolution_weight"), 20u);
  EXPECT_EQ(count_ops(frozen.main, "rsqrt"), 0u) << frozen.main.str();
  for (const auto& n : frozen.main.nodes()) {
    if (n->kind != graph::NodeKind::Op) continue;
    const std::string name = n->op->full_name();
    if (name == "convolution") {
      EXPECT_EQ(n->uses.size(), 3u) << n->name << " has no bias";
    } else if (name == "_convolution_packed") {
      EXPECT_EQ(n->uses.size(), 4u) << n->name << " has no bias";
    }
  }
  EXPECT_EQ(count_ops(frozen.constants, "rsqrt"), 20u);
}

}  // namespace
}  // namespace kiln
