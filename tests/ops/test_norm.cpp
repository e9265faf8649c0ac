// Normalization ops against float64 references computed with plain loops in this file.
#include "test_util.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;
using testing::values;

// Deterministic normal values * scale + offset, of the given dtype.
Tensor data(IntList sizes, uint64_t seed, DType dtype = DType::Float32, double scale = 1.0,
            double offset = 0.0) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng) * scale + offset;
  return from_vector(v, sizes, DType::Float64).to(dtype);
}

Tensor f64(const std::vector<double>& v, IntList sizes) {
  return from_vector(v, sizes, DType::Float64);
}

struct RowRef {
  std::vector<double> out, mean, rstd;
};

// Row-wise normalization of row-major values: rows x cols, optional per-column weight/bias.
RowRef row_reference(const std::vector<double>& x, int64_t rows, int64_t cols,
                     const std::vector<double>& w, const std::vector<double>& b, double eps,
                     bool rms = false) {
  RowRef r;
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mean += x[i * cols + j];
    mean /= static_cast<double>(cols);
    if (rms) mean = 0;
    for (int64_t j = 0; j < cols; ++j) var += (x[i * cols + j] - mean) * (x[i * cols + j] - mean);
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < cols; ++j) {
      double y = (x[i * cols + j] - mean) * rstd;
      if (!w.empty()) y *= w[j];
      if (!b.empty()) y += b[j];
      r.out.push_back(y);
    }
    r.mean.push_back(mean);
    r.rstd.push_back(rstd);
  }
  return r;
}

// ---- layer norm ----

