// mm, bmm, addmm, baddbmm, dot, outer against float64 loops: layouts of every operand and of
// out=, empty dims, beta = 0, integer and half dtypes, thread counts, errors.
#include "ops/test_linalg_util.h"

#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::f64_tensor;
using testing::matrix_in_layout;
using testing::ref_matmul;
using testing::ThreadsGuard;
using testing::throws_error;
using testing::values;
const auto& op = testing::registry_op;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Linalg, MmEveryLayoutAndThreadCount) {
  ThreadsGuard guard;
  manual_seed(1);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (DType dt : {kFloat32, kFloat64}) {
      const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
      for (int la = 0; la < 4; ++la) {
        for (int lb = 0; lb < 4; ++lb) {
          Tensor a = matrix_in_layout(5, 7, dt, la);
          Tensor b = matrix_in_layout(7, 3, dt, lb);
          Tensor c = mm(a, b);
          EXPECT_EQ(c.dtype(), dt);
          EXPECT_TRUE(all_close(c, ref_matmul(a, b), tol, tol)) << la << " " << lb;
        }
      }
    }
  }
}

TEST(Linalg, MmLargeUsesThreads) {
  ThreadsGuard guard;
  manual_seed(2);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor a = randn({130, 70}, TensorOptions(kFloat64));
    Tensor b = randn({90, 70}, TensorOptions(kFloat64)).t();
    EXPECT_TRUE(all_close(mm(a, b), ref_matmul(a, b), 1e-12, 1e-12));
  }
}

TEST(Linalg, MmSizeOneDimsWithOddStrides) {
  // A [1, k] row taken from a column-major matrix, and a [k, 1] column of a row-major one.
  Tensor big = randn({6, 4}, TensorOptions(kFloat32));
  Tensor row = big.t().narrow(0, 1, 1);  // [1, 6], strides (1, 4)
  Tensor col = big.narrow(1, 2, 1);      // [6, 1], strides (4, 1)
  EXPECT_TRUE(all_close(mm(row, col), ref_matmul(row, col), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(mm(col, row), ref_matmul(col, row), 1e-5, 1e-5));
}

TEST(Linalg, MmOutLayouts) {
  Tensor a = randn({4, 5}, TensorOptions(kFloat64));
  Tensor b = randn({5, 3}, TensorOptions(kFloat64));
  const Tensor ref = ref_matmul(a, b);
  // Column-major out, and a strided out with no BLAS layout, both prefilled with NaN.
  Tensor col_out = full({3, 4}, kNaN, TensorOptions(kFloat64)).t();
  Tensor strided_out = full({4, 6}, kNaN, TensorOptions(kFloat64)).slice(1, 0, 6, 2);
  for (Tensor out : {col_out, strided_out}) {
    ops::call(op("mm.out"), {a, b, out});
    EXPECT_TRUE(all_close(out, ref, 1e-12, 1e-12));
  }
  EXPECT_EQ(col_out.stride(0), 1);
}

TEST(Linalg, EmptyDims) {
  Tensor k0 = mm(randn({3, 0}), randn({0, 4}));
  EXPECT_EQ(k0.sizes(), IntList({3, 4}));
  EXPECT_TRUE(all_close(k0, f64_tensor(std::vector<double>(12, 0.0), {3, 4})));
  EXPECT_EQ(mm(randn({0, 3}), randn({3, 4})).sizes(), IntList({0, 4}));
  EXPECT_EQ(mm(randn({2, 3}), randn({3, 0})).sizes(), IntList({2, 0}));
  EXPECT_EQ(bmm(randn({0, 2, 3}), randn({0, 3, 4})).sizes(), IntList({0, 2, 4}));
  // k = 0 in addmm: beta * self.
  Tensor self = tensor({{1.0, 2.0}, {3.0, 4.0}}, TensorOptions(kFloat64));
  EXPECT_TRUE(all_close(addmm(self, randn({2, 0}, TensorOptions(kFloat64)),
                              randn({0, 2}, TensorOptions(kFloat64)), 3.0),
                        tensor({{3.0, 6.0}, {9.0, 12.0}})));
  EXPECT_TRUE(all_close(dot(randn({0}), randn({0})), tensor(0.0)));
}

TEST(Linalg, BmmLayoutsAndBatchParallelism) {
  ThreadsGuard guard;
  manual_seed(3);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (DType dt : {kFloat32, kFloat64}) {
      const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
      TensorOptions o(dt);
      // Many small products (parallel over the batch) and a few larger ones.
      for (auto [batch, m, k, n] :
           std::vector<std::array<int64_t, 4>>{{64, 3, 4, 5}, {3, 40, 70, 50}}) {
        Tensor a = randn({batch, m, k}, o);
        Tensor b = randn({batch, n, k}, o).transpose(1, 2);
        EXPECT_TRUE(all_close(bmm(a, b), ref_matmul(a, b), tol, tol));
      }
      // Batch dim not outermost, strided operand.
      Tensor a = randn({3, 2, 4}, o).transpose(0, 1);
      Tensor b = randn({2, 4, 10}, o).slice(2, 0, 10, 2);
      EXPECT_TRUE(all_close(bmm(a, b), ref_matmul(a, b), tol, tol));
    }
  }
}

