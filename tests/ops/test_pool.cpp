// Pooling ops against direct loops written in this file and hand-computed small cases.
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;
using testing::values;
using L = std::vector<int64_t>;

Tensor data(IntList sizes, uint64_t seed, DType dtype = DType::Float32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return from_vector(v, sizes, DType::Float64).to(dtype);
}

Tensor f64(const std::vector<double>& v, IntList sizes) {
  return from_vector(v, sizes, DType::Float64);
}

Tensor i64(const std::vector<int64_t>& v, IntList sizes) {
  return from_vector(v, sizes, DType::Int64);
}

struct Geometry {
  int64_t kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
  bool ceil = false;
};

// Output length along one axis, written out from PyTorch's documented formula.
int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;  // the last window must start inside
  return out;
}

struct PoolRef {
  std::vector<double> out;
  std::vector<int64_t> indices;
  int64_t oh, ow;
};

// Max or average pooling of `planes` row-major (H, W) planes.
PoolRef pool_reference(const std::vector<double>& x, int64_t planes, int64_t H, int64_t W,
                       const Geometry& g, bool max, bool count_include_pad = true,
                       int64_t divisor = 0) {
  PoolRef r;
  r.oh = out_len(H, g.kh, g.sh, g.ph, g.dh, g.ceil);
  r.ow = out_len(W, g.kw, g.sw, g.pw, g.dw, g.ceil);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < r.oh; ++i) {
      for (int64_t j = 0; j < r.ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t best_at = -1, inside = 0, padded = 0;
        for (int64_t a = 0; a < g.kh; ++a) {
          for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t h = i * g.sh - g.ph + a * g.dh, w = j * g.sw - g.pw + b * g.dw;
            // Average windows count padding but not positions past the padded input.
            if (h < H + g.ph && w < W + g.pw) ++padded;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const double v = x[(p * H + h) * W + w];
            ++inside;
            sum += v;
            if (best_at < 0 || v > best || std::isnan(v)) {
              if (!(std::isnan(best) && best_at >= 0)) {
                best = v;
                best_at = h * W + w;
              }
            }
          }
        }
        if (max) {
          r.out.push_back(best);
          r.indices.push_back(best_at);
        } else {
          const int64_t div = divisor ? divisor : count_include_pad ? padded : inside;
          r.out.push_back(inside ? sum / static_cast<double>(div) : 0.0);
        }
      }
    }
  }
  return r;
}

// ---- max pooling ----

TEST(MaxPool2d, HandComputed) {
  Tensor x = arange(16, DType::Float32).reshape({1, 4, 4});
  auto [out, idx] = max_pool2d_with_indices(x, {2, 2});
  EXPECT_TRUE(all_close(out, f64({5, 7, 13, 15}, {1, 2, 2}), 0, 0));
  EXPECT_TRUE(all_close(idx, i64({5, 7, 13, 15}, {1, 2, 2}), 0, 0));
  EXPECT_EQ(idx.dtype(), DType::Int64);
  EXPECT_TRUE(all_close(max_pool2d(x, {2, 2}), out, 0, 0));
}

TEST(MaxPool2d, TiesPickTheFirstMaximumAndNaNPropagates) {
  auto [out, idx] = max_pool2d_with_indices(ones({1, 3, 3}), {2, 2}, {1, 1});
  EXPECT_TRUE(all_close(idx, i64({0, 1, 3, 4}, {1, 2, 2}), 0, 0));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = f64({1, 9, 2, 3, nan, 4, 5, 6, 7}, {1, 3, 3});
  auto [o2, i2] = max_pool2d_with_indices(x, {2, 2}, {1, 1});
  EXPECT_TRUE(all_close(o2, f64({nan, nan, nan, nan}, {1, 2, 2}), 0, 0));
  EXPECT_TRUE(all_close(i2, i64({4, 4, 4, 4}, {1, 2, 2}), 0, 0));
  // Several NaNs: each replaces the last (the index PyTorch reports), in every layout and kind.
  Tensor two_nans = f64({nan, 1, nan, 2}, {1, 1, 1, 4});
  EXPECT_EQ(values(std::get<1>(max_pool2d_with_indices(two_nans, {1, 4})))[0], 2);
  EXPECT_EQ(values(std::get<1>(adaptive_max_pool2d(two_nans, {1, 1})))[0], 2);
  EXPECT_EQ(values(std::get<1>(max_pool2d_with_indices(
                two_nans.contiguous(MemoryFormat::ChannelsLast), {1, 4})))[0],
            2);
  // Padding: a window holding only -inf and padding still reports an in-plane index.
  const double inf = std::numeric_limits<double>::infinity();
  auto [o3, i3] =
      max_pool2d_with_indices(f64({-inf, -inf, -inf, -inf}, {1, 2, 2}), {2, 2}, {1, 1}, {1, 1});
  EXPECT_TRUE(all_close(i3, i64({0, 0, 1, 0, 0, 1, 2, 2, 3}, {1, 3, 3}), 0, 0));
}

