// Convolutions against an independent reference: a direct float64 nested-loop convolution (and,
// for transposed convolutions, its adjoint written as a scatter), written here from the formulas.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "ops/conv/onednn_conv.h"
#include "test_util.h"

#include <array>
#include <string>
#include <vector>

namespace kiln {
namespace {

using Ints = std::vector<int64_t>;
using testing::all_close;
using testing::throws_error;

struct Params {
  Ints stride, padding, dilation;
  bool transposed = false;
  Ints output_padding;
  int64_t groups = 1;
};

// The direct definition. Spatial dims are padded to 3 (leading size-1 dims) so that one loop
// nest serves 1-, 2- and 3-d convolutions.
Tensor reference(const Tensor& x, const Tensor& w, const Tensor& b, const Params& p) {
  const int64_t k = x.dim() - 2;
  const auto xv = x.to(kFloat64).contiguous().tolist<double>();
  const auto wv = w.to(kFloat64).contiguous().tolist<double>();
  std::array<int64_t, 3> in{1, 1, 1}, ker{1, 1, 1}, st{1, 1, 1}, pd{0, 0, 0}, dl{1, 1, 1},
      out{1, 1, 1};
  for (int64_t i = 0; i < k; ++i) {
    const size_t d = static_cast<size_t>(3 - k + i), s = static_cast<size_t>(i);
    in[d] = x.size(2 + i);
    ker[d] = w.size(2 + i);
    st[d] = p.stride[s];
    pd[d] = p.padding[s];
    dl[d] = p.dilation[s];
    out[d] = p.transposed
                 ? (in[d] - 1) * st[d] - 2 * pd[d] + dl[d] * (ker[d] - 1) + p.output_padding[s] + 1
                 : (in[d] + 2 * pd[d] - dl[d] * (ker[d] - 1) - 1) / st[d] + 1;
  }
  const int64_t n_batch = x.size(0), c_in = x.size(1), g = p.groups;
  const int64_t c_out = p.transposed ? w.size(1) * g : w.size(0);
  const int64_t icg = c_in / g, ocg = c_out / g;
  const int64_t in_n = in[0] * in[1] * in[2], out_n = out[0] * out[1] * out[2];
  const int64_t ker_n = ker[0] * ker[1] * ker[2];
  std::vector<double> y(static_cast<size_t>(n_batch * c_out * out_n), 0.0);
  auto at = [](const std::array<int64_t, 3>& dims, int64_t a, int64_t bb, int64_t c) {
    return (a * dims[1] + bb) * dims[2] + c;
  };
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t ic = 0; ic < c_in; ++ic) {
      const int64_t grp = ic / icg;
      for (int64_t oc_l = 0; oc_l < ocg; ++oc_l) {
        const int64_t oc = grp * ocg + oc_l;
        for (int64_t kd = 0; kd < ker[0]; ++kd)
          for (int64_t kh = 0; kh < ker[1]; ++kh)
            for (int64_t kw = 0; kw < ker[2]; ++kw) {
              const int64_t tap = at(ker, kd, kh, kw);
              // Forward weight [OC, IC/g, k]; transposed weight [IC, OC/g, k].
              const double wt = p.transposed
                                    ? wv[static_cast<size_t>((ic * ocg + oc_l) * ker_n + tap)]
                                    : wv[static_cast<size_t>((oc * icg + ic % icg) * ker_n + tap)];
              if (!p.transposed) {
                // y[o] += x[o * s - p + k * d] * w
                for (int64_t od = 0; od < out[0]; ++od)
                  for (int64_t oh = 0; oh < out[1]; ++oh)
                    for (int64_t ow = 0; ow < out[2]; ++ow) {
                      const int64_t id = od * st[0] - pd[0] + kd * dl[0];
                      const int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                      const int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                      if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2])
                        continue;
                      y[static_cast<size_t>((n * c_out + oc) * out_n + at(out, od, oh, ow))] +=
                          xv[static_cast<size_t>((n * c_in + ic) * in_n + at(in, id, ih, iw))] * wt;
                    }
              } else {
                // The adjoint: x[i] scatters into y[i * s - p + k * d].
                for (int64_t id = 0; id < in[0]; ++id)
                  for (int64_t ih = 0; ih < in[1]; ++ih)
                    for (int64_t iw = 0; iw < in[2]; ++iw) {
                      const int64_t od = id * st[0] - pd[0] + kd * dl[0];
                      const int64_t oh = ih * st[1] - pd[1] + kh * dl[1];
                      const int64_t ow = iw * st[2] - pd[2] + kw * dl[2];
                      if (od < 0 || od >= out[0] || oh < 0 || oh >= out[1] || ow < 0 ||
                          ow >= out[2])
                        continue;
                      y[static_cast<size_t>((n * c_out + oc) * out_n + at(out, od, oh, ow))] +=
                          xv[static_cast<size_t>((n * c_in + ic) * in_n + at(in, id, ih, iw))] * wt;
                    }
              }
            }
      }
    }
  }
  if (b.defined()) {
    const auto bv = b.to(kFloat64).tolist<double>();
    for (int64_t n = 0; n < n_batch; ++n)
      for (int64_t oc = 0; oc < c_out; ++oc)
        for (int64_t i = 0; i < out_n; ++i)
          y[static_cast<size_t>((n * c_out + oc) * out_n + i)] += bv[static_cast<size_t>(oc)];
  }
  Ints shape{n_batch, c_out};
  for (int64_t i = 0; i < k; ++i) shape.push_back(out[static_cast<size_t>(3 - k + i)]);
  return from_vector(y, shape, kFloat64);
}