TEST(Linalg, AddmmBetaAlphaAndBroadcast) {
  Tensor a = randn({3, 4}, TensorOptions(kFloat64));
  Tensor b = randn({4, 2}, TensorOptions(kFloat64));
  const std::vector<double> p = values(ref_matmul(a, b));
  for (Tensor self :
       {randn({3, 2}, TensorOptions(kFloat64)), randn({2}, TensorOptions(kFloat64)),
        randn({3, 1}, TensorOptions(kFloat64)), tensor(1.5, TensorOptions(kFloat64))}) {
    Tensor got = addmm(self, a, b, 0.5, 2.0);
    const std::vector<double> s = values(self.expand({3, 2}));
    std::vector<double> want(6);
    for (size_t i = 0; i < 6; ++i) want[i] = 0.5 * s[i] + 2.0 * p[i];
    EXPECT_TRUE(all_close(got, f64_tensor(want, {3, 2}), 1e-12, 1e-12)) << self.dim();
  }
}

TEST(Linalg, AddmmBetaZeroIgnoresNaN) {
  Tensor a = randn({3, 4}, TensorOptions(kFloat32));
  Tensor b = randn({4, 2}, TensorOptions(kFloat32));
  Tensor nan_self = full({3, 2}, kNaN, TensorOptions(kFloat32));
  const Tensor ref = ref_matmul(a, b);
  EXPECT_TRUE(all_close(addmm(nan_self, a, b, 0.0), ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(
      baddbmm(full({1, 3, 2}, kNaN, TensorOptions(kFloat32)), a.unsqueeze(0), b.unsqueeze(0), 0.0),
      ref.unsqueeze(0), 1e-5, 1e-5));
  // out= prefilled with NaN and beta = 0, and k = 0 with beta = 0.
  Tensor out = full({3, 2}, kNaN, TensorOptions(kFloat32));
  ops::call(op("addmm.out"), {nan_self, a, b, Scalar(0.0), Scalar(1.0), out});
  EXPECT_TRUE(all_close(out, ref, 1e-5, 1e-5));
  Tensor zeros_out = addmm(nan_self, randn({3, 0}), randn({0, 2}), 0.0);
  EXPECT_TRUE(all_close(zeros_out, f64_tensor(std::vector<double>(6, 0.0), {3, 2})));
}

TEST(Linalg, AddmmInPlace) {
  Tensor self = tensor({{1.0, 2.0}, {3.0, 4.0}});
  Tensor a = tensor({{1.0, 0.0}, {0.0, 1.0}});
  Tensor b = tensor({{5.0, 6.0}, {7.0, 8.0}});
  ops::call(op("addmm_"), {self, a, b, Scalar(2), Scalar(1)});
  EXPECT_TRUE(all_close(self, tensor({{7.0, 10.0}, {13.0, 16.0}})));
  // In place, self must already have the product's shape.
  Tensor row = tensor({1.0, 2.0});
  EXPECT_THROW(ops::call(op("addmm_"), {row, a, b, Scalar(1), Scalar(1)}), Error);
  // baddbmm_ on a column-major self.
  Tensor batch_self =
      tensor({{{1.0, 2.0}, {3.0, 4.0}}}).transpose(1, 2).contiguous().transpose(1, 2);
  ops::call(op("baddbmm_"), {batch_self, a.unsqueeze(0), b.unsqueeze(0), Scalar(1), Scalar(2)});
  EXPECT_TRUE(all_close(batch_self, tensor({{{11.0, 14.0}, {17.0, 20.0}}})));
}

TEST(Linalg, Baddbmm) {
  Tensor self = randn({4}, TensorOptions(kFloat64));
  Tensor a = randn({2, 3, 5}, TensorOptions(kFloat64));
  Tensor b = randn({2, 4, 5}, TensorOptions(kFloat64)).transpose(1, 2);
  const std::vector<double> p = values(ref_matmul(a, b));
  const std::vector<double> s = values(self.expand({2, 3, 4}));
  std::vector<double> want(p.size());
  for (size_t i = 0; i < p.size(); ++i) want[i] = -1.0 * s[i] + 0.25 * p[i];
  EXPECT_TRUE(
      all_close(baddbmm(self, a, b, -1.0, 0.25), f64_tensor(want, {2, 3, 4}), 1e-12, 1e-12));
}

TEST(Linalg, DotAndOuter) {
  Tensor a = randn({10, 2}, TensorOptions(kFloat64)).select(1, 1);  // stride 2
  Tensor b = randn({10}, TensorOptions(kFloat64));
  const std::vector<double> va = values(a), vb = values(b);
  double want = 0;
  for (size_t i = 0; i < va.size(); ++i) want += va[i] * vb[i];
  Tensor d = dot(a, b);
  EXPECT_EQ(d.dim(), 0);
  EXPECT_NEAR(d.item<double>(), want, 1e-12);

  Tensor o = outer(a.narrow(0, 0, 3), b.narrow(0, 0, 4));
  std::vector<double> wo;
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j) wo.push_back(va[i] * vb[j]);
  EXPECT_TRUE(all_close(o, f64_tensor(wo, {3, 4}), 1e-12, 1e-12));
  EXPECT_EQ(outer(tensor({1, 2}), tensor({0.5})).dtype(), kFloat32);
}