TEST(MaxPool2d, CeilModeLastWindowRule) {
  // in 5, k 2, s 2: floor gives 2 windows, ceil 3 (the last covers column 4 only).
  auto [a, ia] = max_pool2d_with_indices(arange(25, DType::Float32).reshape({1, 5, 5}), {2, 2},
                                         {2, 2}, {0, 0}, {1, 1}, true);
  EXPECT_TRUE(all_close(a, f64({6, 8, 9, 16, 18, 19, 21, 23, 24}, {1, 3, 3}), 0, 0));
  EXPECT_TRUE(all_close(ia, i64({6, 8, 9, 16, 18, 19, 21, 23, 24}, {1, 3, 3}), 0, 0));
  // in 5, k 3, s 3, p 1: ceil would give a third window starting at 5 (in the right padding
  // only): dropped, so 2 windows.
  Tensor b = max_pool2d(arange(25, DType::Float32).reshape({1, 5, 5}), {3, 3}, {3, 3}, {1, 1},
                        {1, 1}, true);
  EXPECT_EQ(IntList(b.sizes()), IntList({1, 2, 2}));
  EXPECT_TRUE(all_close(b, f64({6, 9, 21, 24}, {1, 2, 2}), 0, 0));
}

TEST(MaxPool2d, MatchesDirectLoops) {
  struct Case {
    L sizes;
    Geometry g;
  };
  for (const Case& c :
       {Case{{2, 3, 9, 8}, {3, 3, 2, 2, 1, 1}}, Case{{2, 3, 9, 8}, {3, 2, 2, 1, 1, 0, 2, 3}},
        Case{{1, 2, 7, 7}, {3, 3, 2, 2, 1, 1, 1, 1, true}},
        Case{{1, 2, 10, 6}, {4, 2, 3, 2, 2, 1, 2, 1, true}}}) {
    Tensor x = data(c.sizes, 40);
    const Geometry& g = c.g;
    PoolRef r = pool_reference(values(x), c.sizes[0] * c.sizes[1], c.sizes[2], c.sizes[3], g, true);
    auto [out, idx] =
        max_pool2d_with_indices(x, {g.kh, g.kw}, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.ceil);
    const L shape{c.sizes[0], c.sizes[1], r.oh, r.ow};
    EXPECT_TRUE(all_close(out, f64(r.out, shape), 0, 0));
    EXPECT_TRUE(all_close(idx, i64(r.indices, shape), 0, 0));
    // Channels last in, channels last out, same values and indices.
    auto [ocl, icl] =
        max_pool2d_with_indices(x.contiguous(MemoryFormat::ChannelsLast), {g.kh, g.kw},
                                {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.ceil);
    EXPECT_TRUE(ocl.is_contiguous(MemoryFormat::ChannelsLast));
    EXPECT_TRUE(icl.is_contiguous(MemoryFormat::ChannelsLast));
    EXPECT_TRUE(all_close(ocl, out, 0, 0));
    EXPECT_TRUE(all_close(icl, idx, 0, 0));
  }
}

TEST(MaxPool2d, DtypesLayoutsAndEmpty) {
  Tensor x = data({3, 8, 6}, 41).permute({0, 2, 1});  // (3, 6, 8), non-contiguous
  PoolRef r = pool_reference(values(x), 3, 6, 8, {2, 3, 2, 3, 0, 1}, true);
  EXPECT_TRUE(all_close(max_pool2d(x, {2, 3}, {}, {0, 1}), f64(r.out, {3, r.oh, r.ow}), 0, 0));
  Tensor xd = data({2, 5, 5}, 42, DType::Float64);
  PoolRef rd = pool_reference(values(xd), 2, 5, 5, {3, 3, 1, 1, 1, 1}, true);
  EXPECT_TRUE(all_close(max_pool2d(xd, {3, 3}, {1, 1}, {1, 1}), f64(rd.out, {2, 5, 5}), 0, 0));
  Tensor xi = arange(20, DType::Int64).reshape({1, 4, 5});
  auto [oi, ii] = max_pool2d_with_indices(xi, {2, 2});
  EXPECT_EQ(oi.dtype(), DType::Int64);
  EXPECT_TRUE(all_close(oi, i64({6, 8, 16, 18}, {1, 2, 2}), 0, 0));
  Tensor xb = data({1, 4, 4}, 43, DType::BFloat16);
  PoolRef rb = pool_reference(values(xb), 1, 4, 4, {2, 2, 2, 2, 0, 0}, true);
  EXPECT_TRUE(all_close(max_pool2d(xb, {2, 2}), f64(rb.out, {1, 2, 2}), 0, 0));
  auto [oe, ie] = max_pool2d_with_indices(empty({0, 3, 4, 4}), {2, 2});
  EXPECT_EQ(IntList(oe.sizes()), IntList({0, 3, 2, 2}));
}

TEST(MaxPool2d, Errors) {
  Tensor x = data({1, 2, 4, 4}, 44);
  EXPECT_TRUE(throws_error(
      [&] {
        max_pool2d(x, {2, 2}, {}, {2, 2});
      },
      {"max_pool2d", "pad should be at most half", "kernel_size=[2, 2]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        max_pool2d(data({2, 1, 4}, 1), {2, 2});
      },
      {"max_pool2d", "(2x1x4)", "(2x0x2)", "too small"}));
  EXPECT_TRUE(throws_error(
      [&] {
        max_pool2d(data({4, 4}, 1), {2, 2});
      },
      {"max_pool2d", "3D", "4D", "[4, 4]"}));
  EXPECT_TRUE(throws_error([&] { max_pool2d(data({1, 0, 4}, 1), {1, 1}); }, {"[1, 0, 4]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        max_pool2d(x, {2, 2}, {0, 1});
      },
      {"stride", "greater than zero"}));
  EXPECT_TRUE(throws_error([&] { max_pool2d(x, {0, 2}); }, {"kernel size", "greater than zero"}));
  EXPECT_TRUE(throws_error(
      [&] {
        max_pool2d(x, {2, 2}, {}, {0}, {0, 1});
      },
      {"dilation", "dilationH: 0"}));
  EXPECT_TRUE(throws_error([&] { max_pool2d(x, {2, 2, 2}); }, {"kernel_size", "two ints"}));
  EXPECT_THROW(max_pool2d(ones({1, 4, 4}, DType::Bool), {2, 2}), TypeError);
}

// ---- average pooling ----

TEST(AvgPool2d, HandComputedPaddingAndDivisor) {
  Tensor x = ones({1, 3, 3});
  // k3 s1 p1 over ones: the corner window holds 4 ones among 9 positions.
  Tensor inc = avg_pool2d(x, {3, 3}, {1, 1}, {1, 1});
  EXPECT_NEAR(values(inc)[0], 4.0 / 9, 1e-7);
  EXPECT_NEAR(values(inc)[1], 6.0 / 9, 1e-7);
  EXPECT_NEAR(values(inc)[4], 1.0, 1e-7);
  Tensor exc = avg_pool2d(x, {3, 3}, {1, 1}, {1, 1}, false, /*count_include_pad=*/false);
  EXPECT_TRUE(all_close(exc, ones({1, 3, 3}), 1e-7, 0));
  Tensor div = avg_pool2d(x, {3, 3}, {1, 1}, {1, 1}, false, true, 2);
  EXPECT_TRUE(all_close(div, f64({2, 3, 2, 3, 4.5, 3, 2, 3, 2}, {1, 3, 3}), 1e-7, 0));
  // ceil_mode: the partial last window divides by its clipped size (no padding here).
  Tensor c = avg_pool2d(arange(25, DType::Float32).reshape({1, 5, 5}), {2, 2}, {2, 2}, {0}, true);
  EXPECT_TRUE(all_close(c, f64({3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24}, {1, 3, 3}), 1e-6, 0));
  // ceil_mode with padding counted: windows stop at the padded input's end.
  Tensor d = avg_pool2d(arange(25, DType::Float32).reshape({1, 5, 5}), {3, 3}, {3, 3}, {1}, true);
  EXPECT_TRUE(all_close(d, f64({12.0 / 9, 33.0 / 9, 93.0 / 9, 18}, {1, 2, 2}), 1e-6, 0));
}

TEST(AvgPool2d, MatchesDirectLoops) {
  Tensor x = data({2, 3, 9, 8}, 45);
  for (bool ceil : {false, true}) {
    for (bool include : {false, true}) {
      for (int64_t divisor : {0, 7}) {
        const Geometry g{3, 2, 2, 2, 1, 1, 1, 1, ceil};
        PoolRef r = pool_reference(values(x), 6, 9, 8, g, false, include, divisor);
        std::optional<int64_t> dv = divisor ? std::optional<int64_t>(divisor) : std::nullopt;
        Tensor out = avg_pool2d(x, {3, 2}, {2, 2}, {1, 1}, ceil, include, dv);
        const L shape{2, 3, r.oh, r.ow};
        EXPECT_TRUE(all_close(out, f64(r.out, shape), 1e-5, 1e-6)) << ceil << include << divisor;
        Tensor cl = avg_pool2d(x.contiguous(MemoryFormat::ChannelsLast), {3, 2}, {2, 2}, {1, 1},
                               ceil, include, dv);
        EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
        EXPECT_TRUE(all_close(cl, f64(r.out, shape), 1e-5, 1e-6));
      }
    }
  }
}

TEST(AvgPool2d, DtypesAndErrors) {
  Tensor xd = data({2, 4, 6}, 46, DType::Float64).transpose(1, 2);  // (2, 6, 4), non-contiguous
  PoolRef rd = pool_reference(values(xd), 2, 6, 4, {2, 2, 2, 2, 0, 0}, false);
  EXPECT_TRUE(all_close(avg_pool2d(xd, {2, 2}), f64(rd.out, {2, 3, 2}), 1e-12, 0));
  // Integers: the sum divided with truncation, as PyTorch.
  Tensor xi = arange(16, DType::Int64).reshape({1, 4, 4});
  EXPECT_TRUE(all_close(avg_pool2d(xi, {2, 2}), i64({2, 4, 10, 12}, {1, 2, 2}), 0, 0));
  Tensor xb = data({1, 4, 4}, 47, DType::BFloat16);
  PoolRef rb = pool_reference(values(xb), 1, 4, 4, {2, 2, 2, 2, 0, 0}, false);
  EXPECT_TRUE(all_close(avg_pool2d(xb, {2, 2}), f64(rb.out, {1, 2, 2}), 1e-2, 1e-2));
  EXPECT_EQ(IntList(avg_pool2d(empty({0, 2, 4, 4}), {2, 2}).sizes()), IntList({0, 2, 2, 2}));
  Tensor x = data({1, 4, 4}, 48);
  EXPECT_TRUE(throws_error(
      [&] {
        avg_pool2d(x, {2, 2}, {}, {0}, false, true, 0);
      },
      {"avg_pool2d", "divisor must be not zero"}));
  EXPECT_TRUE(throws_error(
      [&] {
        avg_pool2d(x, {3, 3}, {1, 1}, {2, 2});
      },
      {"avg_pool2d", "pad should be at most half"}));
  EXPECT_TRUE(throws_error(
      [&] {
        avg_pool2d(data({1, 1, 2, 3, 4}, 1), {2, 2});
      },
      {"avg_pool2d", "[1, 1, 2, 3, 4]"}));
}

// ---- adaptive pooling ----

// Adaptive windows: [floor(i * in / out), ceil((i + 1) * in / out)).
PoolRef adaptive_reference(const std::vector<double>& x, int64_t planes, int64_t H, int64_t W,
                           int64_t OH, int64_t OW, bool max) {
  PoolRef r{{}, {}, OH, OW};
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < OH; ++i) {
      const int64_t h0 = static_cast<int64_t>(std::floor(static_cast<double>(i * H) / OH));
      const int64_t h1 = static_cast<int64_t>(std::ceil(static_cast<double>((i + 1) * H) / OH));
      for (int64_t j = 0; j < OW; ++j) {
        const int64_t w0 = static_cast<int64_t>(std::floor(static_cast<double>(j * W) / OW));
        const int64_t w1 = static_cast<int64_t>(std::ceil(static_cast<double>((j + 1) * W) / OW));
        double sum = 0, best = -std::numeric_limits<double>::infinity();
        int64_t best_at = h0 * W + w0;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const double v = x[(p * H + h) * W + w];
            sum += v;
            if (v > best) {
              best = v;
              best_at = h * W + w;
            }
          }
        }
        r.out.push_back(max ? best : sum / static_cast<double>((h1 - h0) * (w1 - w0)));
        r.indices.push_back(best_at);
      }
    }
  }
  return r;
}

