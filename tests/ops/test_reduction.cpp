// sum/mean/prod, max/min, amax/amin, argmax/argmin against float64 loops and hand-computed
// values: dim lists, keepdim, strides, dtype rules, empty inputs, NaN, errors.
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

struct DimCase {
  std::vector<int64_t> dims;
  bool keepdim;
};
const std::vector<DimCase> kDimCases = {{{}, false},    {{}, true},    {{1}, false},
                                        {{0, 2}, true}, {{-1}, false}, {{2, 0, 1}, false},
                                        {{-2}, true}};

TEST(Reduction, SumAndMeanMatchLoopsForEveryDimList) {
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = random({3, 4, 5}, dt);
    for (const auto& c : kDimCases) {
      Tensor s = sum(x, c.dims, c.keepdim);
      EXPECT_EQ(s.dtype(), dt);
      EXPECT_TRUE(
          all_close(s, reference_reduce(x, c.dims, c.keepdim, testing::ref_sum), 1e-5, 1e-5));
      EXPECT_TRUE(all_close(mean(x, c.dims, c.keepdim),
                            reference_reduce(x, c.dims, c.keepdim, testing::ref_mean), 1e-5, 1e-6));
    }
  }
}

TEST(Reduction, SumOfTransposedAndStridedInputs) {
  Tensor base = random({7, 9}, kFloat32, 1);
  Tensor xt = transposed(base);  // [9, 7]
  for (int64_t d : {0, 1}) {
    EXPECT_TRUE(
        all_close(sum(xt, {d}), reference_reduce(xt, {d}, false, testing::ref_sum), 1e-5, 1e-5));
    EXPECT_TRUE(all_close(amax(xt, {d}), reference_reduce(xt, {d}, false, [](const auto& g) {
                            return *std::max_element(g.begin(), g.end());
                          })));
  }
  // Every other column of a [6, 10] tensor, and a column with a storage offset.
  Tensor big = random({6, 10}, kFloat32, 2);
  Tensor every_other = testing::strided_view(big, {6, 5}, {10, 2});
  EXPECT_TRUE(all_close(sum(every_other, {1}, true),
                        reference_reduce(every_other, {1}, true, testing::ref_sum), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(sum(every_other),
                        reference_reduce(every_other, {}, false, testing::ref_sum), 1e-5, 1e-5));
  Tensor column = testing::strided_view(big, {6}, {10}, 3);
  EXPECT_TRUE(
      all_close(sum(column), reference_reduce(column, {}, false, testing::ref_sum), 1e-5, 1e-5));
  // Permuted 3-D: reduce the middle (memory-outermost) dim.
  Tensor b3 = random({4, 5, 6}, kFloat64, 3);
  Tensor perm = testing::strided_view(b3, {5, 4, 6}, {6, 30, 1});
  for (const auto& c : kDimCases) {
    EXPECT_TRUE(all_close(sum(perm, c.dims, c.keepdim),
                          reference_reduce(perm, c.dims, c.keepdim, testing::ref_sum), 1e-12,
                          1e-12));
  }
}

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

TEST(Reduction, LargeFloatSumsAreAccurate) {
  // 2^22 + 3 values in [0, 1): a running float sum would be off by ~1e-3 relative.
  const int64_t n = (int64_t{1} << 22) + 3;
  Tensor x = random({n}, kFloat32, 4, 0.0, 1.0);
  const float* p = x.data_ptr<float>();
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += p[i];
  EXPECT_LT(relative_error(sum(x).item<double>(), want), 1e-6);
  EXPECT_LT(relative_error(mean(x).item<double>(), want / static_cast<double>(n)), 1e-6);

  // Column sums: each of 64 outputs adds 2^16 rows (the outer-dim, vectorized-across path).
  const int64_t rows = int64_t{1} << 16, cols = 64;
  Tensor m = random({rows, cols}, kFloat32, 5, 0.0, 1.0);
  std::vector<double> col(cols, 0.0), row(static_cast<size_t>(rows), 0.0);
  const float* q = m.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      col[static_cast<size_t>(c)] += q[r * cols + c];
      row[static_cast<size_t>(r)] += q[r * cols + c];
    }
  }
  auto col_sums = sum(m, {0}).tolist<double>();
  for (int64_t c = 0; c < cols; ++c) {
    EXPECT_LT(relative_error(col_sums[static_cast<size_t>(c)], col[static_cast<size_t>(c)]), 1e-6);
  }
  // The same through a transposed view: now the reduced dim is the contiguous one.
  auto t_sums = sum(transposed(m), {1}).tolist<double>();
  for (int64_t c = 0; c < cols; ++c) {
    EXPECT_LT(relative_error(t_sums[static_cast<size_t>(c)], col[static_cast<size_t>(c)]), 1e-6);
  }
  auto row_sums = sum(m, {1}).tolist<double>();
  for (int64_t r = 0; r < rows; r += 997) {
    EXPECT_LT(relative_error(row_sums[static_cast<size_t>(r)], row[static_cast<size_t>(r)]), 1e-6);
  }
}

