// Autocast on the CPU (bfloat16): which ops run in which dtype (PyTorch's lists), that values
// equal the same ops on explicitly cast inputs, that gradients flow through the casts back to
// float32 leaves, and that compiled functions record the casts and guard on the autocast state.
#include "capture/capture_test_util.h"
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

constexpr DType bf16 = DType::BFloat16;
constexpr DType f32 = DType::Float32;

TEST(Autocast, OpsRunInTheirListsDtype) {
  manual_seed(1);
  const Tensor a = randn({4, 8}), b = randn({8, 3}), w = randn({3, 8}), bias = randn({3});
  autocast amp(Device::cpu(), bf16);
  EXPECT_TRUE(is_autocast_enabled(DeviceType::CPU));
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CUDA));
  EXPECT_EQ(mm(a, b).dtype(), bf16);
  EXPECT_EQ(matmul(a, b).dtype(), bf16);
  EXPECT_EQ(linear(a, w, bias).dtype(), bf16);
  EXPECT_EQ(conv2d(randn({1, 2, 5, 5}), randn({3, 2, 3, 3})).dtype(), bf16);
  const Tensor h = mm(a, b);
  // Float32 ops upcast a bfloat16 input.
  EXPECT_EQ(softmax(h, -1).dtype(), f32);
  EXPECT_EQ(log_softmax(h, -1).dtype(), f32);
  EXPECT_EQ(h.exp().dtype(), f32);
  EXPECT_EQ(h.sum().dtype(), f32);
  EXPECT_EQ(layer_norm(h, {3}).dtype(), f32);
  // Ops in no list follow type promotion; the widest-type list casts to the widest.
  EXPECT_EQ(h.relu().dtype(), bf16);
  EXPECT_EQ((h + h).dtype(), bf16);
  EXPECT_EQ((h + randn({4, 3})).dtype(), f32);
  EXPECT_EQ(cat({h, randn({4, 3})}, 0).dtype(), f32);
  EXPECT_EQ(stack({h, h}).dtype(), bf16);
  // float64 and integer tensors are never cast.
  EXPECT_EQ(mm(a.to(DType::Float64), b.to(DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ(mm(ones({2, 2}, DType::Int64), ones({2, 2}, DType::Int64)).dtype(), DType::Int64);
  // In-place ops keep their tensor's dtype.
  Tensor x = a.clone();
  x.exp_();
  EXPECT_EQ(x.dtype(), f32);
}

TEST(Autocast, GuardsNestAndRestore) {
  const Tensor a = randn({2, 2});
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
  {
    autocast amp(Device::cpu());  // bfloat16 by default on the CPU
    EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), bf16);
    EXPECT_EQ(mm(a, a).dtype(), bf16);
    {
      autocast off(Device::cpu(), std::nullopt, /*enabled=*/false);
      EXPECT_EQ(mm(a, a).dtype(), f32);
    }
    EXPECT_EQ(mm(a, a).dtype(), bf16);
    {
      autocast half(Device::cpu(), DType::Float16);
      EXPECT_EQ(mm(a, a).dtype(), DType::Float16);
    }
    EXPECT_EQ(mm(a, a).dtype(), bf16);
    // CUDA autocast leaves CPU tensors alone.
    autocast gpu(Device::cuda(), bf16);
    autocast cpu_off(Device::cpu(), std::nullopt, false);
    EXPECT_EQ(mm(a, a).dtype(), f32);
  }
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CUDA));
  EXPECT_EQ(mm(a, a).dtype(), f32);
}

TEST(Autocast, BadArgumentsRaise) {
  EXPECT_TRUE(
      throws_error([] { autocast amp(Device::meta(), bf16); }, {"expected device cpu or cuda"}));
  EXPECT_TRUE(throws_error([] { autocast amp(Device::cpu(), f32); },
                           {"expected dtype float16 or bfloat16"}));
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
}

// The values are the ops' on explicitly cast inputs, and gradients reach float32 leaves through
// the casts (as float32), equal to the explicit casts' gradients.
TEST(Autocast, ValuesAndGradientsEqualExplicitCasts) {
  manual_seed(2);
  const Tensor x = randn({6, 16});
  Tensor w1 = randn({32, 16}).requires_grad_(), w2 = randn({4, 32}).requires_grad_();
  Tensor loss;
  {
    autocast amp(Device::cpu(), bf16);
    const Tensor h = linear(x, w1).relu();
    loss = log_softmax(linear(h, w2), -1).sum();
  }
  EXPECT_EQ(loss.dtype(), f32);
  loss.backward();
  Tensor v1 = w1.detach().clone().requires_grad_(), v2 = w2.detach().clone().requires_grad_();
  const Tensor h = linear(x.to(bf16), v1.to(bf16)).relu();
  const Tensor want = log_softmax(linear(h, v2.to(bf16)).to(f32), -1).sum();
  want.backward();
  EXPECT_TRUE(all_close(loss, want, 0, 0));
  EXPECT_EQ(w1.grad().dtype(), f32);
  EXPECT_TRUE(all_close(w1.grad(), v1.grad(), 0, 0));
  EXPECT_TRUE(all_close(w2.grad(), v2.grad(), 0, 0));
}

// A compiled function traced under autocast has the casts in its graph (same values and dtypes
// as eager under autocast); called without autocast it recompiles (the guard names the change)
// and computes in float32.
TEST(Autocast, CompiledFunctionsRecordCastsAndGuardOnTheState) {
  manual_seed(3);
  const Tensor a = randn({8, 8}), b = randn({8, 8});
  auto f = [](const Tensor& x, const Tensor& y) { return softmax(mm(x, y), -1) + mm(x, y); };
  testing::LogCapture recompiles("recompiles");
  auto compiled = compile(f);
  Tensor want, got;
  {
    autocast amp(Device::cpu(), bf16);
    want = f(a, b);
    got = compiled(a, b);
  }
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(want.dtype(), f32);  // softmax (float32) + bfloat16 promotes
  EXPECT_TRUE(all_close(got, want, 1e-5, 1e-5));
  const Tensor plain = compiled(a, b);
  EXPECT_TRUE(all_close(plain, f(a, b), 1e-5, 1e-5));
  EXPECT_FALSE(all_close(plain, got, 1e-5, 1e-5));  // float32 products differ from bfloat16's
  EXPECT_NE(recompiles.all().find("autocast changed from autocast cpu bfloat16 to autocast off"),
            std::string::npos)
      << recompiles.all();
}

}  // namespace
}  // namespace kiln