TEST(LayerNorm, MatchesFloat64Reference) {
  Tensor x = data({4, 3, 70}, 1);
  Tensor w = data({3, 70}, 2), b = data({3, 70}, 3);
  auto [out, mean, rstd] = native_layer_norm(x, {3, 70}, w, b, 1e-5);
  RowRef r = row_reference(values(x), 4, 210, values(w), values(b), 1e-5);
  EXPECT_TRUE(all_close(out, f64(r.out, {4, 3, 70}), 1e-4, 1e-5));
  EXPECT_EQ(IntList(mean.sizes()), IntList({4, 1, 1}));
  EXPECT_EQ(mean.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(mean, f64(r.mean, {4, 1, 1}), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(rstd, f64(r.rstd, {4, 1, 1}), 1e-5, 1e-6));
  EXPECT_TRUE(out.is_contiguous());
}

TEST(LayerNorm, AffineVariantsAndComposite) {
  Tensor x = data({5, 33}, 4), w = data({33}, 5), b = data({33}, 6);
  const std::vector<double> none;
  EXPECT_TRUE(all_close(layer_norm(x, {33}),
                        f64(row_reference(values(x), 5, 33, none, none, 1e-5).out, {5, 33}), 1e-4,
                        1e-5));
  EXPECT_TRUE(all_close(layer_norm(x, {33}, w),
                        f64(row_reference(values(x), 5, 33, values(w), none, 1e-5).out, {5, 33}),
                        1e-4, 1e-5));
  EXPECT_TRUE(all_close(layer_norm(x, {33}, Tensor(), b, 0.5),
                        f64(row_reference(values(x), 5, 33, none, values(b), 0.5).out, {5, 33}),
                        1e-4, 1e-5));
}

TEST(LayerNorm, Float64IsExactToRounding) {
  Tensor x = data({3, 17}, 7, DType::Float64), w = data({17}, 8, DType::Float64);
  auto [out, mean, rstd] = native_layer_norm(x, {17}, w, Tensor(), 1e-6);
  EXPECT_EQ(mean.dtype(), DType::Float64);
  RowRef r = row_reference(values(x), 3, 17, values(w), {}, 1e-6);
  EXPECT_TRUE(all_close(out, f64(r.out, {3, 17}), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(rstd, f64(r.rstd, {3, 1}), 1e-12, 0));
}

TEST(LayerNorm, RowsWithLargeMeanStayAccurate) {
  // Spread 1 around 1e4: E[x^2] - E[x]^2 in float would lose every digit of the variance.
  Tensor x = data({8, 4096}, 9, DType::Float32, 1.0, 1e4);
  auto [out, mean, rstd] = native_layer_norm(x, {4096}, Tensor(), Tensor(), 1e-5);
  RowRef r = row_reference(values(x), 8, 4096, {}, {}, 1e-5);
  EXPECT_TRUE(all_close(rstd, f64(r.rstd, {8, 1}), 1e-4, 0));
  EXPECT_TRUE(all_close(mean, f64(r.mean, {8, 1}), 1e-7, 0));
  // The float32 mean itself carries ulp(1e4) / 2 ~ 5e-4.
  EXPECT_TRUE(all_close(out, f64(r.out, {8, 4096}), 0, 2e-3));
}

TEST(LayerNorm, NonContiguousInput) {
  Tensor base = data({6, 5}, 10);
  Tensor x = base.t();  // (5, 6), non-contiguous
  ASSERT_FALSE(x.is_contiguous());
  RowRef r = row_reference(values(x), 5, 6, {}, {}, 1e-5);
  EXPECT_TRUE(all_close(layer_norm(x, {6}), f64(r.out, {5, 6}), 1e-4, 1e-5));
}

TEST(LayerNorm, BFloat16AndMixedParameters) {
  Tensor x = data({3, 40}, 11, DType::BFloat16), w = data({40}, 12, DType::BFloat16);
  auto [out, mean, rstd] = native_layer_norm(x, {40}, w, Tensor(), 1e-5);
  EXPECT_EQ(out.dtype(), DType::BFloat16);
  EXPECT_EQ(mean.dtype(), DType::BFloat16);
  RowRef r = row_reference(values(x), 3, 40, values(w), {}, 1e-5);
  EXPECT_TRUE(all_close(out, f64(r.out, {3, 40}), 2e-2, 2e-2));
  // float32 weight with a bfloat16 input: statistics in float32 (PyTorch's mixed type).
  auto [out2, mean2, rstd2] = native_layer_norm(x, {40}, w.to(DType::Float32), Tensor(), 1e-5);
  EXPECT_EQ(out2.dtype(), DType::BFloat16);
  EXPECT_EQ(mean2.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(mean2, f64(r.mean, {3, 1}), 1e-5, 1e-6));
}

TEST(LayerNorm, EmptyBatch) {
  auto [out, mean, rstd] = native_layer_norm(empty({0, 5}), {5}, Tensor(), Tensor(), 1e-5);
  EXPECT_EQ(IntList(out.sizes()), IntList({0, 5}));
  EXPECT_EQ(IntList(mean.sizes()), IntList({0, 1}));
}

TEST(LayerNorm, Errors) {
  Tensor x = data({3, 4}, 13);
  EXPECT_TRUE(throws_error([&] { layer_norm(x, {5}); },
                           {"layer_norm", "normalized_shape=[5]", "[*, 5]", "[3, 4]"}));
  EXPECT_TRUE(throws_error([&] { layer_norm(x, {4}, data({5}, 1)); },
                           {"layer_norm", "weight", "[5]", "normalized_shape = [4]"}));
  EXPECT_TRUE(throws_error([&] { layer_norm(x, {4}, Tensor(), data({3}, 1)); }, {"bias", "[3]"}));
  EXPECT_TRUE(throws_error([&] { layer_norm(x, {}); }, {"at least 1-dimensional"}));
  EXPECT_TRUE(throws_error([&] { layer_norm(x, {2, 3, 4}); }, {"[2, 3, 4]", "[3, 4]"}));
  EXPECT_THROW(layer_norm(ones({3, 4}, DType::Int64), {4}), TypeError);
}

// ---- rms norm ----

TEST(RmsNorm, MatchesFloat64Reference) {
  Tensor x = data({6, 100}, 14), w = data({100}, 15);
  RowRef r = row_reference(values(x), 6, 100, values(w), {}, 1e-6, /*rms=*/true);
  EXPECT_TRUE(all_close(rms_norm(x, {100}, w, 1e-6), f64(r.out, {6, 100}), 1e-5, 1e-6));
  Tensor x3 = data({2, 3, 4}, 16, DType::Float64);
  RowRef r3 = row_reference(values(x3), 2, 12, {}, {}, 1e-3, true);
  EXPECT_TRUE(all_close(rms_norm(x3, {3, 4}, Tensor(), 1e-3), f64(r3.out, {2, 3, 4}), 1e-12, 0));
}

TEST(RmsNorm, DefaultEpsIsTheComputeDtypesEpsilon) {
  // x = 1e-4 everywhere: mean(x^2) = 1e-8 is comparable to float's epsilon (1.19e-7).
  const double feps = std::numeric_limits<float>::epsilon();
  Tensor y = rms_norm(full({2, 4}, 1e-4), {4});
  EXPECT_NEAR(values(y)[0], 1e-4 / std::sqrt(1e-8 + feps), 1e-5);
  Tensor yb = rms_norm(full({2, 4}, 1e-4, DType::BFloat16), {4});
  EXPECT_NEAR(values(yb)[0], 1e-4 / std::sqrt(1e-8 + feps), 3e-3);
  const double deps = std::numeric_limits<double>::epsilon();
  Tensor yd = rms_norm(full({1, 4}, 1e-9, DType::Float64), {4});
  EXPECT_NEAR(values(yd)[0], 1e-9 / std::sqrt(1e-18 + deps), 1e-12);
}

TEST(RmsNorm, NonContiguousAndErrors) {
  Tensor x = data({9, 4}, 17).t();
  RowRef r = row_reference(values(x), 4, 9, {}, {}, 1e-5, true);
  EXPECT_TRUE(all_close(rms_norm(x, {9}, Tensor(), 1e-5), f64(r.out, {4, 9}), 1e-5, 1e-6));
  EXPECT_TRUE(throws_error([&] { rms_norm(x, {4}); }, {"rms_norm", "[*, 4]", "[4, 9]"}));
  EXPECT_TRUE(throws_error([&] { rms_norm(x, {9}, data({4}, 1)); }, {"rms_norm", "weight"}));
}

// ---- group norm ----

// Group norm of (N, C, HxW) row-major values.
std::vector<double> group_reference(const std::vector<double>& x, int64_t N, int64_t C, int64_t HxW,
                                    int64_t G, const std::vector<double>& w,
                                    const std::vector<double>& b, double eps,
                                    std::vector<double>* means = nullptr) {
  std::vector<double> out(x.size());
  const int64_t D = C / G * HxW;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < G; ++g) {
      const double* p = x.data() + (n * G + g) * D;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < D; ++i) mean += p[i];
      mean /= static_cast<double>(D);
      for (int64_t i = 0; i < D; ++i) var += (p[i] - mean) * (p[i] - mean);
      var /= static_cast<double>(D);
      if (means) means->push_back(mean);
      for (int64_t i = 0; i < D; ++i) {
        const int64_t c = g * (C / G) + i / HxW;
        double y = (p[i] - mean) / std::sqrt(var + eps);
        out[(n * G + g) * D + i] = y * (w.empty() ? 1.0 : w[c]) + (b.empty() ? 0.0 : b[c]);
      }
    }
  }
  return out;
}

