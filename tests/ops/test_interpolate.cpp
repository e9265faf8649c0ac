// interpolate and the upsample ops: nearest / nearest-exact by hand, linear and bilinear against
// a float64 loop reference written from the align_corners formulas, size vs scale_factor,
// channels-last layouts, dtypes, out= forms, pixel (un)shuffle, and every kind of bad input.
#include "test_view_util.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/resample.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

// Source position of output j (float64), PyTorch's documented linear-interpolation geometry.
double source_position(int64_t j, int64_t in, int64_t out, bool align_corners,
                       std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<double>(j) * (in - 1) / (out - 1) : 0.0;
  const double ratio = scale ? 1.0 / *scale : static_cast<double>(in) / out;
  return std::max((static_cast<double>(j) + 0.5) * ratio - 0.5, 0.0);
}

// Bilinear upsampling of x (N, C, H, W) read as float64, to (oh, ow).
Tensor bilinear_reference(const Tensor& x, int64_t oh, int64_t ow, bool align_corners,
                          std::optional<double> sh = std::nullopt,
                          std::optional<double> sw = std::nullopt) {
  const int64_t n = x.size(0), c = x.size(1), ih = x.size(2), iw = x.size(3);
  std::vector<double> in = values(x), out;
  for (int64_t p = 0; p < n * c; ++p) {
    for (int64_t y = 0; y < oh; ++y) {
      const double sy = source_position(y, ih, oh, align_corners, sh);
      const int64_t y0 = std::min(static_cast<int64_t>(std::floor(sy)), ih - 1);
      const int64_t y1 = std::min(y0 + 1, ih - 1);
      const double ly = sy - y0;
      for (int64_t xo = 0; xo < ow; ++xo) {
        const double sx = source_position(xo, iw, ow, align_corners, sw);
        const int64_t x0 = std::min(static_cast<int64_t>(std::floor(sx)), iw - 1);
        const int64_t x1 = std::min(x0 + 1, iw - 1);
        const double lx = sx - x0;
        auto at = [&](int64_t yy, int64_t xx) {
          return in[static_cast<size_t>(p * ih * iw + yy * iw + xx)];
        };
        out.push_back((1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
                      ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1)));
      }
    }
  }
  return from_vector<double>(out, {n, c, oh, ow});
}

TEST(InterpolateNearest, HandComputed) {
  Tensor x = iota({1, 1, 3});  // 0 1 2
  EXPECT_EQ(values(upsample_nearest1d(x, {6})), (V{0, 0, 1, 1, 2, 2}));
  // 3 -> 5: floor(j * 3/5) = 0 0 1 1 2; nearest-exact floor((j + .5) * 3/5) = 0 0 1 2 2.
  EXPECT_EQ(values(upsample_nearest1d(x, {5})), (V{0, 0, 1, 1, 2}));
  EXPECT_EQ(values(upsample_nearest_exact1d(x, {5})), (V{0, 0, 1, 2, 2}));
  // Downsampling 3 -> 2: floor(j * 1.5) = 0 1; exact floor((j + .5) * 1.5) = 0 2.
  EXPECT_EQ(values(upsample_nearest1d(x, {2})), (V{0, 1}));
  EXPECT_EQ(values(upsample_nearest_exact1d(x, {2})), (V{0, 2}));
  Tensor img = iota({1, 1, 2, 2});  // 0 1 / 2 3
  EXPECT_EQ(values(upsample_nearest2d(img, {3, 4})), (V{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3}));
  // An explicit scale replaces in/out: scale 3 over 2 -> 5 samples at floor(j / 3).
  EXPECT_EQ(values(upsample_nearest1d(iota({1, 1, 2}), {5}, 3.0)), (V{0, 0, 0, 1, 1}));
}

