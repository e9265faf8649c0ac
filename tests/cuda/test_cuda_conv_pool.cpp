// convolution and convolution_backward (cuDNN, integer dtypes through kiln ops) and max pooling
// (hand-written kernels) on CUDA against the CPU ops on the same inputs. Weights are scaled by
// 1/sqrt(fan-in) so that outputs are of order one: float32 then agrees within rtol 1e-4 (TF32
// off; TF32's 10-bit mantissa would miss by about 1e-3), float64 within 1e-10, 16-bit floats
// within 2e-2, integers exactly. Max pooling picks elements, so values and indices are exact.
#include "cuda/cuda_test_util.h"
#include "cuda/cudnn_conv_pass.h"
#include "cuda/cudnn_graph_conv.h"

#include <cmath>
#include <limits>
#include <optional>

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

using Ints = std::vector<int64_t>;

::testing::AssertionResult close(const Tensor& on_gpu, const Tensor& reference) {
  return close_to_cpu(on_gpu, reference, {1e-4, 1e-5, 1e-10, 2e-2});
}

// ---- convolution ----

struct Conv {
  Ints input;   // [N, C_in, spatial...]
  Ints weight;  // [C_out, C_in / groups, K...], transposed [C_in, C_out / groups, K...]
  Ints stride, padding, dilation;
  bool transposed = false;
  Ints output_padding;
  int64_t groups = 1;
  bool bias = true;

  std::string str() const {
    return fmt::format(
        "input [{}] weight [{}] stride [{}] padding [{}] dilation [{}] {}"
        "output_padding [{}] groups {} {}",
        fmt::join(input, ", "), fmt::join(weight, ", "), fmt::join(stride, ", "),
        fmt::join(padding, ", "), fmt::join(dilation, ", "), transposed ? "transposed " : "",
        fmt::join(output_padding, ", "), groups, bias ? "bias" : "no bias");
  }
  int64_t out_channels() const { return transposed ? weight[1] * groups : weight[0]; }
};

Conv plain(Ints input, Ints weight, Ints stride, Ints padding, Ints dilation = {1},
           int64_t groups = 1, bool bias = true) {
  Conv c;
  c.input = std::move(input);
  c.weight = std::move(weight);
  c.stride = std::move(stride);
  c.padding = std::move(padding);
  c.dilation = std::move(dilation);
  c.output_padding = Ints(c.stride.size(), 0);
  c.groups = groups;
  c.bias = bias;
  return c;
}

Conv transposed(Ints input, Ints weight, Ints stride, Ints padding, Ints output_padding,
                Ints dilation = {1}, int64_t groups = 1, bool bias = true) {
  Conv c = plain(std::move(input), std::move(weight), std::move(stride), std::move(padding),
                 std::move(dilation), groups, bias);
  c.transposed = true;
  c.output_padding = std::move(output_padding);
  return c;
}

// Values of order one after a convolution: weights scaled by 1/sqrt(fan-in).
Tensor weight_sample(const Conv& c, DType dtype, uint64_t seed) {
  int64_t fan_in = c.transposed ? c.weight[0] / c.groups : c.weight[1];
  for (size_t i = 2; i < c.weight.size(); ++i) fan_in *= c.weight[i];
  const Tensor w = sample(c.weight, DType::Float64, seed) / std::sqrt(double(fan_in));
  return w.to(dtype);
}

struct ConvInputs {
  Tensor x, w, b;
};

ConvInputs inputs_of(const Conv& c, DType dtype, uint64_t seed) {
  ConvInputs in;
  in.x = sample(c.input, dtype, seed);
  in.w = is_floating_point(dtype) ? weight_sample(c, dtype, seed + 1)
                                  : sample(c.weight, dtype, seed + 1);
  if (c.bias) in.b = sample({c.out_channels()}, dtype, seed + 2);
  return in;
}

Tensor run_conv(const Conv& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return convolution(x, w, b, c.stride, c.padding, c.dilation, c.transposed, c.output_padding,
                     c.groups);
}

void expect_forward_matches(const Conv& c, DType dtype, uint64_t seed) {
  SCOPED_TRACE(c.str() + " " + std::string(dtype_name(dtype)));
  const ConvInputs in = inputs_of(c, dtype, seed);
  const Tensor want = run_conv(c, in.x, in.w, in.b);
  const Tensor got = run_conv(c, gpu(in.x), gpu(in.w), in.b.defined() ? gpu(in.b) : Tensor());
  EXPECT_TRUE(close(got, want));
}

