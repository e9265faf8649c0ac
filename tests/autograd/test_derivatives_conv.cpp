// Gradients of the convolution, pooling and matrix-product ops: hand-computed values, float32
// (oneDNN's backward primitives) against float64 (the im2col + GEMM path, a separate
// implementation), the layouts and masks of the backward ops, and a second derivative.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;

const ops::OpDef& op(const char* name) { return ops::OpRegistry::instance().get(name); }

// Deterministic values in [-1, 1] that differ between seeds.
Tensor rnd(IntList sizes, uint64_t seed, DType dt = kFloat32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (arange(n, TensorOptions(kFloat64)) * 0.731 + static_cast<double>(seed))
      .sin()
      .to(dt)
      .reshape(sizes);
}

// conv(x, w, b) with the given geometry; gradients of sum(y * v) for a fixed v.
struct ConvCase {
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation;
  bool transposed;
  std::vector<int64_t> output_padding;
  int64_t groups;
  bool channels_last;
};

std::vector<Tensor> conv_grads(const ConvCase& c, DType dt) {
  Tensor x = rnd(c.x, 1, dt), w = rnd(c.w, 2, dt);
  const int64_t out_channels = c.transposed ? c.w[1] * c.groups : c.w[0];
  Tensor b = rnd({out_channels}, 3, dt);
  if (c.channels_last) x = x.contiguous(MemoryFormat::ChannelsLast);
  x.requires_grad_();
  w.requires_grad_();
  b.requires_grad_();
  Tensor y = convolution(x, w, b, c.stride, c.padding, c.dilation, c.transposed, c.output_padding,
                         c.groups);
  Tensor v = rnd(y.sizes(), 4, dt);
  (y * v).sum().backward();
  return {x.grad(), w.grad(), b.grad()};
}

TEST(DerivativesConv, Float32GradientsMatchFloat64) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1, false},
      {{2, 3, 9, 8}, {5, 3, 3, 2}, {2, 3}, {1, 0}, {1, 2}, false, {0, 0}, 1, false},
      {{2, 4, 7, 7}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 2, false},
      {{2, 4, 7, 7}, {4, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 4, false},
      {{2, 8, 6, 6}, {5, 8, 1, 1}, {2, 2}, {0, 0}, {1, 1}, false, {0, 0}, 1, false},
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1, true},
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1, false},
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1, true},
      {{1, 4, 4, 5}, {4, 2, 3, 2}, {2, 1}, {0, 1}, {2, 1}, true, {1, 0}, 2, false},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {2, 2}, {1, 1}, {3, 3}, true, {2, 2}, 1, false},
      {{2, 3, 11}, {5, 3, 4}, {2}, {1}, {2}, false, {0}, 1, false},
      {{1, 2, 5, 4, 4},
       {3, 2, 2, 3, 2},
       {1, 2, 1},
       {1, 0, 1},
       {1, 1, 2},
       false,
       {0, 0, 0},
       1,
       false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<Tensor> f = conv_grads(cases[i], kFloat32);
    const std::vector<Tensor> d = conv_grads(cases[i], kFloat64);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(f[k].dtype(), kFloat32);
      EXPECT_TRUE(all_close(f[k].to(kFloat64), d[k], 1e-4, 1e-4)) << "case " << i << " grad " << k;
    }
  }
}

// The kernel (oneDNN for float32, im2col + GEMM for float64) against the decomposition into
// convolutions that double backward differentiates.
TEST(DerivativesConv, ConvolutionBackwardKernelMatchesDecomposition) {
  const ops::OpDef& backward = op("convolution_backward");
  int checked = 0;
  for (const ops::Sample& s : backward.samples()) {
    const DType dt = s.args[0].to_tensor().dtype();
    if (dt != kFloat32 && dt != kFloat64) continue;
    std::vector<Tensor> kernel;
    try {
      kernel = ops::call(backward, s.args);
    } catch (const Error&) {
      continue;  // the error samples
    }
    const std::vector<Tensor> reference = backward.decomposition(s.args);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(kernel[i].defined(), reference[i].defined()) << s.description;
      if (!kernel[i].defined()) continue;
      EXPECT_TRUE(all_close(kernel[i].to(kFloat64), reference[i].to(kFloat64), 1e-4, 1e-4))
          << s.description << " grad " << i;
    }
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST(DerivativesConv, HandComputed1d) {
  // y[i] = x[i] - x[i+1] + b; with grad_output g = (1, 2, 3):
  // grad_x[j] = g[j] - g[j-1] = (1, 1, 1, -3); grad_w[k] = sum_i g[i] x[i+k] = (14, 20);
  // grad_b = sum g = 6.
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, dt).view({1, 1, 4}).requires_grad_();
    Tensor w = tensor({1.0, -1.0}, dt).view({1, 1, 2}).requires_grad_();
    Tensor b = tensor({0.5}, dt).requires_grad_();
    Tensor y = conv1d(x, w, b);
    autograd::backward({y}, {tensor({1.0, 2.0, 3.0}, dt).view({1, 1, 3})});
    EXPECT_TRUE(all_close(x.grad().flatten(), tensor({1.0, 1.0, 1.0, -3.0}, kFloat64)));
    EXPECT_TRUE(all_close(w.grad().flatten(), tensor({14.0, 20.0}, kFloat64)));
    EXPECT_TRUE(all_close(b.grad(), tensor({6.0}, kFloat64)));
  }
}