TEST(InterpolateNearest, InterpolateFunctionSizeAndScale) {
  Tensor img = iota({1, 2, 2, 3});
  Tensor a = interpolate(img, std::vector<int64_t>{4, 6}, std::nullopt);
  EXPECT_EQ(a.sizes(), IntList({1, 2, 4, 6}));
  EXPECT_EQ(values(a), values(upsample_nearest2d(img, {4, 6})));
  // One entry applies to every spatial dim.
  EXPECT_EQ(interpolate(img, std::nullopt, std::vector<double>{2.0}).sizes(),
            IntList({1, 2, 4, 6}));
  // A factor passed through is what the kernel scales by; recomputed, the size ratio is.
  Tensor row = iota({1, 1, 10});
  Tensor passed = interpolate(row, std::nullopt, std::vector<double>{0.35});
  Tensor recomputed =
      interpolate(row, std::nullopt, std::vector<double>{0.35}, "nearest", std::nullopt, true);
  // 10 * .35 = 3 outputs; factor: floor(j / .35) = 0 2 5; recomputed: floor(j * 10/3) = 0 3 6.
  EXPECT_EQ(values(passed), (V{0, 2, 5}));
  EXPECT_EQ(values(recomputed), (V{0, 3, 6}));
  Tensor exact = interpolate(row, std::vector<int64_t>{4}, std::nullopt, "nearest-exact");
  EXPECT_EQ(values(exact), (V{1, 3, 6, 8}));  // floor((j + .5) * 2.5)
}