// The layers of a ResNet: the 7x7 stride-2 stem on RGB, 3x3 stride 1 and 2, and the 1x1
// stride-2 downsample.
std::vector<Conv> resnet_layers() {
  return {plain({2, 3, 64, 64}, {64, 3, 7, 7}, {2, 2}, {3, 3}, {1}, 1, false),
          plain({2, 64, 16, 16}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1}, 1, false),
          plain({2, 64, 16, 16}, {128, 64, 3, 3}, {2, 2}, {1, 1}, {1}, 1, false),
          plain({2, 64, 16, 16}, {128, 64, 1, 1}, {2, 2}, {0, 0}, {1}, 1, false),
          plain({2, 512, 4, 4}, {10, 512, 1, 1}, {1, 1}, {0, 0}, {1}, 1, true)};
}

std::vector<Conv> conv_cases() {
  return {
      plain({2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}),
      plain({1, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1}, 1, false),  // batch 1, no bias
      plain({3, 3, 11, 10}, {5, 3, 3, 2}, {2, 3}, {1, 0}, {1, 2}),
      plain({2, 4, 7, 7}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {2, 2}, 2),
      plain({2, 8, 9, 9}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 8),              // depthwise
      plain({4, 3, 20}, {5, 3, 4}, {2}, {1}, {2}),                               // 1-d
      plain({1, 6, 15}, {6, 2, 5}, {1}, {2}, {1}, 3, false),                     // 1-d groups
      plain({2, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}),  // 3-d
      plain({1, 4, 4, 4, 4}, {4, 2, 3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1}, 2, false),
      transposed({2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}),
      transposed({1, 4, 4, 5}, {4, 2, 3, 2}, {2, 1}, {0, 1}, {1, 0}, {2, 1}, 2, false),
      transposed({2, 3, 7}, {3, 2, 3}, {3}, {1}, {2}),                                // 1-d
      transposed({1, 2, 3, 4, 3}, {2, 3, 2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {1, 0, 0}),  // 3-d
      // output_padding >= stride (allowed below the dilation): cuDNN sees an extended input.
      transposed({1, 2, 3, 3}, {2, 2, 3, 3}, {2, 2}, {1, 1}, {2, 2}, {3, 3}, 1, true),
      transposed({2, 6, 4, 4}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {0, 0}, {1}, 6),  // depthwise
  };
}

TEST(CudaConv, ForwardMatchesCpu) {
  REQUIRE_GPU();
  uint64_t seed = 100;
  for (const Conv& c : conv_cases()) {
    for (DType dtype : {DType::Float32, DType::Float64}) expect_forward_matches(c, dtype, ++seed);
  }
}

TEST(CudaConv, ResnetLayersMatchCpu) {
  REQUIRE_GPU();
  uint64_t seed = 200;
  for (const Conv& c : resnet_layers()) expect_forward_matches(c, DType::Float32, ++seed);
}

// A problem's algorithm is chosen once: the same sizes again reuse the plan, new sizes add one.
TEST(CudaConv, AlgorithmsAreChosenOncePerProblem) {
  REQUIRE_GPU();
  const Conv c = resnet_layers().front();
  expect_forward_matches(c, DType::Float32, 300);
  const size_t plans = kiln::cuda::cudnn_conv_plans_cached();
  expect_forward_matches(c, DType::Float32, 301);
  EXPECT_EQ(kiln::cuda::cudnn_conv_plans_cached(), plans);
  Conv wider = c;
  wider.input.back() += 2;
  expect_forward_matches(wider, DType::Float32, 302);
  EXPECT_EQ(kiln::cuda::cudnn_conv_plans_cached(), plans + 1);
}

// Restores a switch when the test ends, whatever happens.
struct SwitchGuard {
  void (*set)(bool);
  bool saved;
  ~SwitchGuard() { set(saved); }
};

// Benchmark mode times cuDNN's algorithms and keeps the fastest allowed one: same results.
TEST(CudaConv, BenchmarkModeMatchesCpu) {
  REQUIRE_GPU();
  const SwitchGuard guard{kiln::cuda::set_cudnn_benchmark, kiln::cuda::cudnn_benchmark()};
  kiln::cuda::set_cudnn_benchmark(true);
  // Timed choices may be FFT or Winograd algorithms (as with PyTorch's benchmark mode), whose
  // rounding grows with the transform: within 1e-4 (float32) or 1e-12 (float64) of the sum of
  // the products' magnitudes, where direct sums agree to a few ulps.
  uint64_t seed = 400;
  auto expect_close = [&](const Conv& c, DType dtype, double bound) {
    SCOPED_TRACE(c.str() + " " + std::string(dtype_name(dtype)));
    const ConvInputs in = inputs_of(c, dtype, ++seed);
    const Tensor want = run_conv(c, in.x, in.w, in.b);
    const Tensor got = run_conv(c, gpu(in.x), gpu(in.w), in.b.defined() ? gpu(in.b) : Tensor());
    const Tensor bias = in.b.defined() ? in.b.abs() : Tensor();
    const double scale = run_conv(c, in.x.abs(), in.w.abs(), bias).max().item<double>();
    EXPECT_LE((cpu(got) - want).abs().max().item<double>(), bound * scale);
  };
  for (const Conv& c : resnet_layers()) expect_close(c, DType::Float32, 1e-4);
  for (const Conv& c : conv_cases()) expect_close(c, DType::Float64, 1e-12);
}

// TF32 (PyTorch's default for convolutions) rounds the operands to 10-bit mantissas: the results
// stay within TF32's precision of the CPU's float32 ones.
TEST(CudaConv, Tf32WithinItsPrecision) {
  REQUIRE_GPU();
  const SwitchGuard guard{kiln::cuda::set_cudnn_allow_tf32, kiln::cuda::cudnn_allow_tf32()};
  kiln::cuda::set_cudnn_allow_tf32(true);
  uint64_t seed = 500;
  for (const Conv& c : resnet_layers()) {
    const ConvInputs in = inputs_of(c, DType::Float32, ++seed);
    const Tensor expected = run_conv(c, in.x, in.w, Tensor());
    const Tensor got = run_conv(c, gpu(in.x), gpu(in.w), Tensor());
    // A sum of k products of 11-bit mantissas: relative error ~ 2^-11 of the sum of magnitudes.
    const double scale = run_conv(c, in.x.abs(), in.w.abs(), Tensor()).max().item<double>();
    EXPECT_LE((cpu(got) - expected).abs().max().item<double>(), 2e-3 * scale);
  }
}

TEST(CudaConv, HalfTypesAccumulateInFloat) {
  REQUIRE_GPU();
  uint64_t seed = 300;
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    expect_forward_matches(plain({2, 16, 10, 10}, {8, 16, 3, 3}, {1, 1}, {1, 1}), dtype, ++seed);
    expect_forward_matches(transposed({2, 8, 5, 5}, {8, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}), dtype,
                           ++seed);
    // Channels-last activations (and a row-major weight) run as NHWC in cuDNN, where its
    // tensor-core kernels are; the output stays channels-last.
    const Conv c = plain({2, 16, 10, 10}, {8, 16, 3, 3}, {2, 2}, {1, 1});
    const ConvInputs in = inputs_of(c, dtype, ++seed);
    const Tensor x = in.x.contiguous(MemoryFormat::ChannelsLast);
    const Tensor got = run_conv(c, gpu(x), gpu(in.w), gpu(in.b));
    EXPECT_TRUE(close(got, run_conv(c, x, in.w, in.b))) << dtype_name(dtype);
    EXPECT_TRUE(got.is_contiguous(MemoryFormat::ChannelsLast));
  }
}

