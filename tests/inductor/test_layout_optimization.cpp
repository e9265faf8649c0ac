// Layout optimization: convolution nets run on channels-last activations inside, under inference
// freezing (checked on the frozen graphs, compiled against eager in float64, outputs in eager's
// layouts, a flattened feature map, the option that turns it off) and in training (the joint
// graph before partition: forward, saved activations and backward; steps against eager's).
#include "capture/capture_test_util.h"
#include "inductor/freezing.h"
#include "inductor/freezing_test_util.h"
#include "ops/cpu/capability.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::count_ops;
using testing::RecordedGraphs;
using testing::recording;

std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t kernel) {
  return std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{kernel},
                                      std::vector<int64_t>{1}, std::vector<int64_t>{kernel / 2});
}

// conv 3x3 + batch norm + ReLU, max pool, conv 1x1 + ReLU: a [N, 16, H/2, W/2] feature map.
std::shared_ptr<nn::Sequential> feature_net() {
  auto bn = std::make_shared<nn::BatchNorm2d>(8);
  auto net = std::make_shared<nn::Sequential>(conv(3, 8, 3), bn, std::make_shared<nn::ReLU>(),
                                              std::make_shared<nn::MaxPool2d>(2), conv(8, 16, 1),
                                              std::make_shared<nn::ReLU>());
  autograd::NoGradGuard no_grad;
  bn->running_mean.copy_(randn({8}) * 0.3);
  bn->running_var.copy_(rand({8}) + 0.5);
  net->eval();
  return net;
}

bool channels_last(const graph::ValueMeta& m) {
  DimVector sizes, strides;
  for (const SymInt& s : m.sizes) sizes.push_back(s.raw());
  for (const SymInt& s : m.strides) strides.push_back(s.raw());
  return sizes.size() == 4 &&
         strides == strides_for_memory_format(sizes, MemoryFormat::ChannelsLast);
}

// The model's result in float64 (an independent reference for the float32 compiled run).
Tensor float64_reference(const std::shared_ptr<nn::Module>& model, const Tensor& x) {
  model->to(kFloat64);
  Tensor want = model->forward(x.to(kFloat64));
  model->to(kFloat32);
  return want;
}

TEST(InductorLayoutOptimization, ConvolutionNetsRunOnChannelsLastActivationsInside) {
  manual_seed(4);
  auto net = feature_net();
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(net, recording(record));
  const Tensor x = randn({2, 3, 12, 12});
  autograd::NoGradGuard no_grad;
  const Tensor got = (*compiled)(x);
  EXPECT_EQ(got.sizes(), IntList({2, 16, 6, 6}));
  EXPECT_TRUE(got.is_contiguous()) << "the row-major layout eager code returns";
  EXPECT_TRUE(all_close(got.to(kFloat64), float64_reference(net, x), 1e-4, 1e-5));

  ASSERT_EQ(record->graphs.size(), 1u);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  // Both convolutions read and write channels-last, with weights packed for it (the 1x1 too);
  // the layout changes twice: the input, and the output back to row-major.
  size_t convolutions = 0;
  for (const auto& n : frozen.main.nodes()) {
    if (n->kind != graph::NodeKind::Op || n->op->full_name() != "_convolution_packed") continue;
    ++convolutions;
    EXPECT_TRUE(channels_last(n->outputs[0])) << n->name << ": " << n->outputs[0].str();
    EXPECT_TRUE(channels_last(n->uses.at(0).value.meta())) << n->name;
  }
  EXPECT_EQ(convolutions, 2u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "convolution"), 0u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "_to_copy"), 2u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.constants, "_pack_convolution_weight"), 2u);

  // Turned off: the convolutions keep the input's row-major layout.
  const inductor::ConstantSplit plain =
      inductor::freeze(record->graphs[0], {.prepack_weights = true, .channels_last = false});
  EXPECT_EQ(count_ops(plain.main, "_to_copy"), 0u) << plain.main.str();
  for (const auto& n : plain.main.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->op->full_name() == "convolution") {
      EXPECT_FALSE(channels_last(n->outputs[0])) << n->name;
    }
  }
  auto unoptimized = compile(
      net, recording(std::make_shared<RecordedGraphs>(), {{"layout_optimization", "false"}}));
  EXPECT_TRUE(all_close((*unoptimized)(x), got, 1e-5, 1e-6));
}

