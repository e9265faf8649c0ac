// Extern epilogues: adds after mm, bmm and convolution folded into addmm, baddbmm and the
// convolution's bias, checked on the rewritten graphs and compiled against eager (forward, and
// gradients through compiled linear layers).
#include "capture/capture_test_util.h"
#include "inductor/extern_epilogue.h"
#include "inductor/freezing_test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::count_ops;
using testing::RecordedGraphs;
using testing::recording;

// The first recorded graph with its epilogues fused, and how many were.
std::pair<graph::Graph, size_t> fused_first(const RecordedGraphs& record) {
  EXPECT_FALSE(record.graphs.empty());
  graph::Graph g = record.graphs.at(0).clone();
  const size_t n = inductor::fuse_extern_epilogues(g);
  return {std::move(g), n};
}

TEST(InductorExternEpilogue, LinearBiasBecomesAddmm) {
  manual_seed(1);
  auto layer = std::make_shared<nn::Linear>(16, 8);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(layer, recording(record, {{"freezing", "false"}}));
  const Tensor x = randn({4, 16});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), layer->forward(x), 1e-5, 1e-6));
  const graph::Graph& before = record->graphs.at(0);
  EXPECT_EQ(count_ops(before, "mm"), 1u) << before.str();
  EXPECT_EQ(count_ops(before, "add"), 1u) << before.str();
  auto [after, fused] = fused_first(*record);
  EXPECT_EQ(fused, 1u);
  EXPECT_EQ(count_ops(after, "addmm"), 1u) << after.str();
  EXPECT_EQ(count_ops(after, "mm"), 0u) << after.str();
  EXPECT_EQ(count_ops(after, "add"), 0u) << after.str();
  // Run as rewritten (interpreted), it still computes the layer.
  const std::vector<Tensor> out =
      graph::interpret(after, std::vector<Tensor>{x, layer->weight, layer->bias});
  EXPECT_TRUE(all_close(out.at(0), layer->forward(x), 1e-5, 1e-6));
}

TEST(InductorExternEpilogue, GradientsThroughCompiledLinearLayersMatchEager) {
  manual_seed(2);
  auto eager = models::mlp({.in_features = 12, .hidden_features = {24, 16}, .out_features = 4});
  manual_seed(2);
  auto model = models::mlp({.in_features = 12, .hidden_features = {24, 16}, .out_features = 4});
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(model, recording(record));
  manual_seed(3);
  const Tensor x = randn({6, 12});
  for (int step = 0; step < 2; ++step) {
    eager->zero_grad();
    model->zero_grad();
    Tensor el = eager->forward(x).square().mean();
    el.backward();
    Tensor l = (*compiled)(x).square().mean();
    l.backward();
    EXPECT_TRUE(all_close(l, el, 1e-5, 1e-7));
    const auto p = model->parameters(), q = eager->parameters();
    ASSERT_EQ(p.size(), q.size());
    for (size_t i = 0; i < p.size(); ++i) {
      ASSERT_TRUE(p[i].grad().defined()) << i;
      EXPECT_TRUE(all_close(p[i].grad(), q[i].grad(), 1e-5, 1e-6)) << "param " << i;
    }
  }
  // In the training forward the min-cut partitioner saves the hidden layers' products for the
  // backward (which recomputes bias + GELU from them): those stay mm + add. The last layer's
  // product has no other reader and becomes one addmm.
  auto [forward, fused] = fused_first(*record);
  EXPECT_EQ(fused, 1u) << record->graphs.at(0).str();
  EXPECT_EQ(count_ops(forward, "addmm"), 1u) << forward.str();
}

TEST(InductorExternEpilogue, AProductWithAnotherReaderIsNotFused) {
  auto record = std::make_shared<RecordedGraphs>();
  auto f = compile(
      [](const Tensor& x, const Tensor& w, const Tensor& b) {
        const Tensor y = x.mm(w);
        return (y + b) * y;
      },
      recording(record));
  manual_seed(4);
  const Tensor x = randn({3, 5}), w = randn({5, 4}), b = randn({4});
  const Tensor y = x.mm(w);
  EXPECT_TRUE(all_close(f(x, w, b), (y + b) * y, 1e-5, 1e-6));
  auto [after, fused] = fused_first(*record);
  EXPECT_EQ(fused, 0u) << after.str();
  EXPECT_EQ(count_ops(after, "mm"), 1u);
}

TEST(InductorExternEpilogue, BmmPlusBiasBecomesBaddbmm) {
  auto record = std::make_shared<RecordedGraphs>();
  auto f = compile([](const Tensor& a, const Tensor& b, const Tensor& c) { return c + a.bmm(b); },
                   recording(record));
  manual_seed(5);
  const Tensor a = randn({2, 3, 5}), b = randn({2, 5, 4}), c = randn({4});
  EXPECT_TRUE(all_close(f(a, b, c), a.bmm(b) + c, 1e-5, 1e-6));
  auto [after, fused] = fused_first(*record);
  EXPECT_EQ(fused, 1u);
  EXPECT_EQ(count_ops(after, "baddbmm"), 1u) << after.str();
  EXPECT_EQ(count_ops(after, "bmm"), 0u) << after.str();
}

TEST(InductorExternEpilogue, ScaledAddmmKeepsItsScaledAddend) {
  auto record = std::make_shared<RecordedGraphs>();
  auto f =
      compile([](const Tensor& b, const Tensor& x, const Tensor& w) { return addmm(b, x, w, 0.5); },
              recording(record));
  manual_seed(6);
  const Tensor b = randn({4}), x = randn({3, 5}), w = randn({5, 4});
  EXPECT_TRUE(all_close(f(b, x, w), addmm(b, x, w, 0.5), 1e-5, 1e-6));
  auto [after, fused] = fused_first(*record);
  EXPECT_EQ(fused, 1u) << record->graphs.at(0).str();
  EXPECT_EQ(count_ops(after, "addmm"), 1u) << after.str();
  EXPECT_EQ(count_ops(after, "mul"), 1u) << after.str();
}

TEST(InductorExternEpilogue, ConvolutionTakesAPerChannelAddAsItsBias) {
  auto record = std::make_shared<RecordedGraphs>();
  auto f = compile(
      [](const Tensor& x, const Tensor& w, const Tensor& b) {
        return conv2d(x, w, {}, 1, 1) + b.view({1, -1, 1, 1});
      },
      recording(record));
  manual_seed(7);
  const Tensor x = randn({2, 3, 6, 6}), w = randn({5, 3, 3, 3}), b = randn({5});
  EXPECT_TRUE(all_close(f(x, w, b), conv2d(x, w, b, 1, 1), 1e-5, 1e-5));
  auto [after, fused] = fused_first(*record);
  EXPECT_EQ(fused, 1u) << record->graphs.at(0).str();
  EXPECT_EQ(count_ops(after, "convolution"), 1u) << after.str();
  EXPECT_EQ(count_ops(after, "add"), 0u) << after.str();
}

}  // namespace
}  // namespace kiln
