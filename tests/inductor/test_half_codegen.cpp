// float16 and bfloat16 in the C++ code generator: generated loops read and write the 16-bit
// types, compute in float and round every result to the type as eager's kernels do, so compiled
// pointwise code equals eager bit for bit (transcendental functions within one ulp of the type);
// the loops are explicitly vectorized; reductions, softmax and a training step under CPU autocast
// run generated code and match eager.
#include "capture/capture_test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;

CompileOptions inductor() { return {.backend = std::string("inductor")}; }

// Whether two tensors of 16-bit `dtype` differ by at most `ulps` units of the type's last place
// at `want` (both NaN counts as equal) or by at most `atol`.
::testing::AssertionResult within_ulps(const Tensor& got, const Tensor& want, DType dtype,
                                       double ulps, double atol = 0) {
  if (got.dtype() != dtype || want.dtype() != dtype) {
    return ::testing::AssertionFailure()
           << "dtypes " << dtype_name(got.dtype()) << ", " << dtype_name(want.dtype());
  }
  const Tensor g = got.to(kFloat64).contiguous(), w = want.to(kFloat64).contiguous();
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  const int mantissa = dtype == kBFloat16 ? 7 : 10;
  for (int64_t i = 0; i < w.numel(); ++i) {
    if (std::isnan(wp[i]) || std::isnan(gp[i])) {
      if (std::isnan(wp[i]) && std::isnan(gp[i])) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << gp[i] << " vs " << wp[i];
    }
    if (gp[i] == wp[i]) continue;
    const double ulp =
        std::ldexp(1.0, std::max(std::ilogb(std::abs(wp[i]) + 1e-30), -14) - mantissa);
    if (std::isinf(wp[i]) || std::abs(gp[i] - wp[i]) > std::max(ulps * ulp, atol)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << gp[i] << " vs " << wp[i] << " (ulp " << ulp << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class Inductor16Bit : public ::testing::TestWithParam<DType> {};

// Arithmetic, comparisons, where, casts to and from float32 and constants: the same bits as eager
// (each op in float, rounded to the type); 64 x 37 leaves a scalar tail after the vector loops.
TEST_P(Inductor16Bit, PointwiseMatchesEagerBitForBit) {
  const DType d = GetParam();
  LogCapture logs("output_code,perf_hints");
  auto body = [](const Tensor& x, const Tensor& y) {
    const Tensor a = (x * y + 1.5).relu() - x / (y.abs() + 1.0);
    const Tensor b = where(x > y, a, -y) * 0.3;
    return std::make_tuple(b, (a.to(kFloat32) * 2.0).to(x.dtype()) + x, a.to(kFloat32) - 0.1);
  };
  auto f = compile(body, inductor());
  manual_seed(1);
  const Tensor x = (randn({64, 37}) * 3.0).to(d), y = randn({64, 37}).to(d);
  autograd::NoGradGuard no_grad;
  const auto got = f(x, y);
  const auto want = body(x, y);
  EXPECT_TRUE(within_ulps(std::get<0>(got), std::get<0>(want), d, 0));
  EXPECT_TRUE(within_ulps(std::get<1>(got), std::get<1>(want), d, 0));
  EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 0, 0));
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  // The arguments are 16-bit in memory and the loops vectorized (vector loads of them).
  const std::string kernels = logs.generated_kernels();
  const std::string type = d == kBFloat16 ? "kiln_bf16" : "kiln_half";
  EXPECT_NE(kernels.find("const " + type + "* __restrict"), std::string::npos) << kernels;
  EXPECT_NE(kernels.find("VecF::load(&b"), std::string::npos) << kernels;
  EXPECT_NE(kernels.find("vec_round_to<" + type + ">"), std::string::npos) << kernels;
}

// Conversions from float32 round to nearest even exactly as eager's: halfway cases, overflow to
// infinity, subnormals, signed zeros, infinities and NaN.
TEST_P(Inductor16Bit, ConversionsRoundAsEager) {
  const DType d = GetParam();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x =
      tensor({0.0f, -0.0f, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 65504.0f, 65520.0f, 1e-8f, -3e-8f,
              6e-8f, 3e38f, -inf, inf, std::numeric_limits<float>::quiet_NaN(), 1.0f + 1.0f / 2048,
              1.0f + 3.0f / 2048, 0.1f, -2.5f, 7.0f})
          .reshape({2, 9});
  auto body = [d](const Tensor& v) { return (v.to(d) * 1.0).to(kFloat32); };
  auto f = compile(body, inductor());
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(f(x), body(x), 0, 0));
}