TEST(AdaptivePool2d, UnevenWindowsByHand) {
  // One row of 5 into 3 cells: windows [0, 2), [1, 4), [3, 5).
  Tensor x = f64({0, 1, 2, 3, 4}, {1, 1, 5});
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, {1, 3}), f64({0.5, 2, 3.5}, {1, 1, 3}), 0, 0));
  auto [m, idx] = adaptive_max_pool2d(x, {1, 3});
  EXPECT_TRUE(all_close(m, f64({1, 3, 4}, {1, 1, 3}), 0, 0));
  EXPECT_TRUE(all_close(idx, i64({1, 3, 4}, {1, 1, 3}), 0, 0));
}

TEST(AdaptivePool2d, MatchesDirectLoops) {
  struct Case {
    L sizes, out;
  };
  for (const Case& c : {Case{{2, 3, 7, 9}, {3, 4}}, Case{{1, 2, 4, 6}, {6, 7}},
                        Case{{2, 2, 5, 5}, {1, 1}}, Case{{1, 3, 8, 8}, {8, 8}}}) {
    Tensor x = data(c.sizes, 50);
    const int64_t planes = c.sizes[0] * c.sizes[1];
    const L shape{c.sizes[0], c.sizes[1], c.out[0], c.out[1]};
    PoolRef ra =
        adaptive_reference(values(x), planes, c.sizes[2], c.sizes[3], c.out[0], c.out[1], false);
    PoolRef rm =
        adaptive_reference(values(x), planes, c.sizes[2], c.sizes[3], c.out[0], c.out[1], true);
    EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, c.out), f64(ra.out, shape), 1e-5, 1e-6));
    auto [m, idx] = adaptive_max_pool2d(x, c.out);
    EXPECT_TRUE(all_close(m, f64(rm.out, shape), 0, 0));
    EXPECT_TRUE(all_close(idx, i64(rm.indices, shape), 0, 0));
    Tensor xcl = x.contiguous(MemoryFormat::ChannelsLast);
    Tensor acl = adaptive_avg_pool2d(xcl, c.out);
    EXPECT_TRUE(acl.is_contiguous(MemoryFormat::ChannelsLast));
    EXPECT_TRUE(all_close(acl, f64(ra.out, shape), 1e-5, 1e-6));
    auto [mcl, icl] = adaptive_max_pool2d(xcl, c.out);
    EXPECT_TRUE(all_close(icl, i64(rm.indices, shape), 0, 0));
  }
}