TEST(Reduction, LargeFullReductionsMatchAcrossThreadCounts) {
  Tensor x = random({(int64_t{1} << 20) + 17}, kFloat32, 6);
  const int saved = get_num_threads();
  set_num_threads(1);
  const double one = sum(x).item<double>();
  const double max1 = amax(x).item<double>();
  const int64_t arg1 = argmax(x).item<int64_t>();
  set_num_threads(2);
  EXPECT_NEAR(sum(x).item<double>(), one, 1e-6 * std::abs(one) + 1e-3);
  EXPECT_EQ(amax(x).item<double>(), max1);
  EXPECT_EQ(argmax(x).item<int64_t>(), arg1);
  set_num_threads(saved);
}

TEST(Reduction, SumDtypeRules) {
  Tensor i = make<int32_t>({1, -2, 3, 4, 5, 6}, {2, 3});
  Tensor s = sum(i, {1});
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.tolist<int64_t>(), (std::vector<int64_t>{2, 15}));
  Tensor b = make<bool>({1, 0, 1, 1}, {4});
  EXPECT_EQ(sum(b).dtype(), kInt64);
  EXPECT_EQ(sum(b).item<int64_t>(), 3);
  // dtype= casts before reducing.
  Tensor f = make<float>({0.5, 0.25, 0.125}, {3});
  Tensor d = sum(f, {}, false, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.item<double>(), 0.875);
  EXPECT_EQ(sum(i, {}, false, kFloat32).dtype(), kFloat32);
  // int64 sums are exact beyond float precision.
  Tensor big = make<int64_t>({9007199254740993.0, 1}, {2});
  big.data_ptr<int64_t>()[0] = (int64_t{1} << 53) + 1;
  EXPECT_EQ(sum(big).item<int64_t>(), (int64_t{1} << 53) + 2);
  // float16 accumulates in float.
  Tensor h = make<Half>(std::vector<double>(3000, 1.0), {3000});
  EXPECT_EQ(sum(h).dtype(), kFloat16);
  EXPECT_EQ(sum(h).item<double>(), 3000.0);
  EXPECT_EQ(mean(make<BFloat16>({1, 2, 3, 6}, {4})).item<double>(), 3.0);
}

TEST(Reduction, MeanRequiresFloatingPoint) {
  Tensor i = make<int64_t>({1, 2, 3}, {3});
  EXPECT_TRUE(throws_error([&] { mean(i); },
                           {"mean(): could not infer output dtype", "floating point", "Long"}));
  EXPECT_THROW(mean(i), Error);
  Tensor m = mean(i, {}, false, kFloat32);
  EXPECT_EQ(m.dtype(), kFloat32);
  EXPECT_EQ(m.item<double>(), 2.0);
  EXPECT_TRUE(throws_error([&] { mean(random({3}), {}, false, kInt64); }, {"mean()", "Long"}));
}

TEST(Reduction, EmptyReductionsGiveTheIdentity) {
  Tensor e = random({0, 3});
  Tensor s = sum(e, {0});
  EXPECT_EQ(std::vector<int64_t>(s.sizes().begin(), s.sizes().end()), (std::vector<int64_t>{3}));
  EXPECT_EQ(s.tolist<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sum(e).item<double>(), 0.0);
  EXPECT_EQ(prod(e).item<double>(), 1.0);
  EXPECT_EQ(prod(e, 0).tolist<double>(), (std::vector<double>{1, 1, 1}));
  EXPECT_TRUE(std::isnan(mean(e).item<double>()));
  EXPECT_EQ(sum(e, {1}).numel(), 0);
  EXPECT_EQ(amax(e, {1}).numel(), 0);  // the reduced dim is not empty
}

