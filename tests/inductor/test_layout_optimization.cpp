// Layout optimization under inference freezing: convolution nets run on channels-last activations
// inside (checked on the frozen graphs), compiled against eager in float64, outputs in eager's
// layouts, a flattened feature map, and the option that turns it off.
#include "capture/capture_test_util.h"
#include "inductor/freezing.h"
#include "inductor/freezing_test_util.h"

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

}  // namespace
}  // namespace kiln
