// Max pooling whose indices nothing reads runs as _max_pool2d_values (values only): inference
// graphs get it, training graphs (which save the indices for the backward) keep the op with
// indices; compiled results match eager either way, planes and channels-last layouts.
#include "capture/capture_test_util.h"
#include "inductor/freezing_test_util.h"
#include "inductor/unread_pool_indices.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::count_ops;
using testing::RecordedGraphs;
using testing::recording;

std::shared_ptr<nn::Sequential> conv_pool() {
  auto conv = std::make_shared<nn::Conv2d>(3, 8, std::vector<int64_t>{3});
  auto pool = std::make_shared<nn::MaxPool2d>(std::vector<int64_t>{3}, std::vector<int64_t>{2},
                                              std::vector<int64_t>{1});
  return std::make_shared<nn::Sequential>(conv, std::make_shared<nn::ReLU>(), pool);
}

TEST(InductorUnreadPoolIndices, InferenceWritesValuesOnlyAndMatchesEager) {
  for (bool channels_last : {false, true}) {
    SCOPED_TRACE(channels_last ? "channels-last" : "planes");
    manual_seed(3);
    auto model = conv_pool();
    model->eval();
    auto record = std::make_shared<RecordedGraphs>();
    auto compiled = compile(model, recording(record));
    Tensor x = randn({2, 3, 13, 11});
    if (channels_last) x = x.contiguous(MemoryFormat::ChannelsLast);
    autograd::NoGradGuard no_grad;
    const Tensor want = model->forward(x);
    const Tensor got = (*compiled)(x);
    EXPECT_TRUE(all_close(got, want, 1e-5, 1e-6));
    ASSERT_EQ(record->graphs.size(), 1u);
    graph::Graph g = record->graphs[0].clone();
    ASSERT_EQ(count_ops(g, "max_pool2d_with_indices"), 1u) << g.str();
    EXPECT_EQ(inductor::drop_unread_pool_indices(g), 1u);
    EXPECT_EQ(count_ops(g, "max_pool2d_with_indices"), 0u) << g.str();
    EXPECT_EQ(count_ops(g, "_max_pool2d_values"), 1u) << g.str();
    // The values keep the layout the indices' op gave them.
    const graph::Graph& before = record->graphs[0];
    EXPECT_EQ(g.outputs()[0].meta(), before.outputs()[0].meta());
  }
}

TEST(InductorUnreadPoolIndices, TrainingKeepsTheIndicesForTheBackward) {
  manual_seed(4);
  auto model = conv_pool(), reference = conv_pool();
  manual_seed(4);
  reference = conv_pool();
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(model, recording(record));
  const Tensor x = randn({2, 3, 13, 11});
  (*compiled)(x).square().sum().backward();
  reference->forward(x).square().sum().backward();
  ASSERT_EQ(record->graphs.size(), 2u);
  graph::Graph forward = record->graphs[0].clone();
  EXPECT_EQ(inductor::drop_unread_pool_indices(forward), 0u) << forward.str();
  const auto want = reference->named_parameters();
  for (const auto& [name, p] : model->named_parameters()) {
    EXPECT_TRUE(all_close(p.grad(), want.at(name).grad(), 1e-4, 1e-5)) << name;
  }
}

// The values-only op against the op with indices, eagerly: every max pooling sample.
TEST(InductorUnreadPoolIndices, ValuesOnlyOpGivesTheValuesOfTheOpWithIndices) {
  const ops::OpDef& with = ops::OpRegistry::instance().get("max_pool2d_with_indices");
  const ops::OpDef& values = ops::OpRegistry::instance().get("_max_pool2d_values");
  for (const ops::Sample& s : values.samples()) {
    SCOPED_TRACE(s.description);
    const Tensor want = ops::call(with, s.args)[0];
    const Tensor got = ops::call1(values, s.args);
    EXPECT_TRUE(all_close(got, want, 0, 0));
    EXPECT_EQ(got.strides(), want.strides());
  }
}

}  // namespace
}  // namespace kiln
