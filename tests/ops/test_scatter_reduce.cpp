// scatter_reduce (sum, prod, mean, amax, amin; include_self both ways) and take_along_dim:
// hand-computed values, loops in the test for random cases, dtypes, layouts, in-place/out= and
// bad input.
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/random.h>

#include <cmath>
#include <random>

namespace kiln {
namespace {

using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

Tensor idx(std::vector<int64_t> v, IntList shape) { return from_vector(v, shape); }
Tensor idx(std::vector<int64_t> v) { return from_vector(v); }
Tensor f64(std::vector<double> v) { return from_vector(v); }

TEST(ScatterReduce, EachReduction) {
  const Tensor self = f64({1, 2, 3, 4});
  const Tensor index = idx({0, 0, 2, 0});
  const Tensor src = f64({5, -6, 7, 8});
  // Position 0 gets 5, -6, 8; position 2 gets 7; 1 and 3 get nothing.
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "sum")), (V{8, 2, 10, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "sum", false)), (V{7, 2, 7, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "prod")), (V{-240, 2, 21, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "prod", false)), (V{-240, 2, 7, 4}));
  // mean with include_self counts self as one element.
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "mean")), (V{2, 2, 5, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "mean", false)), (V{7.0 / 3, 2, 7, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "amax")), (V{8, 2, 7, 4}));
  EXPECT_EQ(values(scatter_reduce(f64({9, 2, 3, 4}), 0, index, src, "amax")), (V{9, 2, 7, 4}));
  EXPECT_EQ(values(scatter_reduce(f64({9, 2, 3, 4}), 0, index, src, "amax", false)),
            (V{8, 2, 7, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "amin")), (V{-6, 2, 3, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "amin", false)), (V{-6, 2, 7, 4}));
  // NaN propagates through amax/amin.
  Tensor r = scatter_reduce(self, 0, idx({1}), f64({NAN}), "amax");
  EXPECT_TRUE(std::isnan(values(r)[1]));
}

TEST(ScatterReduce, IntegerMeanRoundsDown) {
  Tensor self = from_vector<int64_t>({0, 0});
  Tensor src = from_vector<int64_t>({-3, 1, 5, 2});
  Tensor r = scatter_reduce(self, 0, idx({0, 0, 1, 1}), src, "mean");
  // (0 - 3 + 1) / 3 = -2/3 -> -1; (0 + 5 + 2) / 3 = 7/3 -> 2.
  EXPECT_EQ(values(r), (V{-1, 2}));
  EXPECT_EQ(r.dtype(), kInt64);
  r = scatter_reduce(self.to(kInt32), 0, idx({0, 0, 1, 1}), src.to(kInt32), "mean", false);
  EXPECT_EQ(values(r), (V{-1, 3}));
}

TEST(ScatterReduce, TwoDimsAgainstLoop) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int64_t> d(0, 4);
  const int64_t rows = 6, cols = 8;
  std::vector<int64_t> iv(static_cast<size_t>(rows * cols));
  for (auto& v : iv) v = d(gen);
  Tensor index = idx(iv, {rows, cols});
  Tensor src = randn({rows, cols + 2}, kFloat64);  // src may be larger than index
  Tensor self = randn({rows, 5}, kFloat64);
  const V sv = values(src), base = values(self);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      V acc = base;
      std::vector<int> count(base.size(), include_self ? 1 : 0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const auto pos = static_cast<size_t>(r * 5 + iv[static_cast<size_t>(r * cols + c)]);
          const double v = sv[static_cast<size_t>(r * (cols + 2) + c)];
          double& a = acc[pos];
          const std::string rd = reduce;
          if (count[pos] == 0) {
            a = v;
          } else if (rd == "sum" || rd == "mean") {
            a += v;
          } else if (rd == "prod") {
            a *= v;
          } else if (rd == "amax") {
            a = std::max(a, v);
          } else {
            a = std::min(a, v);
          }
          ++count[pos];
        }
      if (std::string(reduce) == "mean") {
        for (size_t i = 0; i < acc.size(); ++i) acc[i] /= std::max(count[i], 1);
      }
      // dim 1 on a transposed copy of self exercises non-contiguous self too.
      Tensor self_t = self.t().contiguous().t();
      const V got = values(scatter_reduce(self_t, 1, index, src, reduce, include_self));
      for (size_t i = 0; i < acc.size(); ++i) {
        EXPECT_NEAR(got[i], acc[i], 1e-9 * (1 + std::abs(acc[i])))
            << reduce << " include_self=" << include_self << " at " << i;
      }
    }
  }
}