// No cuDNN kernel is exact for integers: they go through kiln ops, exactly.
TEST(CudaConv, IntegersExact) {
  REQUIRE_GPU();
  uint64_t seed = 400;
  for (DType dtype : {DType::Int64, DType::Int32, DType::Int8}) {
    expect_forward_matches(plain({2, 3, 6, 6}, {2, 3, 2, 2}, {1, 1}, {1, 1}), dtype, ++seed);
    expect_forward_matches(plain({2, 4, 9}, {4, 2, 3}, {2}, {1}, {2}, 2), dtype, ++seed);
    expect_forward_matches(transposed({1, 2, 4, 4}, {2, 3, 2, 2}, {2, 2}, {0, 0}, {1, 1}), dtype,
                           ++seed);
  }
}

TEST(CudaConv, LayoutsOfInputsAndOutput) {
  REQUIRE_GPU();
  const Conv c = plain({2, 3, 8, 9}, {4, 3, 3, 3}, {1, 2}, {1, 1});
  const ConvInputs in = inputs_of(c, DType::Float32, 500);
  // Non-contiguous input and weight.
  const Tensor xt = sample({2, 3, 9, 8}, DType::Float32, 501).transpose(2, 3);
  const Tensor wt = weight_sample(c, DType::Float32, 502)
                        .permute({0, 1, 3, 2})
                        .contiguous()
                        .permute({0, 1, 3, 2});
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_TRUE(close(run_conv(c, gpu(xt), gpu(wt), gpu(in.b)), run_conv(c, xt, wt, in.b)));
  const Tensor sliced =
      sample({2, 6, 8, 18}, DType::Float32, 503).slice(1, 0, 6, 2).slice(3, 0, 18, 2);
  EXPECT_TRUE(
      close(run_conv(c, gpu(sliced), gpu(in.w), gpu(in.b)), run_conv(c, sliced, in.w, in.b)));
  // A channels-last input gives a channels-last output, as on the CPU.
  const Tensor cl = in.x.contiguous(MemoryFormat::ChannelsLast);
  const Tensor want = run_conv(c, cl, in.w, in.b);
  const Tensor got = run_conv(c, gpu(cl), gpu(in.w), gpu(in.b));
  EXPECT_TRUE(close(got, want));
  EXPECT_EQ(got.is_contiguous(MemoryFormat::ChannelsLast),
            want.is_contiguous(MemoryFormat::ChannelsLast));
  // out= into a strided tensor.
  Tensor out =
      empty({2, 4, 16, 5}, TensorOptions(DType::Float32).device(Device::cuda())).slice(2, 0, 16, 2);
  call("convolution.out", {gpu(in.x), gpu(in.w), gpu(in.b), c.stride, c.padding, c.dilation, false,
                           c.output_padding, c.groups, out});
  EXPECT_TRUE(close(out, run_conv(c, in.x, in.w, in.b)));
}