TEST(InductorLayoutOptimization, AFlattenedFeatureMapReadsItsRowMajorLayout) {
  // Flattening [N, C, H, W] to [N, C*H*W] is a view of row-major values only: the feature map
  // goes back to row-major for it, and the values are eager's.
  manual_seed(5);
  auto net = std::make_shared<nn::Sequential>(conv(3, 4, 3), std::make_shared<nn::ReLU>(),
                                              std::make_shared<nn::Flatten>(),
                                              std::make_shared<nn::Linear>(4 * 5 * 5, 3));
  net->eval();
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(net, recording(record));
  const Tensor x = randn({2, 3, 5, 5});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x).to(kFloat64), float64_reference(net, x), 1e-4, 1e-5));
  ASSERT_EQ(record->graphs.size(), 1u);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  EXPECT_EQ(count_ops(frozen.main, "_convolution_packed"), 1u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "_to_copy"), 2u) << frozen.main.str();
}

TEST(InductorLayoutOptimization, Float64ConvolutionsKeepTheirLayout) {
  manual_seed(6);
  auto net = feature_net();
  net->to(kFloat64);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(net, recording(record));
  const Tensor x = randn({1, 3, 8, 8}).to(kFloat64);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-10, 1e-10));
  ASSERT_EQ(record->graphs.size(), 1u);
  EXPECT_EQ(count_ops(inductor::freeze(record->graphs[0]).main, "_to_copy"), 0u);
}

// The training net: feature_net's layers with batch norm in training mode (its statistics and
// running averages), then a global average pool and a linear head, as a ResNet ends.
std::shared_ptr<nn::Sequential> training_net() {
  auto net = std::make_shared<nn::Sequential>(
      conv(3, 8, 3), std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), conv(8, 16, 1), std::make_shared<nn::BatchNorm2d>(16),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::AdaptiveAvgPool2d>(std::vector<int64_t>{1, 1}),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(16, 5));
  net->train();
  return net;
}

// A training step's joint graph goes channels-last before partition: the forward's convolutions
// read and write it, the backward's convolution gradients of the activations follow, and the
// activations saved between them are channels-last. Three SGD steps match eager's: losses,
// gradients (in the parameters' own layouts) and batch norm's running statistics.
// Unset, the option leaves CPU training steps row-major where the CPU lacks AVX-512 (oneDNN's
// NHWC kernels lost there) and converts them where it has it; "false" never converts.
TEST(InductorLayoutOptimization, TheDefaultFollowsTheCpu) {
  const bool avx512 = cpu::detected_capability() == cpu::Capability::AVX512;
  for (const char* option : {"", "false"}) {
    SCOPED_TRACE(option);
    manual_seed(8);
    auto model = training_net();
    std::map<std::string, std::string> options;
    if (*option != 0) options["layout_optimization"] = option;
    testing::LogCapture logs("fusion,perf_hints");
    auto compiled =
        compile(model, CompileOptions{.backend = std::string("inductor"), .options = options});
    (*compiled)(randn({2, 3, 12, 12})).sum().backward();
    const bool converted = logs.count("run channels-last") > 0;
    EXPECT_EQ(converted, avx512 && *option == 0) << logs.all();
    if (*option == 0 && !avx512) {
      EXPECT_EQ(logs.count("default on CPUs with AVX-512 only"), 1u) << logs.all();
    }
  }
}

