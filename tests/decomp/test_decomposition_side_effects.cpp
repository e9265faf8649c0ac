// What the sample walk cannot see of two decompositions: flash attention's dropout draws the
// kernel's Philox numbers (its samples have no dropout: the op is no random op), and
// native_batch_norm's training decomposition updates running_mean/running_var in place as the
// kernel does (its schema marks no argument mutable, so the walk compares outputs only).
#include <kiln/decomp/prims.h>
#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using ops::IValue;
using ops::OpRegistry;
using ops::Stack;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

TEST(DecompositionSideEffects, FlashAttentionDropoutDrawsTheKernelsNumbers) {
  const ops::OpDef& op = OpRegistry::instance().get("_scaled_dot_product_flash_attention_for_cpu");
  autograd::NoGradGuard no_grad;
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    manual_seed(1);
    const Stack args{rand({2, 3, 70, 8}) * 4.0 - 2.0,
                     rand({2, 3, 90, 8}) * 4.0 - 2.0,
                     rand({2, 3, 90, 8}) * 4.0 - 2.0,
                     0.3,
                     causal,
                     IValue(),
                     IValue()};
    manual_seed(5);
    const std::vector<Tensor> eager = ops::call(op, args);
    manual_seed(5);
    const std::vector<Tensor> prims = decomp::call_as_prims(op, args);
    EXPECT_LT(max_abs_diff(eager[0], prims[0]), 1e-5);
    EXPECT_LT(max_abs_diff(eager[1], prims[1]), 1e-5);
    // Other draws drop other weights.
    const std::vector<Tensor> redrawn = decomp::call_as_prims(op, args);
    EXPECT_GT(max_abs_diff(eager[0], redrawn[0]), 1e-3);
  }
}

TEST(DecompositionSideEffects, BatchNormTrainingUpdatesRunningStatistics) {
  const ops::OpDef& op = OpRegistry::instance().get("native_batch_norm");
  autograd::NoGradGuard no_grad;
  manual_seed(2);
  const Tensor input = randn({4, 3, 5}) * 2.0 + 1.0;
  const Tensor running_mean = randn({3}), running_var = rand({3}) + 0.5;
  Stack eager_args{input, IValue(), IValue(), running_mean.clone(), running_var.clone(),
                   true,  0.1,      1e-5};
  Stack prim_args{input, IValue(), IValue(), running_mean.clone(), running_var.clone(),
                  true,  0.1,      1e-5};
  ops::call(op, eager_args);
  decomp::call_as_prims(op, prim_args);
  for (size_t i : {size_t{3}, size_t{4}}) {
    const Tensor& before = i == 3 ? running_mean : running_var;
    EXPECT_GT(max_abs_diff(eager_args[i].to_tensor(), before), 1e-3) << "argument " << i;
    EXPECT_LT(max_abs_diff(eager_args[i].to_tensor(), prim_args[i].to_tensor()), 1e-6)
        << "argument " << i;
  }
}

}  // namespace
}  // namespace kiln
