// var/std/var_mean, linalg_vector_norm, logsumexp, any/all and cumsum/cumprod against float64
// loops and hand-computed values.
#include "test_reduction_util.h"

#include <kiln/ops/reduction.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::make;
using testing::random;
using testing::reference_reduce;
using testing::throws_error;
using testing::transposed;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ReductionStats, VarStdMatchLoops) {
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = random({3, 4, 5}, dt, 1);
    for (double corr : {1.0, 0.0, 2.0, 0.5}) {
      for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {1}, {0, 2}, {-1}, {0}}) {
        for (bool keep : {false, true}) {
          auto ref = [corr](const std::vector<double>& g) { return testing::ref_var(g, corr); };
          auto ref_std = [corr](const std::vector<double>& g) {
            return std::sqrt(testing::ref_var(g, corr));
          };
          EXPECT_TRUE(all_close(var(x, dims, Scalar(corr), keep),
                                reference_reduce(x, dims, keep, ref), 1e-5, 1e-6));
          EXPECT_TRUE(all_close(kiln::std(x, dims, Scalar(corr), keep),
                                reference_reduce(x, dims, keep, ref_std), 1e-5, 1e-6));
          auto [v, m] = var_mean(x, dims, Scalar(corr), keep);
          EXPECT_TRUE(all_close(v, reference_reduce(x, dims, keep, ref), 1e-5, 1e-6));
          EXPECT_TRUE(all_close(m, reference_reduce(x, dims, keep, testing::ref_mean), 1e-5, 1e-6));
        }
      }
    }
  }
  // Default correction is 1 (Bessel).
  Tensor y = make<double>({1, 2, 3, 4}, {4});
  EXPECT_DOUBLE_EQ(var(y).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(var(y, {}, Scalar(0)).item<double>(), 1.25);
  EXPECT_DOUBLE_EQ(kiln::std(y, {0}, Scalar(int64_t{0})).item<double>(), std::sqrt(1.25));
  // Transposed input.
  Tensor t = transposed(random({6, 7}, kFloat64, 2));
  EXPECT_TRUE(all_close(
      var(t, {1}),
      reference_reduce(t, {1}, false, [](const auto& g) { return testing::ref_var(g, 1); }),
      1e-10));
}

TEST(ReductionStats, VarEdgeCases) {
  Tensor one = make<float>({3}, {1});
  EXPECT_TRUE(std::isnan(var(one).item<double>()));  // 0 / 0
  EXPECT_EQ(var(one, {}, Scalar(0)).item<double>(), 0.0);
  Tensor two = make<float>({1, 3}, {2});
  EXPECT_EQ(var(two, {}, Scalar(2)).item<double>(), kInf);  // 2 / 0
  EXPECT_EQ(var(two, {}, Scalar(5)).item<double>(), kInf);  // divisor clamps to 0
  EXPECT_TRUE(std::isnan(var(random({0, 3})).item<double>()));
  auto [v, m] = var_mean(random({0, 3}), {0});
  EXPECT_EQ(v.numel(), 3);
  EXPECT_TRUE(std::isnan(m.tolist<double>()[0]));
  // float16 computes in float and returns float16.
  EXPECT_EQ(var(make<Half>({1, 2, 3, 4}, {4})).dtype(), kFloat16);
  EXPECT_NEAR(var(make<Half>({1, 2, 3, 4}, {4})).item<double>(), 5.0 / 3.0, 1e-3);
  EXPECT_THROW(var(make<int64_t>({1, 2}, {2})), TypeError);
  EXPECT_TRUE(throws_error(
      [&] {
        kiln::std(make<int32_t>({1, 2}, {2}));
      },
      {"std and var only support floating point"}));
  EXPECT_THROW(var(one, {1}), IndexError);
}

TEST(ReductionStats, VarIsAccurateWithLargeMeanAndManyElements) {
  // Values 1e4 + u, u in [0, 1): a one-pass sum-of-squares in float would lose everything.
  const int64_t n = int64_t{1} << 21;
  Tensor x = random({n}, kFloat32, 3, 1e4, 1e4 + 1);
  const float* p = x.data_ptr<float>();
  std::vector<double> g(p, p + n);
  const double want = testing::ref_var(g, 1);
  EXPECT_NEAR(var(x).item<double>(), want, 1e-4 * want);
  // Columns of a [2048, 1024] view: 1024 outputs of 2048 strided elements each.
  Tensor cols = var(testing::strided_view(x, {2048, 1024}, {1024, 1}), {0});
  std::vector<double> c0;
  for (int64_t r = 0; r < 2048; ++r) c0.push_back(p[r * 1024]);
  EXPECT_NEAR(cols.tolist<double>()[0], testing::ref_var(c0, 1), 1e-4 * want);
}