TEST(Reduction, ProdMatchesLoops) {
  Tensor x = random({3, 4, 5}, kFloat64, 7, 0.5, 1.5);
  EXPECT_TRUE(all_close(prod(x),
                        reference_reduce(x, {}, false,
                                         [](const auto& g) {
                                           double p = 1;
                                           for (double v : g) p *= v;
                                           return p;
                                         }),
                        1e-12));
  for (int64_t d : {0, 1, -1}) {
    for (bool keep : {false, true}) {
      EXPECT_TRUE(all_close(prod(x, d, keep),
                            reference_reduce(x, {d}, keep,
                                             [](const auto& g) {
                                               double p = 1;
                                               for (double v : g) p *= v;
                                               return p;
                                             }),
                            1e-12));
    }
  }
  Tensor i = make<int32_t>({2, 3, -4, 1, 5, 6}, {2, 3});
  EXPECT_EQ(prod(i).dtype(), kInt64);
  EXPECT_EQ(prod(i).item<int64_t>(), -720);
  EXPECT_EQ(prod(i, 1).tolist<int64_t>(), (std::vector<int64_t>{-24, 30}));
  EXPECT_EQ(prod(i, 0, false, kFloat64).dtype(), kFloat64);
}

TEST(Reduction, MaxMinFullAndDimWithIndices) {
  // [[1, 5, 5], [7, 0, 7]]: ties pick the first index.
  Tensor x = make<float>({1, 5, 5, 7, 0, 7}, {2, 3});
  EXPECT_EQ(max(x).item<double>(), 7.0);
  EXPECT_EQ(min(x).item<double>(), 0.0);
  auto [v1, i1] = max(x, 1);
  EXPECT_EQ(v1.tolist<double>(), (std::vector<double>{5, 7}));
  EXPECT_EQ(i1.tolist<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(i1.dtype(), kInt64);
  auto [v0, i0] = min(x, 0, true);
  EXPECT_EQ(v0.sizes().vec(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(v0.tolist<double>(), (std::vector<double>{1, 0, 5}));
  EXPECT_EQ(i0.tolist<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  auto [vn, in] = max(x, -1, true);
  EXPECT_EQ(vn.sizes().vec(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(argmax(x).item<int64_t>(), 3);  // first 7 in flattened order
  EXPECT_EQ(argmin(x).item<int64_t>(), 4);
  EXPECT_EQ(argmax(x, 1).tolist<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(argmin(x, 0, true).sizes().vec(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(argmax(x, std::nullopt, true).sizes().vec(), (std::vector<int64_t>{1, 1}));
  // Flattened index follows the logical (row-major) order of a transposed view.
  Tensor xt = transposed(x);  // [[1, 7], [5, 0], [5, 7]]
  EXPECT_EQ(argmax(xt).item<int64_t>(), 1);
  EXPECT_EQ(argmin(xt).item<int64_t>(), 3);
  auto [vt, it] = max(xt, 0);
  EXPECT_EQ(it.tolist<int64_t>(), (std::vector<int64_t>{1, 0}));
  // Integers and bool.
  Tensor ints = make<int16_t>({-3, 9, 9, -8}, {4});
  EXPECT_EQ(max(ints).item<int64_t>(), 9);
  EXPECT_EQ(max(ints).dtype(), kInt16);
  EXPECT_EQ(argmax(ints).item<int64_t>(), 1);
  EXPECT_EQ(argmin(ints).item<int64_t>(), 3);
  Tensor bools = make<bool>({0, 1, 1}, {3});
  EXPECT_EQ(max(bools).item<bool>(), true);
  EXPECT_EQ(min(bools).item<bool>(), false);
  EXPECT_EQ(std::get<1>(max(bools, 0)).item<int64_t>(), 1);
  EXPECT_TRUE(throws_error([&] { argmax(bools); }, {"argmax(): does not support bool input"}));
}

TEST(Reduction, MaxMinMatchLoopsOnLargerInputs) {
  for (DType dt : {kFloat32, kFloat64, kInt32, kFloat16}) {
    Tensor x = random({5, 37, 6}, dt, 8, -100, 100);
    for (const auto& c : kDimCases) {
      auto mx = [](const std::vector<double>& g) { return *std::max_element(g.begin(), g.end()); };
      auto mn = [](const std::vector<double>& g) { return *std::min_element(g.begin(), g.end()); };
      EXPECT_TRUE(
          all_close(amax(x, c.dims, c.keepdim), reference_reduce(x, c.dims, c.keepdim, mx)));
      EXPECT_TRUE(
          all_close(amin(x, c.dims, c.keepdim), reference_reduce(x, c.dims, c.keepdim, mn)));
    }
    for (int64_t d : {0, 1, 2}) {
      auto first_max = [](const std::vector<double>& g) {
        return static_cast<double>(std::max_element(g.begin(), g.end()) - g.begin());
      };
      auto first_min = [](const std::vector<double>& g) {
        return static_cast<double>(std::min_element(g.begin(), g.end()) - g.begin());
      };
      EXPECT_TRUE(all_close(argmax(x, d), reference_reduce(x, {d}, false, first_max)));
      EXPECT_TRUE(all_close(argmin(x, d), reference_reduce(x, {d}, false, first_min)));
      EXPECT_TRUE(all_close(std::get<1>(max(x, d)), reference_reduce(x, {d}, false, first_max)));
    }
  }
  // A long contiguous row takes the SIMD path; the max sits near the end.
  std::vector<double> v(1003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i));
  v[998] = 4;
  Tensor x = make<float>(v, {1003});
  EXPECT_EQ(max(x).item<double>(), 4.0);
  EXPECT_EQ(argmax(x).item<int64_t>(), 998);
  EXPECT_EQ(amax(make<int64_t>(v, {1003})).item<int64_t>(), 4);
}

TEST(Reduction, NaNPropagatesInMaxMin) {
  Tensor x = make<float>({1, kNaN, 3, 2, 0, 5}, {2, 3});
  EXPECT_TRUE(std::isnan(max(x).item<double>()));
  EXPECT_TRUE(std::isnan(min(x).item<double>()));
  auto m = amax(x, {1}).tolist<double>();
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 5.0);
  EXPECT_EQ(argmax(x).item<int64_t>(), 1);
  EXPECT_EQ(argmin(x).item<int64_t>(), 1);
  auto [v, i] = min(x, 1);
  EXPECT_TRUE(std::isnan(v.tolist<double>()[0]));
  EXPECT_EQ(i.tolist<int64_t>(), (std::vector<int64_t>{1, 1}));
  // NaN in a long row (SIMD path) and in the across-outputs path.
  std::vector<double> long_row(500, 1.0);
  long_row[321] = kNaN;
  EXPECT_TRUE(std::isnan(amax(make<float>(long_row, {500})).item<double>()));
  EXPECT_EQ(argmax(make<float>(long_row, {500})).item<int64_t>(), 321);
  auto cols = amax(make<float>(long_row, {50, 10}), {0}).tolist<double>();
  EXPECT_TRUE(std::isnan(cols[1]));
  EXPECT_EQ(cols[0], 1.0);
  // Indices across outputs: the NaN's row in column 1, the first row of all-equal columns.
  auto [col_values, col_indices] = max(make<float>(long_row, {50, 10}), 0);
  EXPECT_EQ(col_indices.tolist<int64_t>()[1], 32);
  EXPECT_EQ(col_indices.tolist<int64_t>()[0], 0);
  EXPECT_TRUE(std::isnan(col_values.tolist<double>()[1]));
  EXPECT_EQ(argmin(make<float>(long_row, {50, 10}), 0).tolist<int64_t>()[1], 32);
}

TEST(Reduction, ZeroDimInputs) {
  Tensor s = make<float>({2.5}, {});
  for (int64_t d : {0, -1}) {
    EXPECT_EQ(sum(s, {d}).dim(), 0);
    EXPECT_EQ(sum(s, {d}).item<double>(), 2.5);
    EXPECT_EQ(sum(s, {d}, true).dim(), 0);
    EXPECT_EQ(amax(s, {d}).item<double>(), 2.5);
    auto [v, i] = max(s, d);
    EXPECT_EQ(v.item<double>(), 2.5);
    EXPECT_EQ(i.item<int64_t>(), 0);
    EXPECT_EQ(argmin(s, d).item<int64_t>(), 0);
    EXPECT_EQ(prod(s, d).item<double>(), 2.5);
  }
  EXPECT_EQ(mean(s).item<double>(), 2.5);
  EXPECT_EQ(max(s).item<double>(), 2.5);
  EXPECT_TRUE(throws_error([&] { sum(s, {1}); }, {"sum", "[-1, 0]", "1"}));
}

TEST(Reduction, Errors) {
  Tensor x = random({2, 3});
  EXPECT_THROW(sum(x, {2}), IndexError);
  EXPECT_TRUE(throws_error([&] { sum(x, {2}); }, {"sum", "[-2, 1]", "2"}));
  EXPECT_TRUE(throws_error([&] { mean(x, {-3}); }, {"mean", "[-2, 1]"}));
  EXPECT_THROW(amax(x, {5}), IndexError);
  EXPECT_THROW(argmax(x, 2), IndexError);
  EXPECT_THROW(max(x, 2), IndexError);
  EXPECT_THROW(prod(x, -3), IndexError);
  EXPECT_TRUE(throws_error([&] { sum(x, {1, -1}); }, {"sum", "dim 1 appears multiple times"}));
  EXPECT_TRUE(throws_error([&] { amin(x, {0, 0}); }, {"amin", "multiple times"}));
  Tensor e = random({0, 3});
  EXPECT_TRUE(throws_error([&] { max(e); },
                           {"max", "Expected reduction dim to be specified", "numel() == 0"}));
  EXPECT_TRUE(throws_error([&] { amax(e); }, {"amax", "numel() == 0"}));
  EXPECT_TRUE(throws_error([&] { argmin(e); }, {"argmin", "numel() == 0"}));
  EXPECT_TRUE(throws_error([&] { max(e, 0); }, {"max", "reduction dim 0", "non-zero size"}));
  EXPECT_THROW(max(e, 0), IndexError);
  EXPECT_TRUE(throws_error([&] { amin(e, {0}); }, {"amin", "dim 0", "non-zero size"}));
  EXPECT_TRUE(throws_error([&] { argmax(e, 0); }, {"argmax", "dim 0"}));
}

TEST(Reduction, OutVariants) {
  const auto& reg = ops::OpRegistry::instance();
  Tensor x = random({4, 5}, kFloat32, 9);
  Tensor out = empty({1}, kFloat64);  // resized, and written in its own dtype
  ops::call(reg.get("sum.out"), {x, std::vector<int64_t>{1}, false, std::nullopt, out});
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{4}));
  EXPECT_TRUE(all_close(out, reference_reduce(x, {1}, false, testing::ref_sum), 1e-5, 1e-5));
  Tensor amx = empty({5}, kFloat64);
  ops::call(reg.get("amax.out"), {x, std::vector<int64_t>{0}, false, amx});
  EXPECT_TRUE(all_close(amx, amax(x, {0}), 0, 0));
  Tensor anyd = empty({4}, kBool);
  ops::call(reg.get("any.dim_out"), {x, int64_t{1}, false, anyd});
  EXPECT_TRUE(all_close(anyd, any(x, 1), 0, 0));
  Tensor am = empty({0}, kInt64);
  ops::call(reg.get("argmax.out"), {x, int64_t{1}, true, am});
  EXPECT_TRUE(all_close(am, argmax(x, 1, true), 0, 0));
  // A float result cannot go into an int out=.
  Tensor bad = empty({4}, kInt64);
  EXPECT_THROW(
      ops::call(reg.get("mean.out"), {x, std::vector<int64_t>{1}, false, std::nullopt, bad}),
      Error);
}

TEST(Reduction, MetaDeviceShapesWithoutData) {
  Tensor m = empty({3, 4, 5}, TensorOptions(kInt32).device(Device::meta()));
  Tensor s = sum(m, {1}, true);
  EXPECT_TRUE(s.is_meta());
  EXPECT_EQ(s.sizes().vec(), (std::vector<int64_t>{3, 1, 5}));
  EXPECT_EQ(s.dtype(), kInt64);
  auto [v, i] = max(m, 2);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(v.sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(mean(m), Error);
  EXPECT_THROW(sum(m, {3}), IndexError);
}

}  // namespace
}  // namespace kiln