TEST(CudaConv, EmptyBatchAndNoInputChannels) {
  REQUIRE_GPU();
  const Conv c = plain({0, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0});
  const ConvInputs in = inputs_of(c, DType::Float32, 600);
  const Tensor got = run_conv(c, gpu(in.x), gpu(in.w), gpu(in.b));
  EXPECT_EQ(got.sizes(), run_conv(c, in.x, in.w, in.b).sizes());
  // No input channels: every output is the bias.
  const Conv none = plain({2, 0, 5, 5}, {4, 0, 3, 3}, {1, 1}, {1, 1});
  const ConvInputs z = inputs_of(none, DType::Float32, 601);
  EXPECT_TRUE(close(run_conv(none, gpu(z.x), gpu(z.w), gpu(z.b)), run_conv(none, z.x, z.w, z.b)));
}

TEST(CudaConv, OperandsOnOtherDevicesRaise) {
  REQUIRE_GPU();
  const Conv c = plain({1, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0});
  const ConvInputs in = inputs_of(c, DType::Float32, 700);
  EXPECT_TRUE(throws_error([&] { run_conv(c, gpu(in.x), in.w, Tensor()); }, {"device"}));
  EXPECT_TRUE(throws_error([&] { run_conv(c, gpu(in.x), gpu(in.w), in.b); }, {"device"}));
}

// convolution_backward's arguments for conv `c`.
ops::Stack backward_args(const Conv& c, const Tensor& g, const Tensor& x, const Tensor& w,
                         const ops::IValue& bias_sizes, const Ints& output_mask) {
  return ops::Stack{g,
                    x,
                    w,
                    bias_sizes,
                    c.stride,
                    c.padding,
                    c.dilation,
                    c.transposed,
                    c.output_padding,
                    c.groups,
                    output_mask};
}