TEST(ReductionStats, VectorNormsMatchLoops) {
  Tensor x = random({4, 6}, kFloat64, 4);
  x.data_ptr<double>()[3] = 0.0;
  for (double ord : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, 0.0, -1.0}) {
    auto ref = [ord](const std::vector<double>& g) {
      if (ord == kInf || ord == -kInf) {
        double r = std::abs(g[0]);
        for (double v : g) r = ord > 0 ? std::max(r, std::abs(v)) : std::min(r, std::abs(v));
        return r;
      }
      if (ord == 0) {
        double c = 0;
        for (double v : g) c += v != 0;
        return c;
      }
      double s = 0;
      for (double v : g) s += std::pow(std::abs(v), ord);
      return std::pow(s, 1.0 / ord);
    };
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {1}, {0}, {-1}}) {
      EXPECT_TRUE(all_close(norm(x, Scalar(ord), dims), reference_reduce(x, dims, false, ref),
                            1e-10, 1e-12))
          << "ord " << ord;
      EXPECT_TRUE(all_close(norm(x, Scalar(ord), dims, true), reference_reduce(x, dims, true, ref),
                            1e-10, 1e-12));
    }
  }
  Tensor f = make<float>({3, 4}, {2});
  EXPECT_FLOAT_EQ(norm(f).item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(x.norm(1).item<float>(), norm(x, 1).item<float>());
  // dtype= computes in the given dtype.
  const auto& op = ops::OpRegistry::instance().get("linalg_vector_norm");
  Tensor d = ops::call1(op, {f, Scalar(2), std::nullopt, false, kFloat64});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.item<double>(), 5.0);
  EXPECT_TRUE(std::isnan(norm(make<float>({1, kNaN}, {2}), Scalar(kInf)).item<double>()));
  EXPECT_EQ(norm(random({0, 3})).item<double>(), 0.0);
  EXPECT_TRUE(throws_error(
      [&] {
        norm(random({0, 3}), Scalar(kInf));
      },
      {"linalg.vector_norm", "inf", "empty"}));
  EXPECT_TRUE(throws_error([&] { norm(make<int64_t>({1}, {1})); },
                           {"linalg.vector_norm", "floating point", "Long"}));
}