TEST(InductorLayoutOptimization, TrainingStepsRunChannelsLastForwardAndBackward) {
  const Tensor x = [] {
    manual_seed(7);
    return randn({4, 3, 12, 12});
  }();
  manual_seed(8);
  auto eager = training_net();
  manual_seed(8);
  auto model = training_net();
  auto record = std::make_shared<RecordedGraphs>();
  // Forced: the default is channels-last on AVX-512 CPUs only (cpu_channels_last).
  auto compiled = compile(model, recording(record, {{"layout_optimization", "true"}}));
  optim::SGD eager_opt(eager->parameters(), {.lr = 0.05, .momentum = 0.9});
  optim::SGD opt(model->parameters(), {.lr = 0.05, .momentum = 0.9});
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step);
    eager_opt.zero_grad();
    Tensor eager_loss = eager->forward(x).square().mean();
    eager_loss.backward();
    opt.zero_grad();
    Tensor loss = (*compiled)(x).square().mean();
    loss.backward();
    EXPECT_TRUE(all_close(loss, eager_loss, 1e-4, 1e-6));
    const auto want = eager->named_parameters();
    for (const auto& [name, param] : model->named_parameters()) {
      ASSERT_TRUE(param.grad().defined()) << name;
      EXPECT_TRUE(param.grad().is_contiguous()) << name;
      EXPECT_TRUE(all_close(param.grad(), want.at(name).grad(), 1e-4, 1e-6)) << name;
    }
    eager_opt.step();
    opt.step();
    const auto buffers = eager->named_buffers();
    for (const auto& [name, buffer] : model->named_buffers()) {
      EXPECT_TRUE(all_close(buffer, buffers.at(name), 1e-4, 1e-6)) << name;
    }
  }

  ASSERT_EQ(record->graphs.size(), 2u);  // forward, backward
  const graph::Graph& forward = record->graphs[0];
  const graph::Graph& backward = record->graphs[1];
  size_t convolutions = 0, backward_convolutions = 0, saved_channels_last = 0;
  for (const auto& n : forward.nodes()) {
    if (n->kind != graph::NodeKind::Op || n->op->full_name() != "convolution") continue;
    ++convolutions;
    EXPECT_TRUE(channels_last(n->outputs[0])) << n->name << ": " << n->outputs[0].str();
  }
  for (const auto& n : backward.nodes()) {
    if (n->kind == graph::NodeKind::Input && channels_last(n->outputs[0])) ++saved_channels_last;
    if (n->kind != graph::NodeKind::Op || n->op->full_name() != "convolution_backward") continue;
    ++backward_convolutions;
    if (n->outputs[0].sizes.size() == 4) {
      EXPECT_TRUE(channels_last(n->outputs[0])) << n->name << ": " << n->outputs[0].str();
    }
  }
  EXPECT_EQ(convolutions, 2u) << forward.str();
  EXPECT_EQ(backward_convolutions, 2u) << backward.str();
  EXPECT_GE(saved_channels_last, 2u) << backward.str();

  // Turned off, the training graphs keep the input's row-major layout.
  auto plain_record = std::make_shared<RecordedGraphs>();
  manual_seed(8);
  auto plain = compile(training_net(), recording(plain_record, {{"layout_optimization", "false"}}));
  (*plain)(x).sum().backward();
  ASSERT_EQ(plain_record->graphs.size(), 2u);
  for (const auto& n : plain_record->graphs[0].nodes()) {
    if (n->kind == graph::NodeKind::Op && n->op->full_name() == "convolution") {
      EXPECT_FALSE(channels_last(n->outputs[0])) << n->name;
    }
  }
}

// A number the op layer wrapped into a tensor (the count that mean divides by) stays a number
// when the joint graph's nodes are derived again for channels-last: it was derived as a 0-dim
// float64 tensor, which made a training step's mean float64 and the compiled call raise.
TEST(InductorLayoutOptimization, WrappedNumbersKeepPromotingAsNumbers) {
  manual_seed(9);
  const Tensor x = randn({2, 3, 10, 10});
  const Tensor w = (randn({6, 3, 3, 3}) * 0.2).requires_grad_();
  auto step = [&w](const Tensor& input) {
    const Tensor y = conv2d(input, w, Tensor(), 1, 1);
    return (y * y).mean() / 3;
  };
  const Tensor want = step(x);
  const Tensor want_grad = autograd::grad({want}, {w})[0];
  testing::LogCapture logs("fusion");
  const Tensor got = compile(
      step, {.backend = std::string("inductor"), .options = {{"layout_optimization", "true"}}})(x);
  EXPECT_EQ(logs.count("convolutions and their backward run channels-last"), 1u) << logs.all();
  EXPECT_EQ(got.dtype(), kFloat32);
  EXPECT_TRUE(all_close(got, want, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(autograd::grad({got}, {w})[0], want_grad, 1e-4, 1e-6));
}

}  // namespace
}  // namespace kiln