Tensor run(const Tensor& x, const Tensor& w, const Tensor& b, const Params& p) {
  return convolution(x, w, b, p.stride, p.padding, p.dilation, p.transposed, p.output_padding,
                     p.groups);
}

Tensor rnd(IntList sizes, DType dt = kFloat32) { return randn(sizes, dt); }

class ConvTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(7); }
};

TEST_F(ConvTest, ForwardSweep2d) {
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-10;
    for (int64_t stride : {1, 2})
      for (int64_t pad : {0, 1, 2})
        for (int64_t dil : {1, 2})
          for (int64_t groups : {1, 2})
            for (bool bias : {false, true}) {
              Tensor x = rnd({2, 4, 7, 8}, dt), w = rnd({6, 4 / groups, 3, 2}, dt);
              Tensor b = bias ? rnd({6}, dt) : Tensor();
              Params p{{stride, stride}, {pad, pad + 1}, {dil, 1}, false, {0, 0}, groups};
              Tensor y = run(x, w, b, p);
              EXPECT_EQ(y.dtype(), dt);
              EXPECT_TRUE(all_close(y, reference(x, w, b, p), tol, tol))
                  << dtype_name(dt) << " s" << stride << " p" << pad << " d" << dil << " g"
                  << groups << " bias " << bias;
            }
  }
}

TEST_F(ConvTest, Depthwise) {
  Tensor x = rnd({2, 6, 9, 9});
  for (int64_t mult : {1, 2}) {
    Tensor w = rnd({6 * mult, 1, 3, 3}), b = rnd({6 * mult});
    Params p{{2, 1}, {1, 1}, {1, 1}, false, {0, 0}, 6};
    EXPECT_TRUE(all_close(run(x, w, b, p), reference(x, w, b, p), 1e-4, 1e-4)) << mult;
  }
}

TEST_F(ConvTest, OneAndThreeDims) {
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x1 = rnd({3, 4, 17}, dt), w1 = rnd({6, 2, 4}, dt), b1 = rnd({6}, dt);
    Tensor y1 = conv1d(x1, w1, b1, 2, 3, 2, 2);
    EXPECT_TRUE(all_close(y1, reference(x1, w1, b1, {{2}, {3}, {2}, false, {0}, 2}), 1e-4, 1e-4));
    Tensor x3 = rnd({2, 3, 5, 6, 4}, dt), w3 = rnd({4, 3, 2, 3, 2}, dt);
    Tensor y3 = conv3d(x3, w3, {}, {1, 2, 1}, {1, 0, 1}, {2, 1, 1});
    EXPECT_TRUE(
        all_close(y3, reference(x3, w3, {}, {{1, 2, 1}, {1, 0, 1}, {2, 1, 1}, false, {0, 0, 0}, 1}),
                  1e-4, 1e-4));
  }
}