// convolution_backward with every output_mask, against the CPU kernel.
void expect_backward_matches(const Conv& c, DType dtype, uint64_t seed) {
  const ConvInputs in = inputs_of(c, dtype, seed);
  const Tensor out = run_conv(c, in.x, in.w, in.b);
  const Tensor go = sample(out.sizes(), dtype, seed + 3);
  static const ops::OpDef& backward = ops::OpRegistry::instance().get("convolution_backward");
  for (int mask = 0; mask < 8; ++mask) {
    const Ints flags{mask & 1, (mask >> 1) & 1, (mask >> 2) & 1};
    SCOPED_TRACE(
        fmt::format("{} {} output_mask [{}]", c.str(), dtype_name(dtype), fmt::join(flags, ", ")));
    const ops::IValue bias_sizes = c.bias ? ops::IValue(Ints{out.size(1)}) : ops::IValue();
    auto args = [&](const Tensor& g, const Tensor& x, const Tensor& w) {
      return backward_args(c, g, x, w, bias_sizes, flags);
    };
    const std::vector<Tensor> want = ops::call(backward, args(go, in.x, in.w));
    const std::vector<Tensor> got = ops::call(backward, args(gpu(go), gpu(in.x), gpu(in.w)));
    // Each gradient is a sum of products; the same sums of the products' magnitudes bound the
    // rounding of float32 sums in another order. A filter gradient over 512 products came out
    // 2.5854 from one of cuDNN's engines against the CPU's 2.5857 (about 2e-6 of the magnitudes'
    // sum; the CPU's own error is 3e-7 of it, and TF32 operands would be about 3e-5).
    const std::vector<Tensor> magnitude =
        dtype == DType::Float32 ? ops::call(backward, args(go.abs(), in.x.abs(), in.w.abs()))
                                : std::vector<Tensor>{};
    ASSERT_EQ(got.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(got[i].defined(), flags[i] != 0) << "gradient " << i;
      if (!got[i].defined()) continue;
      if (dtype == DType::Float32) {
        ASSERT_TRUE(got[i].device().is_cuda());
        const Tensor excess = (cpu(got[i]) - want[i]).abs() - magnitude[i] * 1e-5;
        EXPECT_LE(excess.max().item<double>(), 1e-6) << "gradient " << i;
      } else {
        EXPECT_TRUE(close(got[i], want[i])) << "gradient " << i;
      }
    }
  }
}

// convolution_backward of a channels-last input and grad_output (all three gradients) against
// the CPU kernel: grad_input comes back channels-last, as on the CPU; with `weight_layout`, the
// weight's gradient in the CPU's layout too.
void expect_channels_last_backward_matches(const Conv& c, DType dtype, uint64_t& seed,
                                           bool weight_layout) {
  const ConvInputs in = inputs_of(c, dtype, ++seed);
  const Tensor x = in.x.contiguous(MemoryFormat::ChannelsLast);
  const Tensor go = sample(run_conv(c, x, in.w, in.b).sizes(), dtype, ++seed)
                        .contiguous(MemoryFormat::ChannelsLast);
  static const ops::OpDef& backward = ops::OpRegistry::instance().get("convolution_backward");
  const ops::IValue bias_sizes(Ints{in.w.size(0)});
  const Ints all{1, 1, 1};
  const std::vector<Tensor> want =
      ops::call(backward, backward_args(c, go, x, in.w, bias_sizes, all));
  const std::vector<Tensor> got =
      ops::call(backward, backward_args(c, gpu(go), gpu(x), gpu(in.w), bias_sizes, all));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(close(got[i], want[i])) << dtype_name(dtype) << " gradient " << i;
  }
  EXPECT_TRUE(got[0].is_contiguous(MemoryFormat::ChannelsLast));
  if (weight_layout) {
    EXPECT_EQ(got[1].is_contiguous(MemoryFormat::ChannelsLast),
              want[1].is_contiguous(MemoryFormat::ChannelsLast));
  }
}

TEST(CudaConv, BackwardEveryMaskMatchesCpu) {
  REQUIRE_GPU();
  uint64_t seed = 800;
  for (const Conv& c : conv_cases()) {
    for (DType dtype : {DType::Float32, DType::Float64}) expect_backward_matches(c, dtype, ++seed);
  }
  for (const Conv& c : resnet_layers()) expect_backward_matches(c, DType::Float32, ++seed);
  expect_backward_matches(plain({2, 16, 10, 10}, {8, 16, 3, 3}, {1, 1}, {1, 1}), DType::BFloat16,
                          ++seed);
  // bfloat16, channels-last: NHWC in cuDNN for all three passes.
  expect_channels_last_backward_matches(plain({2, 16, 10, 10}, {8, 16, 3, 3}, {1, 1}, {1, 1}),
                                        DType::BFloat16, seed, /*weight_layout=*/false);
  expect_backward_matches(plain({2, 3, 6, 6}, {2, 3, 2, 2}, {1, 1}, {1, 1}), DType::Int64, ++seed);
  // A channels-last input: grad_input channels-last, as on the CPU.
  expect_channels_last_backward_matches(plain({2, 3, 6, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}),
                                        DType::Float32, seed, /*weight_layout=*/true);
}