TEST(ScatterReduce, InPlaceOutAndEdgeCases) {
  Tensor x = zeros({3}, kFloat32);
  Tensor& same = x.scatter_reduce_(0, idx({2, 2}), tensor({1.0f, 2.0f}), "sum");
  EXPECT_TRUE(same.is_same(x));
  EXPECT_EQ(values(x), (V{0, 0, 3}));
  scatter_reduce_(x, 0, idx({2}), tensor({4.0f}), "amax", false);
  EXPECT_EQ(values(x), (V{0, 0, 4}));
  static const auto& out_op = ops::OpRegistry::instance().get("scatter_reduce.two_out");
  Tensor out = empty({0}, kFloat32);
  ops::call(out_op, {x, 0, idx({0}), tensor({5.0f}), std::string("prod"), true, out});
  EXPECT_EQ(values(out), (V{0, 0, 4}));
  // 0-dim and empty index.
  EXPECT_EQ(values(scatter_reduce(scalar_tensor(3.0), 0, scalar_tensor(int64_t{0}, kInt64),
                                  scalar_tensor(4.0), "prod")),
            (V{12}));
  EXPECT_EQ(values(scatter_reduce(f64({1, 2}), 0, idx({}), f64({}), "mean", false)), (V{1, 2}));
  // Half through float.
  EXPECT_EQ(values(scatter_reduce(zeros({2}, kFloat16), 0, idx({1, 1}),
                                  tensor({1.5f, 2.0f}).to(kFloat16), "sum")),
            (V{0, 3.5}));
}

TEST(ScatterReduce, Errors) {
  Tensor x = zeros({3});
  EXPECT_TRUE(throws_error([&] { scatter_reduce(x, 0, idx({0}), tensor({1.0f}), "add"); },
                           {"reduce argument must be either sum, prod, mean, amax or amin"}));
  EXPECT_THROW(scatter_reduce(x, 0, idx({3}), tensor({1.0f}), "sum"), IndexError);
  EXPECT_THROW(scatter_reduce(x, 0, idx({0}).to(kInt32), tensor({1.0f}), "sum"), TypeError);
  EXPECT_THROW(scatter_reduce(x, 0, idx({0}), f64({1}), "sum"), TypeError);
  EXPECT_THROW(scatter_reduce(x, 1, idx({0}), tensor({1.0f}), "sum"), IndexError);
}

TEST(TakeAlongDim, Values) {
  Tensor x = iota({3, 4});  // x[r][c] = 4r + c
  // Per-row picks (like argsort output).
  EXPECT_EQ(values(take_along_dim(x, idx({3, 0, 1, 1, 2, 2}, {3, 2}), 1)), (V{3, 0, 5, 5, 10, 10}));
  // Indices broadcast over rows; self broadcast over index rows.
  EXPECT_EQ(values(take_along_dim(x, idx({2, 0}, {1, 2}), 1)), (V{2, 0, 6, 4, 10, 8}));
  EXPECT_EQ(values(x.take_along_dim(idx({2, 0, 1}, {3, 1}), 0)),
            (V{8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7}));
  Tensor r = take_along_dim(iota({1, 4}), idx({3, 0, 1, 1}, {2, 2}), -1);
  EXPECT_EQ(r.sizes(), IntList({2, 2}));
  EXPECT_EQ(values(r), (V{3, 0, 1, 1}));
  // dim None: over the flattened (non-contiguous) tensor.
  EXPECT_EQ(values(take_along_dim(x.t(), idx({0, 1, 5}))), (V{0, 4, 9}));
  EXPECT_EQ(values(take_along_dim(scalar_tensor(2.0), scalar_tensor(int64_t{0}, kInt64))), (V{2}));
  EXPECT_EQ(take_along_dim(x, idx({}, {3, 0}), 1).sizes(), IntList({3, 0}));
}

TEST(TakeAlongDim, Errors) {
  Tensor x = iota({3, 4});
  EXPECT_THROW(take_along_dim(x, idx({0, 1}, {1, 2}).to(kInt32), 1), TypeError);
  EXPECT_THROW(take_along_dim(x, idx({0, 1}), 1), Error);
  EXPECT_THROW(take_along_dim(x, idx({4}, {1, 1}), 1), IndexError);
  EXPECT_THROW(take_along_dim(x, idx({0, 0}, {2, 1}), 1), Error);  // 2 rows vs 3
}

}  // namespace
}  // namespace kiln
