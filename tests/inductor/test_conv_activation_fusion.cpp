// ReLU after a convolution as the convolution's post-op under inference freezing: the rewrite on
// the frozen graphs, results against float64 eager, and the patterns it must leave alone (the
// convolution read elsewhere, a threshold other than zero).
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

// The activation arguments of the frozen main graph's packed convolutions.
std::vector<std::string> activations(const graph::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->op->full_name() == "_convolution_packed") {
      names.push_back(n->args.at(8).to_string());
    }
  }
  return names;
}

TEST(InductorConvActivation, ReluAfterAConvolutionIsItsPostOp) {
  manual_seed(8);
  const Tensor w = randn({8, 3, 3, 3}) * 0.3, b = randn({8}) * 0.1;
  auto body = [w, b](const Tensor& x) { return conv2d(x, w, b, 1, 1).relu(); };
  auto record = std::make_shared<RecordedGraphs>();
  auto f = compile(body, recording(record));
  const Tensor x = randn({2, 3, 9, 9});
  autograd::NoGradGuard no_grad;
  const Tensor got = f(x);
  const Tensor want = conv2d(x.to(kFloat64), w.to(kFloat64), b.to(kFloat64), 1, 1).relu();
  EXPECT_TRUE(all_close(got.to(kFloat64), want, 1e-5, 1e-6));
  EXPECT_GT((got == 0).sum().item<int64_t>(), 0) << "some outputs were clamped";
  ASSERT_EQ(record->graphs.size(), 1u);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  EXPECT_EQ(activations(frozen.main), std::vector<std::string>{"relu"}) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "where"), 0u) << frozen.main.str();
}

TEST(InductorConvActivation, AConvolutionReadElsewhereOrAnotherThresholdStaysApart) {
  manual_seed(9);
  const Tensor w = randn({4, 3, 3, 3}) * 0.3;
  auto both = [w](const Tensor& x) {
    const Tensor y = conv2d(x, w, {}, 1, 1);
    return y.relu() + y * 2;
  };
  auto shifted = [w](const Tensor& x) {
    const Tensor y = conv2d(x, w, {}, 1, 1);
    return where(y < 0, 1.0, y);  // not a ReLU: its zero-branch is 1
  };
  const Tensor x = randn({1, 3, 6, 6});
  autograd::NoGradGuard no_grad;
  for (auto body : {std::function<Tensor(const Tensor&)>(both),
                    std::function<Tensor(const Tensor&)>(shifted)}) {
    auto record = std::make_shared<RecordedGraphs>();
    auto f = compile(body, recording(record));
    EXPECT_TRUE(all_close(f(x), body(x), 1e-5, 1e-5));
    ASSERT_EQ(record->graphs.size(), 1u);
    const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
    EXPECT_EQ(activations(frozen.main), std::vector<std::string>{"none"}) << frozen.main.str();
  }
}

}  // namespace
}  // namespace kiln