TEST(ReductionStats, LogSumExpIsStable) {
  Tensor x = random({3, 4, 5}, kFloat64, 5);
  auto ref = [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += std::exp(v);
    return std::log(s);
  };
  for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {0, 2}, {-1}, {}}) {
    for (bool keep : {false, true}) {
      EXPECT_TRUE(
          all_close(logsumexp(x, dims, keep), reference_reduce(x, dims, keep, ref), 1e-12, 1e-12));
    }
  }
  // exp(1000) overflows; the shifted sum does not.
  Tensor big = make<float>({1000, 1000, -kInf, -kInf, -kInf, 5, kInf, 1, kNaN, 2}, {5, 2});
  auto r = logsumexp(big, {1}).tolist<double>();
  EXPECT_NEAR(r[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(r[1], -kInf);  // every element -inf
  EXPECT_NEAR(r[2], 5.0, 1e-6);
  EXPECT_EQ(r[3], kInf);
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_EQ(logsumexp(random({0, 3}), {0}).tolist<double>()[0], -kInf);
  // Integer input gives the default float dtype.
  Tensor i = make<int64_t>({0, 0}, {2});
  EXPECT_EQ(logsumexp(i, {0}).dtype(), kFloat32);
  EXPECT_NEAR(logsumexp(i, {0}).item<double>(), std::log(2.0), 1e-6);
  // A long float32 row.
  Tensor l = random({4000}, kFloat32, 6);
  EXPECT_TRUE(all_close(logsumexp(l, {0}), reference_reduce(l, {}, false, ref), 1e-5));
}

TEST(ReductionStats, AnyAll) {
  Tensor f = make<float>({0, 0, 1.5, 0, kNaN, 0}, {2, 3});
  EXPECT_EQ(any(f).dtype(), kBool);
  EXPECT_TRUE(any(f).item<bool>());
  EXPECT_FALSE(all(f).item<bool>());
  EXPECT_EQ(any(f, 1).tolist<bool>(), (std::vector<bool>{true, true}));  // NaN is true
  EXPECT_EQ(any(f, 0).tolist<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(all(f, 0, true).sizes().vec(), (std::vector<int64_t>{1, 3}));
  Tensor nonzero = make<int32_t>({1, 2, -3}, {3});
  EXPECT_TRUE(all(nonzero).item<bool>());
  Tensor b = make<bool>({1, 0, 1, 1}, {2, 2});
  EXPECT_EQ(all(b, 1).tolist<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(all(transposed(b), 1).tolist<bool>(), (std::vector<bool>{true, false}));
  Tensor u = make<uint8_t>({0, 3}, {2});
  EXPECT_EQ(any(u).dtype(), kUInt8);  // as PyTorch
  EXPECT_EQ(any(u).item<int64_t>(), 1);
  Tensor e = random({0, 3});
  EXPECT_FALSE(any(e).item<bool>());
  EXPECT_TRUE(all(e).item<bool>());
  EXPECT_EQ(all(e, 0).tolist<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_THROW(any(f, 2), IndexError);
  // Large inputs (parallel, split reduced range).
  std::vector<double> v(100000, 1.0);
  v[77777] = 0;
  EXPECT_FALSE(all(make<float>(v, {100000})).item<bool>());
  EXPECT_TRUE(any(make<float>(v, {100000})).item<bool>());
}

Tensor reference_scan(const Tensor& x, int64_t dim, bool is_prod) {
  // Loops over [outer, n, inner] of the row-major values.
  const std::vector<double> v = testing::values(x);
  int64_t outer = 1, inner = 1, n = x.dim() == 0 ? 1 : x.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  std::vector<double> r(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double acc = is_prod ? 1 : 0;
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>((o * n + i) * inner + j);
        acc = is_prod ? acc * v[k] : acc + v[k];
        r[k] = acc;
      }
    }
  }
  return make<double>(r, x.sizes().vec());
}

TEST(ReductionStats, CumsumCumprodMatchLoops) {
  Tensor x = random({3, 4, 5}, kFloat32, 7, 0.5, 1.5);
  for (int64_t d : {0, 1, 2}) {
    EXPECT_TRUE(all_close(cumsum(x, d), reference_scan(x, d, false), 1e-5, 1e-6));
    EXPECT_TRUE(all_close(cumprod(x, d), reference_scan(x, d, true), 1e-5, 1e-6));
    EXPECT_TRUE(all_close(cumsum(x, d - 3), reference_scan(x, d, false), 1e-5, 1e-6));
  }
  Tensor t = transposed(random({5, 700}, kFloat64, 8));  // [700, 5], wide inner dim
  EXPECT_TRUE(all_close(cumsum(t, 0), reference_scan(t, 0, false), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(cumsum(t, 1), reference_scan(t, 1, false), 1e-12, 1e-12));
  Tensor i = make<int32_t>({1, 2, 3, 4}, {4});
  EXPECT_EQ(cumsum(i, 0).dtype(), kInt64);
  EXPECT_EQ(cumsum(i, 0).tolist<int64_t>(), (std::vector<int64_t>{1, 3, 6, 10}));
  EXPECT_EQ(cumprod(i, 0).tolist<int64_t>(), (std::vector<int64_t>{1, 2, 6, 24}));
  EXPECT_EQ(cumsum(make<bool>({1, 1, 0}, {3}), 0).tolist<int64_t>(),
            (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(cumsum(i, 0, kFloat64).dtype(), kFloat64);
  Tensor s = make<float>({2.5}, {});
  EXPECT_EQ(cumsum(s, 0).dim(), 0);
  EXPECT_EQ(cumsum(s, -1).item<double>(), 2.5);
  EXPECT_EQ(cumsum(random({0, 3}), 1).numel(), 0);
  EXPECT_THROW(cumsum(x, 3), IndexError);
  EXPECT_TRUE(throws_error([&] { cumprod(x, -4); }, {"cumprod", "[-3, 2]"}));
  // float32 accumulates in double: a float running sum would stop at 2^24.
  Tensor ones = full({(1 << 24) + 2}, 1.0, kFloat32);
  Tensor running = cumsum(ones, 0);
  EXPECT_EQ(running.data_ptr<float>()[running.numel() - 1], static_cast<float>((1 << 24) + 2));
}

TEST(ReductionStats, CumsumInPlaceAndOut) {
  const auto& reg = ops::OpRegistry::instance();
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ops::call(reg.get("cumsum_"), {x, int64_t{1}});
  EXPECT_EQ(x.tolist<double>(), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  Tensor y = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor yt = transposed(y);  // [[1, 4], [2, 5], [3, 6]]
  ops::call(reg.get("cumprod_"), {yt, int64_t{0}});
  EXPECT_EQ(y.tolist<double>(), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  Tensor out = empty({0}, kFloat64);
  ops::call(reg.get("cumsum.out"), {make<int32_t>({5, 6}, {2}), int64_t{0}, std::nullopt, out});
  EXPECT_EQ(out.tolist<double>(), (std::vector<double>{5, 11}));
}

}  // namespace
}  // namespace kiln