TEST_F(ConvTest, TransposedSweep) {
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-10;
    for (int64_t stride : {1, 2, 3})
      for (int64_t pad : {0, 1})
        for (int64_t dil : {1, 2})
          for (int64_t groups : {1, 2})
            for (int64_t op = 0; op < std::max(stride, dil); ++op) {
              Tensor x = rnd({2, 4, 5, 4}, dt), w = rnd({4, 3, 3, 2}, dt),
                     b = rnd({3 * groups}, dt);
              Params p{{stride, 1}, {pad, 0}, {dil, 1}, true, {op, 0}, groups};
              EXPECT_TRUE(all_close(run(x, w, b, p), reference(x, w, b, p), tol, tol))
                  << dtype_name(dt) << " s" << stride << " p" << pad << " d" << dil << " g"
                  << groups << " op" << op;
            }
  }
}

TEST_F(ConvTest, TransposedComposites) {
  Tensor x1 = rnd({2, 4, 6}), w1 = rnd({4, 3, 3}), b1 = rnd({3});
  EXPECT_TRUE(all_close(conv_transpose1d(x1, w1, b1, 2, 1, 1),
                        reference(x1, w1, b1, {{2}, {1}, {1}, true, {1}, 1}), 1e-4, 1e-4));
  Tensor x2 = rnd({2, 4, 5, 5}), w2 = rnd({4, 2, 3, 3});
  EXPECT_TRUE(all_close(conv_transpose2d(x2, w2, {}, 2, 1, {1, 0}, 2, {1, 2}),
                        reference(x2, w2, {}, {{2, 2}, {1, 1}, {1, 2}, true, {1, 0}, 2}), 1e-4,
                        1e-4));
  // Unbatched: (C, H, W) in and out.
  Tensor y = conv_transpose2d(x2[0], w2, {}, 2);
  EXPECT_EQ(y.sizes(), IntList({2, 11, 11}));
  EXPECT_TRUE(all_close(
      y, reference(x2.narrow(0, 0, 1), w2, {}, {{2, 2}, {0, 0}, {1, 1}, true, {0, 0}, 1})[0], 1e-4,
      1e-4));
}

// The input padded with `left` and `right` zeros along every spatial dim (built with kiln's
// narrow and copy_, which other suites test).
Tensor zero_pad(const Tensor& x, Ints left, Ints right) {
  DimVector sizes(x.sizes().begin(), x.sizes().end());
  for (size_t i = 0; i < left.size(); ++i) sizes[2 + i] += left[i] + right[i];
  Tensor padded = zeros(sizes, x.dtype());
  Tensor inner = padded;
  for (size_t i = 0; i < left.size(); ++i) {
    const auto d = static_cast<int64_t>(2 + i);
    inner = inner.narrow(d, left[i], x.size(d));
  }
  inner.copy_(x);
  return padded;
}