TEST(Linalg, IntegerProductsAreExact) {
  for (DType dt : {kInt32, kInt64, kInt16, kUInt8}) {
    Tensor a = tensor({{1, 2, 3}, {4, 5, 6}}, TensorOptions(dt));
    Tensor b = tensor({{7, 8}, {9, 10}, {11, 12}}, TensorOptions(dt)).t().contiguous().t();
    Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(values(c), (std::vector<double>{58, 64, 139, 154}));
  }
  Tensor i64 = tensor({{1, 2}, {3, 4}}, TensorOptions(kInt64));
  EXPECT_EQ(values(addmm(i64, i64, i64, 2, 3)), (std::vector<double>{23, 34, 51, 74}));
  EXPECT_EQ(dot(tensor({1, 2, 3}), tensor({4, 5, 6})).item<int64_t>(), 32);
  EXPECT_EQ(values(bmm(i64.unsqueeze(0), i64.unsqueeze(0))), (std::vector<double>{7, 10, 15, 22}));
}

TEST(Linalg, HalfPrecisionComputesInFloat) {
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor a = randn({4, 6}).to(dt);
    Tensor b = randn({6, 3}).to(dt);
    Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_TRUE(all_close(c, ref_matmul(a, b), 2e-2, 5e-2));
  }
}

TEST(Linalg, Errors) {
  Tensor m23 = randn({2, 3}), m45 = randn({4, 5});
  EXPECT_TRUE(throws_error([&] { mm(m23, m45); },
                           {"mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bmm(m23, randn({2, 3, 4}));
      },
      {"bmm: expected 3-D tensors, got 2-D and 3-D"}));
  EXPECT_TRUE(throws_error([&] { mm(randn({3}), m23); }, {"mm: expected 2-D tensors"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mm(m23, randn({3, 2}, TensorOptions(kFloat64)));
      },
      {"expected both tensors to have the same dtype, got float32 and float64"}));
  EXPECT_TRUE(throws_error([&] { bmm(randn({2, 3, 4}), randn({3, 4, 5})); }, {"bmm", "2", "3"}));
  EXPECT_TRUE(throws_error([&] { addmm(randn({4, 2}), m23, randn({3, 2})); }, {"addmm", "4x2"}));
  EXPECT_TRUE(throws_error([&] { dot(randn({3}), randn({4})); }, {"dot", "3", "4"}));
  EXPECT_TRUE(throws_error([&] { dot(m23, m23); }, {"dot: 1D tensors expected"}));
  EXPECT_TRUE(throws_error([&] { outer(m23, randn({3})); }, {"outer"}));
  Tensor b = tensor({{true, false}});
  EXPECT_THROW(mm(b, b.t()), TypeError);
  // Meta tensors check alike without data.
  Tensor meta_a = empty({2, 3}, TensorOptions(kFloat32).device(Device::meta()));
  EXPECT_EQ(mm(meta_a, empty({3, 7}, TensorOptions(kFloat32).device(Device::meta()))).sizes(),
            IntList({2, 7}));
  EXPECT_TRUE(throws_error(
      [&] {
        mm(meta_a, empty({4, 7}, TensorOptions(kFloat32).device(Device::meta())));
      },
      {"shapes cannot be multiplied (2x3 and 4x7)"}));
}

}  // namespace
}  // namespace kiln