TEST(GroupNorm, MatchesFloat64Reference) {
  Tensor x = data({2, 6, 5}, 18), w = data({6}, 19), b = data({6}, 20);
  auto [out, mean, rstd] = native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5);
  std::vector<double> means;
  auto ref = group_reference(values(x), 2, 6, 5, 3, values(w), values(b), 1e-5, &means);
  EXPECT_TRUE(all_close(out, f64(ref, {2, 6, 5}), 1e-4, 1e-5));
  EXPECT_EQ(IntList(mean.sizes()), IntList({2, 3}));
  EXPECT_TRUE(all_close(mean, f64(means, {2, 3}), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(group_norm(x, 3, w, b), out, 0, 0));
}

TEST(GroupNorm, FourDimChannelsLastAndFloat64) {
  Tensor x = data({2, 4, 3, 3}, 21).contiguous(MemoryFormat::ChannelsLast);
  auto ref = group_reference(values(x), 2, 4, 9, 2, {}, {}, 1e-5);
  Tensor y = group_norm(x, 2, data({4}, 60), data({4}, 61));
  EXPECT_TRUE(y.is_contiguous(MemoryFormat::ChannelsLast));  // the input's layout, as PyTorch
  ref = group_reference(values(x), 2, 4, 9, 2, values(data({4}, 60)), values(data({4}, 61)), 1e-5);
  EXPECT_TRUE(all_close(y, f64(ref, {2, 4, 3, 3}), 1e-4, 1e-5));
  EXPECT_TRUE(all_close(group_norm(x.contiguous(), 2),
                        f64(group_reference(values(x), 2, 4, 9, 2, {}, {}, 1e-5), {2, 4, 3, 3}),
                        1e-4, 1e-5));
  Tensor xd = data({3, 4, 2}, 22, DType::Float64), wd = data({4}, 23, DType::Float64);
  auto refd = group_reference(values(xd), 3, 4, 2, 4, values(wd), {}, 1e-5);
  EXPECT_TRUE(all_close(group_norm(xd, 4, wd), f64(refd, {3, 4, 2}), 1e-12, 1e-12));
}