TEST_F(ConvTest, SameAndValidPadding) {
  Tensor x = rnd({2, 3, 7, 8});
  for (Ints kernel : {Ints{3, 3}, Ints{4, 2}, Ints{2, 5}})
    for (int64_t dil : {1, 2}) {
      Tensor w = rnd({4, 3, kernel[0], kernel[1]}), b = rnd({4});
      Tensor y = conv2d(x, w, b, 1, "same", dil);
      EXPECT_EQ(y.sizes(), IntList({2, 4, 7, 8}));
      // PyTorch puts the odd element of the total padding d * (k - 1) on the right.
      Ints left, right;
      for (int64_t k : kernel) {
        left.push_back(dil * (k - 1) / 2);
        right.push_back(dil * (k - 1) - dil * (k - 1) / 2);
      }
      Tensor expect =
          reference(zero_pad(x, left, right), w, b, {{1, 1}, {0, 0}, {dil, dil}, false, {0, 0}, 1});
      EXPECT_TRUE(all_close(y, expect, 1e-4, 1e-4)) << kernel[0] << "x" << kernel[1] << " d" << dil;
    }
  Tensor w = rnd({4, 3, 3, 2});
  EXPECT_TRUE(all_close(conv2d(x, w, {}, 1, "valid"),
                        reference(x, w, {}, {{1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1}), 1e-4,
                        1e-4));
  Tensor x1 = rnd({2, 3, 10}, kFloat64), w1 = rnd({5, 3, 4}, kFloat64);
  Tensor y1 = conv1d(x1, w1, {}, 1, "same");
  EXPECT_TRUE(all_close(
      y1, reference(zero_pad(x1, {1}, {2}), w1, {}, {{1}, {0}, {1}, false, {0}, 1}), 1e-10, 1e-10));
  // Channels-last input keeps its format through the explicit padding.
  Tensor ycl = conv2d(x.contiguous(MemoryFormat::ChannelsLast), w, {}, 1, "same");
  EXPECT_TRUE(ycl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(all_close(ycl, conv2d(x, w, {}, 1, "same"), 1e-5, 1e-5));
}

TEST_F(ConvTest, ChannelsLastInAndOut) {
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-10;
    Tensor x = rnd({2, 6, 9, 7}, dt), w = rnd({8, 3, 3, 3}, dt), b = rnd({8}, dt);
    Tensor xcl = x.contiguous(MemoryFormat::ChannelsLast);
    Params p{{2, 1}, {1, 1}, {1, 2}, false, {0, 0}, 2};
    Tensor y = run(xcl, w, b, p);
    EXPECT_EQ(y.sizes(), IntList({2, 8, 5, 5}));
    EXPECT_EQ(y.strides(), IntList({200, 1, 40, 8}));  // NHWC
    EXPECT_TRUE(all_close(y, reference(x, w, b, p), tol, tol));
    // A channels-last weight also gives a channels-last output (PyTorch's CPU rule).
    Tensor y2 = run(x, w.contiguous(MemoryFormat::ChannelsLast), b, p);
    EXPECT_TRUE(y2.is_contiguous(MemoryFormat::ChannelsLast));
    EXPECT_TRUE(all_close(y2, reference(x, w, b, p), tol, tol));
    // Transposed.
    Tensor wt = rnd({6, 2, 3, 3}, dt);
    Params pt{{2, 2}, {1, 0}, {1, 1}, true, {1, 1}, 1};
    Tensor yt = run(xcl, wt, {}, pt);
    EXPECT_TRUE(yt.is_contiguous(MemoryFormat::ChannelsLast));
    EXPECT_FALSE(yt.is_contiguous());
    EXPECT_TRUE(all_close(yt, reference(x, wt, {}, pt), tol, tol));
  }
  // NCHW in, NCHW out.
  Tensor y = conv2d(rnd({2, 3, 5, 5}), rnd({4, 3, 3, 3}));
  EXPECT_TRUE(y.is_contiguous());
}

TEST_F(ConvTest, NonContiguousInputs) {
  Tensor big = rnd({2, 8, 9, 14});
  Tensor x = big.slice(1, 0, 8, 2).slice(3, 0, 14, 2);  // strided view [2, 4, 9, 7]
  Tensor xt = rnd({2, 4, 7, 9}).transpose(2, 3);        // [2, 4, 9, 7], H and W swapped
  Tensor w = rnd({4, 3, 3, 2}).transpose(0, 1);         // [3, 4, 3, 2] weight, transposed view
  Params p{{1, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1};
  for (const Tensor& in : {x, xt}) {
    ASSERT_FALSE(in.is_contiguous());
    EXPECT_TRUE(all_close(run(in, w, {}, p), reference(in, w, {}, p), 1e-4, 1e-4));
  }
  Tensor xd = x.to(kFloat64), wd = w.to(kFloat64);
  EXPECT_TRUE(all_close(run(xd.transpose(2, 3).transpose(2, 3), wd, {}, p),
                        reference(xd, wd, {}, p), 1e-10, 1e-10));
}

TEST_F(ConvTest, EmptyInputs) {
  Tensor y = conv2d(rnd({0, 3, 5, 5}), rnd({4, 3, 3, 3}), rnd({4}));
  EXPECT_EQ(y.sizes(), IntList({0, 4, 3, 3}));
  Tensor yt = conv_transpose2d(rnd({0, 3, 5, 5}), rnd({3, 2, 3, 3}));
  EXPECT_EQ(yt.sizes(), IntList({0, 2, 7, 7}));
  // No input channels: every output is the bias.
  Tensor b = rnd({4});
  Tensor yc = conv2d(rnd({2, 0, 5, 5}), rnd({4, 0, 3, 3}), b);
  EXPECT_EQ(yc.sizes(), IntList({2, 4, 3, 3}));
  EXPECT_TRUE(all_close(yc, b.view({1, 4, 1, 1}).expand({2, 4, 3, 3}), 0, 0));
}

TEST_F(ConvTest, LowPrecisionAndIntegers) {
  Tensor x = rnd({2, 4, 6, 6}), w = rnd({6, 2, 3, 3}), b = rnd({6});
  Params p{{1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 2};
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor y = run(x.to(dt), w.to(dt), b.to(dt), p);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(all_close(y, reference(x.to(dt), w.to(dt), b.to(dt), p), 2e-2, 5e-2))
        << dtype_name(dt);
  }
  Tensor xi = (rnd({2, 4, 6, 6}) * 3).to(kInt64), wi = (rnd({6, 2, 3, 3}) * 3).to(kInt64);
  Tensor yi = run(xi, wi, {}, p);
  EXPECT_EQ(yi.dtype(), kInt64);
  EXPECT_TRUE(all_close(yi, reference(xi, wi, {}, p), 0, 0));
  Tensor wti = (rnd({4, 3, 2, 2}) * 3).to(kInt32);
  Params pt{{2, 2}, {0, 0}, {1, 1}, true, {1, 0}, 2};
  EXPECT_TRUE(all_close(run(xi.to(kInt32), wti, {}, pt), reference(xi, wti, {}, pt), 0, 0));
}

TEST_F(ConvTest, Unbatched) {
  Tensor x = rnd({3, 8, 8}), w = rnd({5, 3, 3, 3});
  Tensor y = conv2d(x, w, {}, 1, 1);
  EXPECT_EQ(y.sizes(), IntList({5, 8, 8}));
  EXPECT_TRUE(all_close(y, conv2d(x.unsqueeze(0), w, {}, 1, 1)[0], 0, 0));
  Tensor y1 = conv1d(rnd({3, 8}), rnd({2, 3, 3}));
  EXPECT_EQ(y1.sizes(), IntList({2, 6}));
}

TEST_F(ConvTest, MetaDevice) {
  auto meta = TensorOptions(kFloat32).device(Device::meta());
  Tensor x = empty_strided({2, 3, 9, 9}, {243, 1, 27, 3}, meta);  // channels-last
  Tensor y = conv2d(x, empty({4, 3, 3, 3}, meta), {}, 2, 1);
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.sizes(), IntList({2, 4, 5, 5}));
  EXPECT_EQ(y.strides(), IntList({100, 1, 20, 4}));
  Tensor yt = conv_transpose2d(empty({2, 3, 4, 4}, meta), empty({3, 5, 3, 3}, meta), {}, 2, 1, 1);
  EXPECT_EQ(yt.sizes(), IntList({2, 5, 8, 8}));
  Tensor ys = conv2d(empty({1, 3, 6, 6}, meta), empty({2, 3, 4, 4}, meta), {}, 1, "same");
  EXPECT_EQ(ys.sizes(), IntList({1, 2, 6, 6}));
}

TEST_F(ConvTest, ThreadCountsAgree) {
  Tensor x = rnd({4, 16, 20, 20}), w = rnd({32, 16, 3, 3});
  const int before = get_num_threads();
  set_num_threads(1);
  Tensor y1 = conv2d(x, w, {}, 1, 1);
  set_num_threads(2);
  Tensor y2 = conv2d(x, w, {}, 1, 1);
  set_num_threads(before);
  EXPECT_TRUE(all_close(y1, y2, 1e-5, 1e-5));
  EXPECT_TRUE(
      all_close(y1, reference(x, w, {}, {{1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1}), 1e-4, 1e-4));
}

TEST_F(ConvTest, PrimitiveCacheReusedAndBounded) {
  Tensor x = rnd({1, 2, 6, 6}), w = rnd({3, 2, 3, 3});
  conv2d(x, w);
  const size_t after_first = ops::conv::onednn_cache_size();
  for (int i = 0; i < 5; ++i) conv2d(rnd({1, 2, 6, 6}), w);
  EXPECT_EQ(ops::conv::onednn_cache_size(), after_first);
  for (int64_t width = 3; width < 3 + static_cast<int64_t>(ops::conv::kOnednnCacheCapacity) + 10;
       ++width) {
    conv1d(rnd({1, 1, width}), rnd({1, 1, 3}));
  }
  EXPECT_EQ(ops::conv::onednn_cache_size(), ops::conv::kOnednnCacheCapacity);
}

TEST_F(ConvTest, Errors) {
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({8, 4, 10, 10}), rnd({64, 3, 7, 7}));
      },
      {"convolution", "[64, 3, 7, 7]", "[8, 4, 10, 10]", "3 channels", "4 channels"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 2, 3, 3}), {}, 1, 0, 1, 2);
      },
      {"groups=2", "divisible by 2", "[3, 2, 3, 3]"}));
  EXPECT_TRUE(throws_error(
      [] {
        convolution(rnd({1, 4, 5, 5}), rnd({3, 4, 3}), {}, {1}, {0}, {1}, false, {0}, 1);
      },
      {"3-dimensional weight", "4-dimensional input"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 2, 2}), rnd({3, 4, 3, 3}));
      },
      {"padded input size per channel: (2 x 2)", "Kernel size: (3 x 3)"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, {1, 0});
      },
      {"non-positive stride", "[1, 0]"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, 1, 0, 0);
      },
      {"dilation should be greater than zero"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), rnd({4}));
      },
      {"bias", "3 elements", "[4]"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv_transpose2d(rnd({1, 4, 5, 5}), rnd({4, 3, 3, 3}), rnd({4}));
      },
      {"transposed=1", "3 elements"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv_transpose2d(rnd({1, 4, 5, 5}), rnd({4, 3, 3, 3}), {}, 2, 0, {2, 0});
      },
      {"output padding must be smaller than either stride or dilation"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv_transpose2d(rnd({1, 5, 5, 5}), rnd({4, 3, 3, 3}));
      },
      {"transposed=1", "4 channels", "5 channels"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, 2, "same");
      },
      {"padding='same'", "strided"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, 1, "full");
      },
      {"invalid padding string 'full'"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({4, 5}), rnd({3, 4, 3, 3}));
      },
      {"conv2d", "3D (unbatched) or 4D (batched)", "[4, 5]"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, 1, -1);
      },
      {"negative padding"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv2d(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, 1, 0, 1, 0);
      },
      {"non-positive groups"}));
  EXPECT_TRUE(throws_error(
      [] {
        convolution(rnd({1, 4, 5, 5}), rnd({3, 4, 3, 3}), {}, {1, 1, 1}, {0}, {1}, false, {0}, 1);
      },
      {"stride", "list of 2 values"}));
  EXPECT_TRUE(throws_error(
      [] {
        conv_transpose2d(rnd({1, 1, 2, 2}), rnd({1, 1, 1, 1}), {}, 1, 1);
      },
      {"Output size is too small"}));
  try {
    conv2d(rnd({1, 3, 5, 5}), rnd({3, 3, 3, 3}, kFloat64));
    ADD_FAILURE() << "mixed dtypes did not raise";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("weight type (float64)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