// Convolutions run through cuDNN's graph API where it has an engine (float32 and the 16-bit
// types, row-major and NHWC, all three passes): each new problem adds a plan there, none falls
// back. With the graph API off, the legacy API's algorithms give the CPU's results too.
TEST(CudaConv, GraphApiPlansEveryPassAndTheLegacyApiStillMatches) {
  REQUIRE_GPU();
  const SwitchGuard guard{kiln::cuda::set_cudnn_graph_api, kiln::cuda::cudnn_graph_api()};
  uint64_t seed = 1900;
  const Conv c = plain({2, 16, 10, 10}, {8, 16, 3, 3}, {1, 1}, {1, 1});
  for (bool graph : {true, false}) {
    kiln::cuda::set_cudnn_graph_api(graph);
    const size_t plans = kiln::cuda::cudnn_graph_plans_cached();
    const size_t without = kiln::cuda::cudnn_graph_problems_without_plan();
    for (DType dtype : {DType::Float32, DType::BFloat16}) {
      SCOPED_TRACE(fmt::format("graph API {} {}", graph, dtype_name(dtype)));
      // Sizes new to this test (a batch of 3), so that each pass is a new problem.
      Conv fresh = c;
      fresh.input[0] = 3 + (graph ? 0 : 1);
      expect_forward_matches(fresh, dtype, ++seed);
      expect_backward_matches(fresh, dtype, ++seed);
      expect_channels_last_backward_matches(fresh, dtype, seed, /*weight_layout=*/false);
    }
    if (graph) {
      // Per dtype: the forward, data and filter passes row-major, the data and filter passes
      // NHWC (the channels-last forward ran on the CPU only).
      EXPECT_EQ(kiln::cuda::cudnn_graph_plans_cached(), plans + 10);
      EXPECT_EQ(kiln::cuda::cudnn_graph_problems_without_plan(), without);
    } else {
      EXPECT_EQ(kiln::cuda::cudnn_graph_plans_cached(), plans);
    }
  }
}

// Autograd through conv2d on the GPU (convolution's derivative calls convolution_backward).
TEST(CudaConv, AutogradMatchesCpu) {
  REQUIRE_GPU();
  const Conv c = plain({2, 3, 12, 12}, {8, 3, 3, 3}, {2, 2}, {1, 1});
  const ConvInputs in = inputs_of(c, DType::Float32, 900);
  auto grads = [&](const Tensor& x, const Tensor& w, const Tensor& b) {
    const Tensor xs = x.clone().requires_grad_(true), ws = w.clone().requires_grad_(true),
                 bs = b.clone().requires_grad_(true);
    (run_conv(c, xs, ws, bs).tanh().square().sum()).backward();
    return std::vector<Tensor>{xs.grad(), ws.grad(), bs.grad()};
  };
  const std::vector<Tensor> want = grads(in.x, in.w, in.b);
  const std::vector<Tensor> got = grads(gpu(in.x), gpu(in.w), gpu(in.b));
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(close(got[i], want[i])) << "gradient " << i;
}

// ---- max pooling ----

struct Pool {
  Ints input, kernel, stride, padding, dilation;
  bool ceil_mode = false;
  std::string str() const {
    return fmt::format("input [{}] kernel [{}] stride [{}] padding [{}] dilation [{}]{}",
                       fmt::join(input, ", "), fmt::join(kernel, ", "), fmt::join(stride, ", "),
                       fmt::join(padding, ", "), fmt::join(dilation, ", "),
                       ceil_mode ? " ceil_mode" : "");
  }
};