// exp, tanh, sigmoid, gelu and sqrt computed in float (SLEEF's vector functions) and rounded:
// within one ulp of the type of eager's, or 1e-6 (the float32 sweep's absolute tolerance: gelu's
// 1 + erf(x / sqrt(2)) cancels for negative x, and float erfs a float ulp apart there are two
// float16 subnormal ulps apart).
TEST_P(Inductor16Bit, TranscendentalFunctionsWithinOneUlp) {
  const DType d = GetParam();
  auto body = [](const Tensor& x) {
    return std::make_tuple(x.exp(), x.tanh(), x.sigmoid(), gelu(x), x.abs().sqrt() + x.sin());
  };
  auto f = compile(body, inductor());
  manual_seed(2);
  const Tensor x = (randn({16, 67}) * 2.0).to(d);
  autograd::NoGradGuard no_grad;
  const auto got = f(x);
  const auto want = body(x);
  EXPECT_TRUE(within_ulps(std::get<0>(got), std::get<0>(want), d, 1, 1e-6));
  EXPECT_TRUE(within_ulps(std::get<1>(got), std::get<1>(want), d, 1, 1e-6));
  EXPECT_TRUE(within_ulps(std::get<2>(got), std::get<2>(want), d, 1, 1e-6));
  EXPECT_TRUE(within_ulps(std::get<3>(got), std::get<3>(want), d, 1, 1e-6));
  EXPECT_TRUE(within_ulps(std::get<4>(got), std::get<4>(want), d, 1, 1e-6));
}

// Sums, means, maxima and softmax over 16-bit rows: accumulated in double or float (eager in
// float), so within one ulp of the type; a maximum is exact.
TEST_P(Inductor16Bit, ReductionsAndSoftmax) {
  const DType d = GetParam();
  auto body = [](const Tensor& x) {
    return std::make_tuple(x.sum({1}), x.mean({0}), x.amax({1}), softmax(x, -1), log_softmax(x, 0));
  };
  auto f = compile(body, inductor());
  manual_seed(4);
  const Tensor x = randn({24, 300}).to(d);
  autograd::NoGradGuard no_grad;
  const auto got = f(x);
  const auto want = body(x);
  EXPECT_TRUE(within_ulps(std::get<0>(got), std::get<0>(want), d, 1));
  EXPECT_TRUE(within_ulps(std::get<1>(got), std::get<1>(want), d, 1));
  EXPECT_TRUE(within_ulps(std::get<2>(got), std::get<2>(want), d, 0));
  EXPECT_TRUE(within_ulps(std::get<3>(got), std::get<3>(want), d, 1));
  EXPECT_TRUE(within_ulps(std::get<4>(got), std::get<4>(want), d, 1));
}