TEST(DerivativesConv, ChannelsLastGradientsFollowTheInputAndWeightLayouts) {
  Tensor x = rnd({2, 3, 6, 6}, 5).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  Tensor w = rnd({4, 3, 3, 3}, 6).requires_grad_();
  conv2d(x, w, Tensor(), 1, 1).sum().backward();
  EXPECT_TRUE(x.grad().is_contiguous(MemoryFormat::ChannelsLast));
  Tensor go = ones({2, 4, 6, 6}).contiguous(MemoryFormat::ChannelsLast);
  auto g = ops::call(op("convolution_backward"),
                     {go, x.detach(), w.detach(), ops::IValue(), std::vector<int64_t>{1, 1},
                      std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, false,
                      std::vector<int64_t>{0, 0}, 1, std::vector<int64_t>{1, 1, 0}});
  EXPECT_TRUE(g[0].is_contiguous(MemoryFormat::ChannelsLast));
  // The weight's gradient keeps the weight's layout (it becomes w.grad without a copy).
  EXPECT_TRUE(g[1].is_contiguous());
  EXPECT_TRUE(w.grad().is_contiguous());
  EXPECT_FALSE(g[2].defined());
  const Tensor w_cl = w.detach().contiguous(MemoryFormat::ChannelsLast);
  auto h = ops::call(op("convolution_backward"),
                     {go, x.detach(), w_cl, ops::IValue(), std::vector<int64_t>{1, 1},
                      std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, false,
                      std::vector<int64_t>{0, 0}, 1, std::vector<int64_t>{0, 1, 0}});
  EXPECT_TRUE(h[1].is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(all_close(h[1], g[1], 1e-5, 1e-5));
}

TEST(DerivativesConv, OutputMaskSkipsGradients) {
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = rnd({1, 2, 5, 5}, 7, dt), w = rnd({3, 2, 3, 3}, 8, dt);
    Tensor go = rnd({1, 3, 3, 3}, 9, dt);
    auto g = ops::call(op("convolution_backward"),
                       {go, x, w, std::vector<int64_t>{3}, std::vector<int64_t>{1, 1},
                        std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}, false,
                        std::vector<int64_t>{0, 0}, 1, std::vector<int64_t>{0, 1, 1}});
    EXPECT_FALSE(g[0].defined());
    ASSERT_TRUE(g[1].defined());
    EXPECT_EQ(IntList(g[1].sizes()), IntList({3, 2, 3, 3}));
    EXPECT_TRUE(all_close(g[2], go.sum({0, 2, 3}), 1e-5, 1e-5));
  }
}

TEST(DerivativesConv, InputWithoutGradGetsNone) {
  Tensor x = rnd({1, 2, 5, 5}, 10);
  Tensor w = rnd({3, 2, 3, 3}, 11).requires_grad_();
  conv2d(x, w).sum().backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_TRUE(w.grad().defined());
}

TEST(DerivativesConv, SecondDerivativeThroughConvolutionBackward) {
  // y = conv1d(x, w) with 3 outputs: d sum(y)/dx[j] = sum of the taps covering j, so
  // d/dw sum_j (d sum(y)/dx[j]) = (number of outputs) per tap = (3, 3).
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, kFloat64).view({1, 1, 4}).requires_grad_();
  Tensor w = tensor({1.0, -1.0}, kFloat64).view({1, 1, 2}).requires_grad_();
  Tensor gx = autograd::grad({conv1d(x, w).sum()}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(all_close(gx.flatten(), tensor({1.0, 0.0, 0.0, -1.0}, kFloat64)));
  Tensor gw = autograd::grad({(gx * gx).sum()}, {w})[0];
  // sum_j gx_j^2 with gx = (w0, w0 + w1, w0 + w1, w1): d/dw0 = 2 w0 + 4 (w0 + w1) = 2,
  // d/dw1 = 4 (w0 + w1) + 2 w1 = -2.
  EXPECT_TRUE(all_close(gw.flatten(), tensor({2.0, -2.0}, kFloat64)));
}