TEST(GroupNorm, EmptyBatchAndErrors) {
  EXPECT_EQ(IntList(group_norm(empty({0, 4, 2}), 2).sizes()), IntList({0, 4, 2}));
  Tensor x = data({2, 4, 2}, 24);
  EXPECT_TRUE(throws_error([&] { group_norm(x, 3); },
                           {"group_norm", "divisible by num_groups", "[2, 4, 2]", "num_groups=3"}));
  EXPECT_TRUE(throws_error([&] { group_norm(x, 2, data({3}, 1)); },
                           {"group_norm", "weight", "[3]", "[2, 4, 2]"}));
  EXPECT_TRUE(throws_error([&] { group_norm(data({4}, 1), 2); }, {"group_norm", "[4]"}));
  EXPECT_TRUE(throws_error([&] { native_group_norm(x, Tensor(), Tensor(), 2, 4, 3, 2, 1e-5); },
                           {"native_group_norm", "HxW=3"}));
}

// ---- batch norm ----

// Batch norm of (N, C, inner) row-major values with the given per-channel mean/invstd.
std::vector<double> affine_reference(const std::vector<double>& x, int64_t N, int64_t C,
                                     int64_t inner, const std::vector<double>& mean,
                                     const std::vector<double>& invstd,
                                     const std::vector<double>& w, const std::vector<double>& b) {
  std::vector<double> out(x.size());
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (n * C + c) * inner + i;
        out[k] = (x[k] - mean[c]) * invstd[c] * (w.empty() ? 1.0 : w[c]) + (b.empty() ? 0 : b[c]);
      }
    }
  }
  return out;
}

void batch_moments(const std::vector<double>& x, int64_t N, int64_t C, int64_t inner,
                   std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(C), 0);
  var.assign(static_cast<size_t>(C), 0);
  const double count = static_cast<double>(N * inner);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t i = 0; i < inner; ++i) mean[c] += x[(n * C + c) * inner + i];
    }
    mean[c] /= count;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t i = 0; i < inner; ++i) {
        const double d = x[(n * C + c) * inner + i] - mean[c];
        var[c] += d * d;
      }
    }
    var[c] /= count;
  }
}

