// Functionalization: in-place ops, out= ops, copy_ and writes through views become functional
// ops; writes into graph inputs become outputs applied after the graph runs; outputs that alias
// inputs alias them after compilation too.
#include "aot/aot_test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::GraphKeeper;
using testing::has_mutation;

CompileOptions aot_eager() { return {.backend = std::string("aot_eager")}; }

TEST(AotFunctionalize, InPlaceOpsOnIntermediatesBecomeFunctional) {
  GraphKeeper keeper;
  auto f = compile(
      [](const Tensor& x) {
        Tensor y = x * 2.0;
        y.add_(1.0);
        y.relu_();
        return y.exp();
      },
      {.backend = keeper.backend()});
  Tensor x = tensor({-1.0, 0.25, 2.0});
  EXPECT_TRUE(all_close(f(x), tensor({std::exp(0.0), std::exp(1.5), std::exp(5.0)})));
  ASSERT_TRUE(has_mutation(*keeper.graph));  // capture records the in-place ops as they are
  const aot::JointGraph joint = aot::trace_joint(*keeper.graph, /*training=*/false);
  EXPECT_FALSE(has_mutation(joint.graph)) << joint.graph.str();
  EXPECT_TRUE(joint.mutated_inputs.empty());
  const std::vector<Tensor> out = graph::interpret(joint.graph, *keeper.inputs);
  EXPECT_TRUE(all_close(out.at(0), tensor({std::exp(0.0), std::exp(1.5), std::exp(5.0)})));
}

TEST(AotFunctionalize, InputMutationIsAppliedAfterTheGraph) {
  auto f = compile(
      [](const Tensor& x, Tensor acc) {
        acc.add_(x);
        return acc * 2.0;
      },
      aot_eager());
  Tensor x = tensor({1.0, 2.0});
  Tensor acc = zeros({2});
  const void* before = acc.data_ptr();
  for (int call = 1; call <= 3; ++call) {
    Tensor r = f(x, acc);
    EXPECT_TRUE(all_close(acc, tensor({1.0 * call, 2.0 * call}))) << call;
    EXPECT_TRUE(all_close(r, tensor({2.0 * call, 4.0 * call}))) << call;
  }
  EXPECT_EQ(acc.data_ptr(), before);  // written in place, not replaced
}

TEST(AotFunctionalize, TheGraphOfAnInputMutationIsPureWithTheNewValueAsOutput) {
  GraphKeeper keeper;
  auto f = compile(
      [](const Tensor& x, Tensor acc) {
        acc.mul_(0.5).add_(x);
        return x.sum();
      },
      {.backend = keeper.backend()});
  f(tensor({1.0, 2.0}), tensor({4.0, 4.0}));
  const aot::JointGraph joint = aot::trace_joint(*keeper.graph, false);
  EXPECT_FALSE(has_mutation(joint.graph)) << joint.graph.str();
  ASSERT_EQ(joint.mutated_inputs, std::vector<size_t>({1}));
  const std::vector<Tensor> out = graph::interpret(joint.graph, *keeper.inputs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(all_close(out[0], tensor(3.0)));
  EXPECT_TRUE(all_close(out[1], tensor({3.0, 4.0})));  // 4 * 0.5 + x
}

TEST(AotFunctionalize, WritesThroughViewsReachTheBaseAndItsOtherViews) {
  auto body = [](const Tensor& x) {
    Tensor y = x.clone();
    Tensor row = y.select(0, 1);
    Tensor col = y.select(1, 0);
    row.mul_(10.0);   // through a view
    col.add_(100.0);  // through another view, overlapping the first
    return y + row.sum() + col.sum();
  };
  auto f = compile(body, aot_eager());
  Tensor x = arange(6.0).reshape({2, 3});
  EXPECT_TRUE(all_close(f(x), body(x)));
  EXPECT_TRUE(all_close(x, arange(6.0).reshape({2, 3})));  // a clone was written, not x
}

TEST(AotFunctionalize, WritesThroughAViewOfAnInputReachTheInput) {
  auto body = [](const Tensor& x) {
    x.narrow(1, 1, 2).mul_(-1.0);
    return x.sum(1);
  };
  auto f = compile(body, aot_eager());
  Tensor a = arange(8.0).reshape({2, 4});
  Tensor b = arange(8.0).reshape({2, 4});
  Tensor want = body(a);
  EXPECT_TRUE(all_close(f(b), want));
  EXPECT_TRUE(all_close(b, a));
}

TEST(AotFunctionalize, CopyAndFillAndOutVariants) {
  auto body = [](const Tensor& x, Tensor buf) {
    buf.copy_(x * 3.0);  // broadcast from [3] into [2, 3]
    Tensor out = empty({0});
    ops::call(ops::OpRegistry::instance().get("add.out"), {buf, x, Scalar(1), out});  // resized
    Tensor z = zeros_like(x);
    z.fill_(7.0);
    return out + z;
  };
  auto f = compile(body, aot_eager());
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor buf_eager = zeros({2, 3});
  Tensor buf = zeros({2, 3});
  Tensor want = body(x, buf_eager);
  EXPECT_TRUE(all_close(f(x, buf), want));
  EXPECT_TRUE(all_close(buf, buf_eager));
}

TEST(AotFunctionalize, OutputsThatAliasInputsStillAliasThem) {
  auto f =
      compile([](const Tensor& x) { return std::make_tuple(x.view({-1}), x.t(), x); }, aot_eager());
  Tensor x = arange(6.0).reshape({2, 3});
  auto [flat, transposed, same] = f(x);
  EXPECT_EQ(flat.data_ptr(), x.data_ptr());
  EXPECT_EQ(transposed.data_ptr(), x.data_ptr());
  EXPECT_EQ(transposed.sizes().vec(), std::vector<int64_t>({3, 2}));
  EXPECT_EQ(same.data_ptr(), x.data_ptr());
  // A cache hit returns the input itself.
  auto [flat2, transposed2, same2] = f(x);
  EXPECT_EQ(same2.impl(), x.impl());
  EXPECT_EQ(flat2.data_ptr(), x.data_ptr());
  x.fill_(1.0);
  EXPECT_TRUE(all_close(flat, ones({6})));
}

TEST(AotFunctionalize, BufferMutationOfBatchNormInTraining) {
  testing::LogCapture hints("perf_hints");
  manual_seed(3);
  auto eager_bn = std::make_shared<nn::BatchNorm2d>(3);
  auto bn = std::make_shared<nn::BatchNorm2d>(3);
  auto compiled = compile(bn, aot_eager());
  manual_seed(4);
  for (int step = 0; step < 3; ++step) {
    Tensor x = randn({4, 3, 5, 5}) * (step + 1.0) + 0.5;
    Tensor want = eager_bn->forward(x);
    Tensor got = (*compiled)(x);
    EXPECT_TRUE(all_close(got, want, 1e-5, 1e-6)) << step;
    EXPECT_TRUE(all_close(bn->running_mean, eager_bn->running_mean, 1e-5, 1e-7)) << step;
    EXPECT_TRUE(all_close(bn->running_var, eager_bn->running_var, 1e-5, 1e-7)) << step;
    EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), step + 1);
  }
  EXPECT_EQ(hints.count("runs with the interpreter"), 0u) << hints.all();
}

}  // namespace
}  // namespace kiln