TEST(DerivativesConv, MaxPoolGradientGoesToEachMaximum) {
  // 2x2 windows over a 4x4 plane; the maxima are 5, 7, 13, 15 (0-based positions).
  Tensor x =
      tensor(
          {{0.0, 1.0, 2.0, 3.0}, {4.0, 9.0, 6.0, 8.0}, {1.0, 0.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}},
          kFloat64)
          .view({1, 1, 4, 4})
          .requires_grad_();
  autograd::backward({max_pool2d(x, {2, 2})},
                     {tensor({1.0, 2.0, 3.0, 4.0}, kFloat64).view({1, 1, 2, 2})});
  EXPECT_TRUE(all_close(x.grad().flatten(), tensor({0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0,
                                                    0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 4.0},
                                                   kFloat64)));
  // Overlapping windows (stride 1): a maximum shared by windows collects each one's gradient.
  Tensor y = tensor({{1.0, 2.0, 1.0}, {2.0, 9.0, 2.0}, {1.0, 2.0, 1.0}}, kFloat32)
                 .view({1, 3, 3})
                 .requires_grad_();
  max_pool2d(y, {2, 2}, {1, 1}).sum().backward();
  EXPECT_TRUE(all_close(y.grad().flatten(),
                        tensor({0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0}, kFloat64)));
}

TEST(DerivativesConv, AvgPoolGradientSpreadsOverWindows) {
  // 3x3 windows, stride 2, padding 1 over a 3x3 plane: 2x2 outputs, each window covering a 2x2
  // corner of the input. Not counting padding, each divisor is 4; counting it, 9.
  for (bool count_pad : {false, true}) {
    Tensor x = ones({1, 1, 3, 3}, TensorOptions(kFloat64)).requires_grad_();
    avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, count_pad).sum().backward();
    const double d = count_pad ? 9.0 : 4.0;
    // The centre is in all four windows, edges in two, corners in one.
    EXPECT_TRUE(all_close(
        x.grad().flatten(),
        tensor({1 / d, 2 / d, 1 / d, 2 / d, 4 / d, 2 / d, 1 / d, 2 / d, 1 / d}, kFloat64)));
  }
  Tensor x = ones({1, 1, 2, 2}, TensorOptions(kFloat64)).requires_grad_();
  avg_pool2d(x, {2, 2}, {}, {0, 0}, false, true, 2).sum().backward();  // divisor_override 2
  EXPECT_TRUE(all_close(x.grad().flatten(), tensor({0.5, 0.5, 0.5, 0.5}, kFloat64)));
}

TEST(DerivativesConv, AdaptivePoolGradients) {
  // 3x3 to 2x2: windows rows/cols [0, 2) and [1, 3) of 4 elements each, overlapping at the centre.
  Tensor x = ones({1, 2, 3, 3}).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  adaptive_avg_pool2d(x, {2, 2}).sum().backward();
  EXPECT_TRUE(x.grad().is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(all_close(x.grad()[0][1].contiguous().flatten(),
                        tensor({0.25, 0.5, 0.25, 0.5, 1.0, 0.5, 0.25, 0.5, 0.25}, kFloat64)));
  Tensor y = tensor({{1.0, 5.0, 2.0}, {0.0, 3.0, 4.0}, {7.0, 1.0, 0.0}}, kFloat64)
                 .view({1, 1, 3, 3})
                 .requires_grad_();
  // Windows: top-left {1,5,0,3} -> 5, top-right {5,2,3,4} -> 5, bottom-left {0,3,7,1} -> 7,
  // bottom-right {3,4,1,0} -> 4.
  std::get<0>(adaptive_max_pool2d(y, {2, 2})).sum().backward();
  EXPECT_TRUE(all_close(y.grad().flatten(),
                        tensor({0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0}, kFloat64)));
}

TEST(DerivativesConv, AddmmScalesByBetaAndAlpha) {
  // out = beta * self + alpha * (A @ B): d/dself = beta (summed over the broadcast rows),
  // d/dA = alpha * 1 @ B^T, d/dB = alpha * A^T @ 1.
  Tensor self = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor a = tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, kFloat64).requires_grad_();
  Tensor b = tensor({{1.0, -1.0}, {2.0, 0.0}}, kFloat64).requires_grad_();
  addmm(self, a, b, 2.0, 0.5).sum().backward();
  EXPECT_TRUE(all_close(self.grad(), tensor({6.0, 6.0}, kFloat64)));
  EXPECT_TRUE(all_close(a.grad(), tensor({{0.0, 1.0}, {0.0, 1.0}, {0.0, 1.0}}, kFloat64)));
  EXPECT_TRUE(all_close(b.grad(), tensor({{4.5, 4.5}, {6.0, 6.0}}, kFloat64)));
}

}  // namespace
}  // namespace kiln