std::vector<Pool> pool_cases() {
  return {
      {{2, 3, 8, 9}, {2, 2}, {}, {0}, {1}},
      {{2, 3, 9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},          // overlapping, padded
      {{1, 2, 10, 11}, {3, 2}, {2, 1}, {1, 0}, {2, 1}},        // dilation
      {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},    // ceil_mode
      {{2, 2, 5, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},    // partial last window
      {{3, 6, 7}, {2, 3}, {1, 2}, {1, 1}, {1}, false},         // 3-D input
      {{2, 4, 13, 12}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, true},  // every option
      {{0, 2, 4, 4}, {2, 2}, {}, {0}, {1}},                    // empty batch
  };
}

std::tuple<Tensor, Tensor> run_pool(const Pool& p, const Tensor& x) {
  return max_pool2d_with_indices(x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
}

void expect_pool_matches(const Pool& p, const Tensor& x) {
  SCOPED_TRACE(p.str() + " " + std::string(dtype_name(x.dtype())));
  const auto [values, indices] = run_pool(p, x);
  const auto [gv, gi] = run_pool(p, gpu(x));
  EXPECT_TRUE(same_values(cpu(gv), values));
  EXPECT_TRUE(same_values(cpu(gi), indices));
  EXPECT_EQ(gv.strides(), values.strides());
}

TEST(CudaPool, MaxPoolMatchesCpu) {
  REQUIRE_GPU();
  uint64_t seed = 1000;
  for (const Pool& p : pool_cases()) {
    for (DType dtype : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16,
                        DType::Int64, DType::Int32, DType::UInt8}) {
      expect_pool_matches(p, sample(p.input, dtype, ++seed));
    }
  }
  // Channels-last pools in its layout; a non-contiguous input.
  const Pool p{{2, 5, 9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}};
  expect_pool_matches(
      p, sample(p.input, DType::Float32, ++seed).contiguous(MemoryFormat::ChannelsLast));
  expect_pool_matches(p, sample({2, 5, 9, 18}, DType::Float32, ++seed).slice(3, 0, 18, 2));
}

// Ties go to the first maximum in window order; a NaN wins its windows (the last NaN of a window
// gives the index); an all -inf window points at its first element.
TEST(CudaPool, TiesNanAndInfinity) {
  REQUIRE_GPU();
  const Pool overlapping{{1, 1, 6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  expect_pool_matches(overlapping, full({1, 1, 6, 6}, 2.0));
  Tensor x = sample({1, 1, 6, 6}, DType::Float32, 1100);
  x.select(2, 2).select(2, 3).fill_(std::nan(""));
  x.select(2, 3).select(2, 3).fill_(std::nan(""));
  x.select(2, 0).select(2, 0).fill_(std::numeric_limits<double>::infinity());
  expect_pool_matches(overlapping, x);
  expect_pool_matches(overlapping, full({1, 1, 6, 6}, -std::numeric_limits<double>::infinity()));
  const Tensor cl = full({1, 4, 6, 6}, -std::numeric_limits<double>::infinity())
                        .contiguous(MemoryFormat::ChannelsLast);
  expect_pool_matches({{1, 4, 6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, cl);
  // Integers: the lowest value ties with the initial one.
  const Tensor lowest = full({1, 1, 4, 4}, double(std::numeric_limits<int32_t>::lowest()),
                             TensorOptions(DType::Int32));
  expect_pool_matches({{1, 1, 4, 4}, {2, 2}, {1, 1}, {0}, {1}}, lowest);
}

TEST(CudaPool, MaxPoolBackwardMatchesCpu) {
  REQUIRE_GPU();
  uint64_t seed = 1200;
  for (const Pool& p : pool_cases()) {
    for (DType dtype : {DType::Float32, DType::Float64, DType::BFloat16}) {
      SCOPED_TRACE(p.str() + " " + std::string(dtype_name(dtype)));
      const Tensor x = sample(p.input, dtype, ++seed);
      const auto [values, indices] = run_pool(p, x);
      const Tensor go = sample(values.sizes(), dtype, ++seed);
      auto args = [&](const Tensor& g, const Tensor& in, const Tensor& idx) {
        return ops::Stack{
            g,         in,         p.kernel,    p.stride.empty() ? p.kernel : p.stride,
            p.padding, p.dilation, p.ceil_mode, idx};
      };
      const Tensor want = call("max_pool2d_with_indices_backward", args(go, x, indices));
      const Tensor got =
          call("max_pool2d_with_indices_backward", args(gpu(go), gpu(x), gpu(indices)));
      // Overlapping windows add in another order than the CPU's loop.
      EXPECT_TRUE(close(got, want));
    }
  }
  // Channels-last: grad_input keeps the layout.
  const Pool p{{2, 5, 9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Tensor x = sample(p.input, DType::Float32, ++seed).contiguous(MemoryFormat::ChannelsLast);
  const auto [values, indices] = run_pool(p, x);
  const Tensor go =
      sample(values.sizes(), DType::Float32, ++seed).contiguous(MemoryFormat::ChannelsLast);
  const ops::Stack cpu_args{go, x, p.kernel, p.stride, p.padding, p.dilation, false, indices};
  const ops::Stack gpu_args{gpu(go),   gpu(x),     p.kernel, p.stride,
                            p.padding, p.dilation, false,    gpu(indices)};
  const Tensor want = call("max_pool2d_with_indices_backward", cpu_args);
  const Tensor got = call("max_pool2d_with_indices_backward", gpu_args);
  EXPECT_TRUE(close(got, want));
  EXPECT_EQ(got.strides(), want.strides());
}

TEST(CudaPool, AutogradThroughMaxPool) {
  REQUIRE_GPU();
  const Tensor x = sample({2, 3, 10, 10}, DType::Float32, 1300);
  auto grad = [](const Tensor& input) {
    const Tensor leaf = input.clone().requires_grad_(true);
    (max_pool2d(leaf, {3, 3}, {1, 1}, {1, 1}).square().sum()).backward();
    return leaf.grad();
  };
  EXPECT_TRUE(close(grad(gpu(x)), grad(x)));
}

TEST(CudaPool, AdaptiveMaxPoolMatchesCpu) {
  REQUIRE_GPU();
  uint64_t seed = 1400;
  const std::vector<std::pair<Ints, Ints>> cases{
      {{2, 3, 7, 9}, {3, 4}},  // uneven, overlapping windows
      {{3, 5, 5}, {5, 5}},     // 3-D, identity
      {{1, 2, 4, 6}, {6, 7}},  // output larger than input
      {{2, 4, 8, 8}, {1, 1}},  // global
      {{0, 2, 4, 4}, {2, 2}},  // empty batch
  };
  for (const auto& [input, output_size] : cases) {
    for (DType dtype : {DType::Float32, DType::Float64, DType::BFloat16}) {
      SCOPED_TRACE(fmt::format("input [{}] output [{}] {}", fmt::join(input, ", "),
                               fmt::join(output_size, ", "), dtype_name(dtype)));
      const Tensor x = sample(input, dtype, ++seed);
      const auto [values, indices] = adaptive_max_pool2d(x, output_size);
      const auto [gv, gi] = adaptive_max_pool2d(gpu(x), output_size);
      EXPECT_TRUE(same_values(cpu(gv), values));
      EXPECT_TRUE(same_values(cpu(gi), indices));
      const Tensor go = sample(values.sizes(), dtype, ++seed);
      const Tensor want = call("adaptive_max_pool2d_backward", {go, x, indices});
      const Tensor got = call("adaptive_max_pool2d_backward", {gpu(go), gpu(x), gpu(indices)});
      EXPECT_TRUE(close(got, want));
    }
  }
  const Tensor cl =
      sample({2, 3, 6, 6}, DType::Float32, ++seed).contiguous(MemoryFormat::ChannelsLast);
  const auto [values, indices] = adaptive_max_pool2d(cl, {4, 3});
  const auto [gv, gi] = adaptive_max_pool2d(gpu(cl), {4, 3});
  EXPECT_TRUE(same_values(cpu(gv), values));
  EXPECT_TRUE(same_values(cpu(gi), indices));
  EXPECT_EQ(gv.strides(), values.strides());
}

TEST(CudaPool, BackwardOperandsOnOtherDevicesRaise) {
  REQUIRE_GPU();
  const Tensor x = sample({1, 2, 4, 4}, DType::Float32, 1500);
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  const std::tuple<Tensor, Tensor> pooled = max_pool2d_with_indices(x, {2, 2});
  const Tensor& values = std::get<0>(pooled);
  const Tensor& indices = std::get<1>(pooled);
  EXPECT_TRUE(throws_error(
      [&] {
        call("max_pool2d_with_indices_backward",
             {gpu(values), gpu(x), Ints{2, 2}, Ints{2, 2}, Ints{0, 0}, Ints{1, 1}, false, indices});
      },
      {"device"}));
}

}  // namespace
}  // namespace kiln