TEST(AdaptivePool2d, DtypesEmptyAndErrors) {
  Tensor xd = data({2, 5, 4}, 51, DType::Float64);
  PoolRef r = adaptive_reference(values(xd), 2, 5, 4, 3, 3, false);
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(xd, {3, 3}), f64(r.out, {2, 3, 3}), 1e-12, 0));
  Tensor xb = data({1, 4, 4}, 52, DType::BFloat16);
  PoolRef rb = adaptive_reference(values(xb), 1, 4, 4, 2, 2, false);
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(xb, {2, 2}), f64(rb.out, {1, 2, 2}), 1e-2, 1e-2));
  EXPECT_EQ(IntList(adaptive_avg_pool2d(empty({0, 2, 4, 4}), {2, 2}).sizes()),
            IntList({0, 2, 2, 2}));
  EXPECT_EQ(IntList(adaptive_avg_pool2d(data({1, 4, 4}, 1), {0, 2}).sizes()), IntList({1, 0, 2}));
  EXPECT_TRUE(throws_error(
      [] {
        adaptive_avg_pool2d(data({1, 0, 4}, 1), {2, 2});
      },
      {"adaptive_avg_pool2d", "[1, 0, 4]"}));
  EXPECT_TRUE(throws_error(
      [] {
        adaptive_max_pool2d(data({4, 4}, 1), {2, 2});
      },
      {"adaptive_max_pool2d", "[4, 4]"}));
  EXPECT_TRUE(throws_error(
      [] {
        adaptive_avg_pool2d(data({1, 4, 4}, 1), {-1, 2});
      },
      {"adaptive_avg_pool2d", "greater than or equal to 0"}));
  EXPECT_THROW(adaptive_avg_pool2d(ones({1, 4, 4}, DType::Int64), {2, 2}), TypeError);
}

}  // namespace
}  // namespace kiln