TEST(InterpolateNearest, ChannelsLastDtypesAndEmpty) {
  Tensor img = iota({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  Tensor up = upsample_nearest2d(img, {7, 9});
  EXPECT_TRUE(up.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(values(up), values(upsample_nearest2d(img.contiguous(), {7, 9})));
  Tensor i = upsample_nearest1d(iota({1, 1, 2}, kInt32), {4});
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_EQ(values(i), (V{0, 0, 1, 1}));
  Tensor u8 = upsample_nearest2d(iota({1, 1, 1, 2}, kUInt8), {1, 4});
  EXPECT_EQ(values(u8), (V{0, 0, 1, 1}));
  EXPECT_EQ(upsample_nearest2d(empty({0, 2, 3, 3}), {5, 5}).sizes(), IntList({0, 2, 5, 5}));
  // Non-contiguous input.
  Tensor strided = iota({1, 2, 3, 8}).slice(3, 0, 8, 2);
  EXPECT_EQ(values(upsample_nearest2d(strided, {5, 7})),
            values(upsample_nearest2d(strided.contiguous(), {5, 7})));
}

TEST(InterpolateLinear, Linear1dAgainstReference) {
  Tensor x = from_vector<double>({1.0, 3.0, 7.0}, {1, 1, 3});
  // align_corners: positions 0, .5, 1, 1.5, 2 -> 1 2 3 5 7.
  EXPECT_TRUE(all_close(upsample_linear1d(x, {5}, true),
                        from_vector<double>({1.0, 2.0, 3.0, 5.0, 7.0}, {1, 1, 5}), 1e-12, 1e-12));
  // half-pixel: positions max(0,(j+.5)*.6-.5) = 0, .4, 1, 1.6, 2.2 (clamped to the last).
  EXPECT_TRUE(all_close(upsample_linear1d(x, {5}, false),
                        from_vector<double>({1.0, 1.8, 3.0, 5.4, 7.0}, {1, 1, 5}), 1e-12, 1e-12));
  for (bool align : {false, true}) {
    Tensor in = testing::iota({2, 3, 7}).mul(0.37).sin();
    Tensor got = upsample_linear1d(in, {12}, align);
    Tensor ref = bilinear_reference(in.unsqueeze(2), 1, 12, align).squeeze(2);
    EXPECT_TRUE(all_close(got, ref, 1e-12, 1e-12)) << align;
  }
}

TEST(InterpolateLinear, Bilinear2dAgainstReference) {
  Tensor in = testing::iota({2, 3, 5, 6}).mul(0.113).cos();
  for (bool align : {false, true}) {
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{9, 11}, {3, 4}, {5, 6}, {1, 1}}) {
      Tensor ref = bilinear_reference(in, oh, ow, align);
      EXPECT_TRUE(all_close(upsample_bilinear2d(in, {oh, ow}, align), ref, 1e-12, 1e-12))
          << align << " " << oh << "x" << ow;
      Tensor f = upsample_bilinear2d(in.to(kFloat32), {oh, ow}, align);
      EXPECT_EQ(f.dtype(), kFloat32);
      EXPECT_TRUE(all_close(f, ref, 1e-5, 1e-5)) << align << " " << oh << "x" << ow;
    }
  }
  // Explicit scales (used when align_corners is false).
  Tensor scaled = upsample_bilinear2d(in, {12, 15}, false, 2.4, 2.5);
  EXPECT_TRUE(all_close(scaled, bilinear_reference(in, 12, 15, false, 2.4, 2.5), 1e-12, 1e-12));
  // Through interpolate, with a scale factor passed through to the kernel.
  Tensor via = interpolate(in, std::nullopt, std::vector<double>{1.7, 2.0}, "bilinear", false);
  EXPECT_EQ(via.sizes(), IntList({2, 3, 8, 12}));
  EXPECT_TRUE(all_close(via, bilinear_reference(in, 8, 12, false, 1.7, 2.0), 1e-12, 1e-12));
}

TEST(InterpolateLinear, ChannelsLastNonContiguousAndHalf) {
  Tensor in = testing::iota({2, 4, 3, 5}).mul(0.21).sin();
  Tensor cl = in.contiguous(MemoryFormat::ChannelsLast);
  Tensor out = upsample_bilinear2d(cl, {7, 8}, false);
  EXPECT_TRUE(out.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(all_close(out, bilinear_reference(in, 7, 8, false), 1e-12, 1e-12));
  Tensor t = testing::iota({2, 4, 5, 3}).mul(0.21).sin().transpose(2, 3);
  EXPECT_TRUE(all_close(upsample_bilinear2d(t, {6, 6}, true),
                        bilinear_reference(t.contiguous(), 6, 6, true), 1e-12, 1e-12));
  Tensor h = upsample_bilinear2d(in.to(kFloat16), {6, 10}, false);
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_TRUE(all_close(h, bilinear_reference(in, 6, 10, false), 2e-3, 2e-3));
  Tensor bf = upsample_linear1d(testing::iota({1, 2, 4}, kBFloat16), {7}, true);
  EXPECT_TRUE(all_close(bf, bilinear_reference(testing::iota({1, 2, 1, 4}), 1, 7, true).squeeze(2),
                        1e-2, 1e-2));
  // out= into a contiguous tensor from a channels-last input.
  const auto& out_op = ops::OpRegistry::instance().get("upsample_bilinear2d.out");
  Tensor dst = empty({0}, kFloat64);
  ops::call(out_op, {cl, std::vector<int64_t>{7, 8}, false, std::nullopt, std::nullopt, dst});
  EXPECT_TRUE(all_close(dst, bilinear_reference(in, 7, 8, false), 1e-12, 1e-12));
}

TEST(Interpolate, Errors) {
  Tensor img = iota({1, 1, 2, 2});
  EXPECT_TRUE(throws_error(
      [&] {
        interpolate(img, std::vector<int64_t>{4, 4}, std::vector<double>{2.0});
      },
      {"only one of size or scale_factor"}));
  EXPECT_TRUE(throws_error([&] { interpolate(img, std::nullopt, std::nullopt); },
                           {"either size or scale_factor"}));
  EXPECT_TRUE(throws_error(
      [&] {
        interpolate(img, std::vector<int64_t>{4, 4, 4}, std::nullopt);
      },
      {"same number of spatial dimensions", "[2, 2]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        interpolate(iota({1, 1, 3}), std::vector<int64_t>{4}, std::nullopt, "bilinear");
      },
      {"3D input", "bilinear", "4D"}));
  EXPECT_TRUE(
      throws_error([&] { interpolate(img, std::vector<int64_t>{4}, std::nullopt, "linear"); },
                   {"4D input", "linear", "3D"}));
  EXPECT_TRUE(throws_error(
      [&] { interpolate(img, std::vector<int64_t>{4}, std::nullopt, "nearest", true); },
      {"align_corners option can only be set"}));
  EXPECT_TRUE(
      throws_error([&] { interpolate(img, std::vector<int64_t>{4}, std::nullopt, "bicubic"); },
                   {"mode 'bicubic' is not supported"}));
  EXPECT_TRUE(throws_error(
      [&] {
        interpolate(img, std::vector<int64_t>{4}, std::nullopt, "nearest", std::nullopt, true);
      },
      {"recompute_scale_factor is not meaningful"}));
  EXPECT_TRUE(throws_error(
      [&] {
        upsample_nearest2d(iota({1, 2, 2}), {4, 4});
      },
      {"upsample_nearest2d", "4-D", "[1, 2, 2]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        upsample_nearest2d(img, {0, 4});
      },
      {"upsample_nearest2d", "greater than 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        upsample_bilinear2d(iota({1, 1, 2, 2}, kInt64), {4, 4}, false);
      },
      {"upsample_bilinear2d", "floating point", "int64"}));
}

TEST(PixelShuffle, HandComputedAndRoundTrip) {
  // (1, 4, 1, 1) with r = 2 -> (1, 1, 2, 2): channel k goes to (k / 2, k % 2).
  Tensor x = iota({1, 4, 1, 1});
  Tensor s = pixel_shuffle(x, 2);
  EXPECT_EQ(s.sizes(), IntList({1, 1, 2, 2}));
  EXPECT_EQ(values(s), (V{0, 1, 2, 3}));
  // (1, 4, 2, 2): out[0, 0, 2h + i, 2w + j] = in[0, 2i + j, h, w].
  Tensor y = iota({1, 4, 2, 2});
  EXPECT_EQ(values(pixel_shuffle(y, 2)), (V{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
  EXPECT_EQ(values(pixel_unshuffle(pixel_shuffle(y, 2), 2)), values(y));
  // Batch dims, non-contiguous input, int dtype.
  Tensor z = iota({2, 3, 9, 2, 2}, kInt64);
  Tensor zs = pixel_shuffle(z, 3);
  EXPECT_EQ(zs.sizes(), IntList({2, 3, 1, 6, 6}));
  EXPECT_EQ(zs.dtype(), kInt64);
  EXPECT_EQ(values(pixel_unshuffle(zs, 3)), values(z));
  Tensor t = iota({1, 4, 3, 2}).transpose(2, 3);
  EXPECT_EQ(values(pixel_shuffle(t, 2)), values(pixel_shuffle(t.contiguous(), 2)));
  EXPECT_EQ(pixel_shuffle(empty({0, 4, 2, 2}), 2).sizes(), IntList({0, 1, 4, 4}));
  // The shape an empty batch gets is the shape rule's (PyTorch's meta agrees; its eager kernel
  // returns an empty input's shape unchanged).
  EXPECT_EQ(pixel_unshuffle(empty({0, 1, 2, 2}), 2).sizes(), IntList({0, 4, 1, 1}));
}

TEST(PixelShuffle, Errors) {
  EXPECT_TRUE(throws_error(
      [] {
        pixel_shuffle(iota({1, 6, 2, 2}), 2);
      },
      {"pixel_shuffle", "divisible by the square", "6", "4"}));
  EXPECT_TRUE(throws_error(
      [] {
        pixel_shuffle(iota({4, 2}), 2);
      },
      {"pixel_shuffle", "at least 3 dimensions", "2"}));
  EXPECT_TRUE(throws_error(
      [] {
        pixel_shuffle(iota({1, 4, 2, 2}), 0);
      },
      {"pixel_shuffle", "positive upscale_factor"}));
  EXPECT_TRUE(throws_error(
      [] {
        pixel_unshuffle(iota({1, 1, 3, 4}), 2);
      },
      {"pixel_unshuffle", "height", "3"}));
  EXPECT_TRUE(throws_error(
      [] {
        pixel_unshuffle(iota({1, 1, 4, 3}), 2);
      },
      {"pixel_unshuffle", "width", "3"}));
}

}  // namespace
}  // namespace kiln