INSTANTIATE_TEST_SUITE_P(Types, Inductor16Bit, ::testing::Values(kBFloat16, kFloat16),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

// A small network's training step under CPU autocast (bfloat16): the compiled forward and
// backward run generated kernels (no interpreter) and give eager's loss and gradients.
TEST(Inductor16BitAutocast, TrainingStepMatchesEager) {
  manual_seed(6);
  const Tensor x = randn({32, 48});
  const Tensor w1 = (randn({64, 48}) * 0.1).requires_grad_();
  const Tensor b1 = zeros({64}).requires_grad_();
  const Tensor w2 = (randn({10, 64}) * 0.1).requires_grad_();
  const Tensor g = ones({64}).requires_grad_();
  auto step = [&](const Tensor& input) {
    const Tensor h = gelu(linear(input, w1, b1));
    const Tensor n = layer_norm(h, {64}, g, Tensor());
    return log_softmax(linear(n, w2), -1).mean();
  };
  LogCapture logs("perf_hints");
  auto compiled = compile(step, inductor());
  Tensor want, got;
  std::vector<Tensor> want_grads, got_grads;
  for (const bool compiled_run : {false, true}) {
    for (Tensor p : {w1, b1, w2, g}) p.mutable_grad() = Tensor();
    autocast amp(Device::cpu(), kBFloat16);
    Tensor loss = compiled_run ? compiled(x) : step(x);
    loss.backward();
    (compiled_run ? got : want) = loss.detach();
    for (const Tensor& p : {w1, b1, w2, g}) {
      (compiled_run ? got_grads : want_grads).push_back(p.grad().clone());
    }
  }
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_TRUE(all_close(got, want, 1e-2, 1e-3));
  for (size_t i = 0; i < want_grads.size(); ++i) {
    EXPECT_EQ(got_grads[i].dtype(), kFloat32);
    EXPECT_TRUE(all_close(got_grads[i], want_grads[i], 2e-2, 2e-3)) << "gradient " << i;
  }
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// 16-bit convolutions on the CPU compute in float32 between casts, in eager's kernels and, said in
// nodes, in compiled graphs (conv_widening.h): the float32 passes then apply (channels-last where
// the CPU has AVX-512; a frozen graph's weights cast once and pre-packed). Results match eager.
TEST(Inductor16BitAutocast, ConvolutionsRunInFloat32BetweenCasts) {
  manual_seed(7);
  const Tensor x = randn({2, 3, 12, 12});
  const Tensor w1 = (randn({8, 3, 3, 3}) * 0.2).requires_grad_();
  const Tensor b1 = (randn({8}) * 0.1).requires_grad_();
  const Tensor w2 = (randn({4, 8, 3, 3}) * 0.2).requires_grad_();
  const Tensor mean = zeros({8}), var = ones({8});
  auto net = [&](const Tensor& input) {
    const Tensor h = conv2d(input, w1, b1, 1, 1).relu();
    const Tensor n = batch_norm(h, Tensor(), Tensor(), mean, var, false, 0.1, 1e-5);
    return conv2d(n, w2, Tensor(), 2, 1);
  };
  {
    LogCapture logs("fusion,perf_hints");
    auto step = [&](const Tensor& input) {
      const Tensor y = net(input).to(kFloat32);
      return (y * y).mean();
    };
    auto compiled = compile(step, inductor());
    Tensor want, got;
    std::vector<Tensor> want_grads, got_grads;
    for (const bool compiled_run : {false, true}) {
      for (Tensor p : {w1, b1, w2}) p.mutable_grad() = Tensor();
      Tensor loss;
      {
        autocast amp(Device::cpu(), kBFloat16);
        loss = compiled_run ? compiled(x) : step(x);
      }
      loss.backward();
      (compiled_run ? got : want) = loss.detach();
      for (const Tensor& p : {w1, b1, w2}) {
        (compiled_run ? got_grads : want_grads).push_back(p.grad().clone());
      }
    }
    EXPECT_TRUE(all_close(got, want, 1e-2, 1e-3));
    for (size_t i = 0; i < want_grads.size(); ++i) {
      EXPECT_TRUE(all_close(got_grads[i], want_grads[i], 2e-2, 2e-3)) << "gradient " << i;
    }
    // The forward's two and the backward's two, in the joint graph.
    EXPECT_EQ(logs.count("4 16-bit convolutions run in float32 between casts"), 1u) << logs.all();
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
  {
    // Inference: frozen, the weights are constants (cast once and packed).
    const Tensor c1 = w1.detach(), c2 = w2.detach(), cb = b1.detach();
    auto frozen = [&](const Tensor& input) {
      const Tensor h = conv2d(input, c1, cb, 1, 1).relu();
      return conv2d(h, c2, Tensor(), 2, 1);
    };
    LogCapture logs("aot_graphs,perf_hints");
    autograd::NoGradGuard no_grad;
    autocast amp(Device::cpu(), kBFloat16);
    const Tensor want = frozen(x);
    const Tensor got = compile(frozen, inductor())(x);
    EXPECT_EQ(got.dtype(), kBFloat16);
    EXPECT_TRUE(all_close(got.to(kFloat32), want.to(kFloat32), 1e-2, 1e-2));
    EXPECT_GE(logs.count("_convolution_packed"), 1u) << logs.all();
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
}

}  // namespace
}  // namespace kiln