TEST(BatchNorm, RunningStatisticsByHand) {
  // Channel 0 = 1, 2, 3, 4: mean 2.5, biased var 1.25, unbiased 5/3.
  // Channel 1 = 2, 4, 6, 8: mean 5, biased var 5, unbiased 20/3.
  Tensor x = f64({1, 2, 2, 4, 3, 6, 4, 8}, {4, 2}).to(DType::Float32);
  Tensor rm = zeros({2}), rv = ones({2});
  auto [out, save_mean, save_invstd] =
      native_batch_norm(x, Tensor(), Tensor(), rm, rv, /*training=*/true, 0.1, 1e-5);
  EXPECT_TRUE(all_close(save_mean, f64({2.5, 5.0}, {2}), 1e-6, 0));
  EXPECT_TRUE(all_close(save_invstd,
                        f64({1 / std::sqrt(1.25 + 1e-5), 1 / std::sqrt(5 + 1e-5)}, {2}), 1e-6, 0));
  EXPECT_TRUE(all_close(rm, f64({0.25, 0.5}, {2}), 1e-6, 0));
  EXPECT_TRUE(all_close(rv, f64({0.9 + 0.1 * 5.0 / 3, 0.9 + 0.1 * 20.0 / 3}, {2}), 1e-6, 0));
  const double s0 = 1 / std::sqrt(1.25 + 1e-5);
  EXPECT_NEAR(values(out)[0], (1 - 2.5) * s0, 1e-5);
  // A second step moves the running statistics again from their new values.
  native_batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.5, 1e-5);
  EXPECT_TRUE(all_close(rm, f64({0.5 * 0.25 + 0.5 * 2.5, 0.5 * 0.5 + 0.5 * 5}, {2}), 1e-6, 0));
}

TEST(BatchNorm, TrainingMatchesFloat64Reference) {
  Tensor x = data({4, 3, 5, 6}, 25), w = data({3}, 26), b = data({3}, 27);
  std::vector<double> mean, var, invstd;
  batch_moments(values(x), 4, 3, 30, mean, var);
  for (double v : var) invstd.push_back(1 / std::sqrt(v + 1e-5));
  auto ref = affine_reference(values(x), 4, 3, 30, mean, invstd, values(w), values(b));
  Tensor out = batch_norm(x, w, b, Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_TRUE(all_close(out, f64(ref, {4, 3, 5, 6}), 1e-4, 1e-5));
  // Channels last in, channels last out, same values.
  Tensor xcl = x.contiguous(MemoryFormat::ChannelsLast);
  Tensor outcl = batch_norm(xcl, w, b, Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_TRUE(outcl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(all_close(outcl, f64(ref, {4, 3, 5, 6}), 1e-4, 1e-5));
  // Non-contiguous (a permuted view) input.
  Tensor xp = data({3, 4, 30}, 28).permute({1, 0, 2});
  batch_moments(values(xp), 4, 3, 30, mean, var);
  invstd.clear();
  for (double v : var) invstd.push_back(1 / std::sqrt(v + 1e-5));
  EXPECT_TRUE(all_close(
      batch_norm(xp, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
      f64(affine_reference(values(xp), 4, 3, 30, mean, invstd, {}, {}), {4, 3, 30}), 1e-4, 1e-5));
}

TEST(BatchNorm, LargeMeanChannelsAndFloat64) {
  Tensor x = data({8, 2, 100}, 29, DType::Float32, 1.0, 1e4);
  std::vector<double> mean, var;
  batch_moments(values(x), 8, 2, 100, mean, var);
  auto [out, save_mean, save_invstd] =
      native_batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_TRUE(all_close(save_invstd,
                        f64({1 / std::sqrt(var[0] + 1e-5), 1 / std::sqrt(var[1] + 1e-5)}, {2}),
                        1e-5, 0));
  Tensor xd = data({5, 3, 4}, 30, DType::Float64), wd = data({3}, 31, DType::Float64);
  batch_moments(values(xd), 5, 3, 4, mean, var);
  std::vector<double> invstd;
  for (double v : var) invstd.push_back(1 / std::sqrt(v + 1e-3));
  EXPECT_TRUE(
      all_close(batch_norm(xd, wd, Tensor(), Tensor(), Tensor(), true, 0.1, 1e-3),
                f64(affine_reference(values(xd), 5, 3, 4, mean, invstd, values(wd), {}), {5, 3, 4}),
                1e-12, 1e-12));
}

TEST(BatchNorm, EvaluationUsesRunningStatistics) {
  Tensor x = data({3, 2, 4}, 32);
  Tensor rm = f64({0.5, -1.0}, {2}).to(DType::Float32),
         rv = f64({2.0, 0.25}, {2}).to(DType::Float32);
  Tensor w = f64({1.5, -2.0}, {2}).to(DType::Float32), b = f64({0.1, 0.2}, {2}).to(DType::Float32);
  auto [out, save_mean, save_invstd] = native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
  auto ref = affine_reference(values(x), 3, 2, 4, {0.5, -1.0},
                              {1 / std::sqrt(2.0 + 1e-5), 1 / std::sqrt(0.25 + 1e-5)}, {1.5, -2.0},
                              {0.1, 0.2});
  EXPECT_TRUE(all_close(out, f64(ref, {3, 2, 4}), 1e-5, 1e-6));
  EXPECT_EQ(save_mean.numel(), 0);
  EXPECT_EQ(save_invstd.numel(), 0);
  EXPECT_TRUE(all_close(rm, f64({0.5, -1.0}, {2}), 0, 0));  // not updated
  Tensor empty_out = batch_norm(empty({0, 2, 4}), Tensor(), Tensor(), rm, rv, false, 0.1, 1e-5);
  EXPECT_EQ(IntList(empty_out.sizes()), IntList({0, 2, 4}));
}

TEST(BatchNorm, BFloat16Lightly) {
  Tensor x = data({6, 3, 4}, 33, DType::BFloat16);
  std::vector<double> mean, var, invstd;
  batch_moments(values(x), 6, 3, 4, mean, var);
  for (double v : var) invstd.push_back(1 / std::sqrt(v + 1e-5));
  Tensor rm = zeros({3});  // float32 running stats: statistics in float32
  auto [out, save_mean, save_invstd] =
      native_batch_norm(x, Tensor(), Tensor(), rm, ones({3}), true, 0.1, 1e-5);
  EXPECT_EQ(out.dtype(), DType::BFloat16);
  EXPECT_EQ(save_mean.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(
      out, f64(affine_reference(values(x), 6, 3, 4, mean, invstd, {}, {}), {6, 3, 4}), 2e-2, 2e-2));
}

TEST(BatchNorm, Errors) {
  EXPECT_TRUE(throws_error(
      [] {
        batch_norm(ones({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {"Expected more than 1 value per channel when training", "[1, 3]"}));
  EXPECT_TRUE(throws_error(
      [] {
        batch_norm(ones({1, 3, 1, 1}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {"more than 1 value per channel", "[1, 3, 1, 1]"}));
  EXPECT_TRUE(throws_error(
      [] {
        batch_norm(ones({2, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false, 0.1, 1e-5);
      },
      {"running_mean", "evaluation mode"}));
  EXPECT_TRUE(throws_error(
      [] {
        batch_norm(ones({2, 3}), ones({4}), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {"native_batch_norm", "weight", "3", "[4]"}));
  EXPECT_TRUE(throws_error(
      [] { batch_norm(ones({3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5); },
      {"native_batch_norm", "at least 2 dimensions", "[3]"}));
  EXPECT_TRUE(throws_error(
      [] {
        batch_norm(empty({0, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {"at least one element"}));
}

}  // namespace
}  // namespace kiln
