// matmul's rank and broadcasting cases, linear and einsum, against float64 loops.
#include "ops/test_linalg_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::f64_tensor;
using testing::ref_matmul;
using testing::throws_error;
using testing::values;

using Shape = std::vector<int64_t>;

TEST(LinalgMatmul, EveryRankCombination) {
  manual_seed(4);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4}, {4}},                 // dot
      {{3, 4}, {4}},              // mv
      {{4}, {4, 2}},              // vector-matrix
      {{3, 4}, {4, 2}},           // mm
      {{2, 3, 4}, {4}},           // folded batch times vector
      {{2, 3, 4}, {4, 5}},        // folded batch times matrix
      {{4}, {2, 4, 5}},           // vector times batch
      {{3, 4}, {2, 4, 5}},        // matrix times batch (folded through the transpose)
      {{2, 3, 4}, {2, 4, 5}},     // bmm
      {{2, 1, 3, 4}, {5, 4, 2}},  // broadcast batch dims both ways
      {{1, 3, 4}, {2, 2, 4, 5}},  // different batch ranks
      {{2, 2, 3, 4}, {4}},        // 4-D times vector
      {{4}, {2, 2, 4, 3}},        // vector times 4-D
      {{0, 3, 4}, {4, 2}},        // empty batch
      {{2, 3, 0}, {0, 4}},        // k = 0
      {{2, 0, 4}, {2, 4, 3}},     // m = 0
  };
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
    for (const auto& c : cases) {
      Tensor a = randn(IntList(c.first), TensorOptions(dt));
      Tensor b = randn(IntList(c.second), TensorOptions(dt));
      Tensor got = matmul(a, b);
      EXPECT_EQ(got.dtype(), dt);
      EXPECT_TRUE(all_close(got, ref_matmul(a, b), tol, tol))
          << fmt::format("[{}] @ [{}]", fmt::join(c.first, ","), fmt::join(c.second, ","));
    }
  }
}

TEST(LinalgMatmul, NonContiguousOperands) {
  manual_seed(5);
  TensorOptions o(kFloat64);
  // A batch that cannot fold (batch dim not outermost), a transposed matrix, expanded batches.
  Tensor a = randn({3, 2, 4}, o).transpose(0, 1);
  Tensor w = randn({5, 4}, o).t();
  EXPECT_TRUE(all_close(matmul(a, w), ref_matmul(a, w), 1e-12, 1e-12));
  Tensor vec = randn({8}, o).slice(0, 0, 8, 2);
  EXPECT_TRUE(all_close(matmul(a, vec), ref_matmul(a, vec), 1e-12, 1e-12));
  EXPECT_TRUE(
      all_close(matmul(vec, a.transpose(1, 2)), ref_matmul(vec, a.transpose(1, 2)), 1e-12, 1e-12));
  Tensor e = randn({1, 3, 4}, o).expand({6, 3, 4});
  Tensor rhs = randn({6, 4, 2}, o);
  EXPECT_TRUE(all_close(matmul(e, rhs), ref_matmul(e, rhs), 1e-12, 1e-12));
  Tensor left = randn({3, 8}, o).slice(1, 0, 8, 2);
  Tensor batch = randn({2, 5, 4}, o).transpose(1, 2);
  EXPECT_TRUE(all_close(matmul(left, batch), ref_matmul(left, batch), 1e-12, 1e-12));
}

TEST(LinalgMatmul, IntegerAndErrors) {
  Tensor a = tensor({{1, 2}, {3, 4}});
  EXPECT_EQ(values(matmul(a, tensor({1, 1}))), (std::vector<double>{3, 7}));
  EXPECT_TRUE(throws_error([&] { matmul(tensor(1.0), tensor({1.0})); },
                           {"matmul", "at least 1D", "0D and 1D"}));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(randn({3, 4}), randn({5, 2}));
      },
      {"shapes cannot be multiplied (3x4 and 5x2)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        matmul(randn({2, 3, 4}), randn({3, 4, 5}));
      },
      {"matmul", "2", "3"}));
}

TEST(LinalgMatmul, Linear) {
  manual_seed(6);
  TensorOptions o(kFloat64);
  Tensor w = randn({5, 4}, o);
  Tensor bias = randn({5}, o);
  const Tensor wt = w.t();
  for (const Shape& s : {Shape{4}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 3, 4}}) {
    Tensor x = randn(IntList(s), o);
    EXPECT_TRUE(all_close(linear(x, w), ref_matmul(x, wt), 1e-12, 1e-12));
    Tensor want = ref_matmul(x, wt);
    const std::vector<double> vw = values(want), vb = values(bias);
    std::vector<double> with_bias(vw.size());
    for (size_t i = 0; i < vw.size(); ++i) with_bias[i] = vw[i] + vb[i % 5];
    EXPECT_TRUE(
        all_close(linear(x, w, bias), f64_tensor(with_bias, want.sizes().vec()), 1e-12, 1e-12));
  }
  Tensor xt = randn({3, 2, 4}, o).transpose(0, 1);
  EXPECT_TRUE(all_close(linear(xt, w), ref_matmul(xt, wt), 1e-12, 1e-12));
  EXPECT_TRUE(throws_error([&] { linear(randn({3, 3}, o), w, bias); }, {"cannot be multiplied"}));
}

TEST(LinalgMatmul, EinsumContractions) {
  manual_seed(7);
  TensorOptions o(kFloat64);
  Tensor a = randn({2, 3, 4}, o), b = randn({2, 4, 5}, o);
  EXPECT_TRUE(all_close(einsum("bij,bjk->bik", {a, b}), ref_matmul(a, b), 1e-12, 1e-12));

  Tensor q = randn({2, 3, 4, 6}, o), k = randn({2, 3, 5, 6}, o);
  EXPECT_TRUE(all_close(einsum("bhqd,bhkd->bhqk", {q, k}), ref_matmul(q, k.transpose(-1, -2)),
                        1e-12, 1e-12));

  Tensor m = randn({3, 4}, o), v = randn({4}, o), u = randn({3}, o);
  EXPECT_TRUE(all_close(einsum("ij,j->i", {m, v}), ref_matmul(m, v), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(einsum("i,j->ij", {u, v}), ref_matmul(u.unsqueeze(1), v.unsqueeze(0)),
                        1e-12, 1e-12));
  // Implicit output (sorted letters used once) and spaces.
  Tensor n = randn({4, 2}, o);
  EXPECT_TRUE(all_close(einsum("ij, jk", {m, n}), ref_matmul(m, n), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(einsum("jk,ij", {n, m}), ref_matmul(m, n), 1e-12, 1e-12));

  Tensor sq = randn({2, 3, 3}, o);
  const std::vector<double> vs = values(sq);
  std::vector<double> diag;
  for (size_t bi = 0; bi < 2; ++bi)
    for (size_t i = 0; i < 3; ++i) diag.push_back(vs[bi * 9 + i * 3 + i]);
  EXPECT_TRUE(all_close(einsum("bii->bi", {sq}), f64_tensor(diag, {2, 3}), 1e-12, 1e-12));
  double trace0 = diag[0] + diag[1] + diag[2];
  EXPECT_NEAR(einsum("ii", {sq.select(0, 0)}).item<double>(), trace0, 1e-12);

  const std::vector<double> vm = values(m);
  std::vector<double> transposed;
  for (size_t j = 0; j < 4; ++j)
    for (size_t i = 0; i < 3; ++i) transposed.push_back(vm[i * 4 + j]);
  EXPECT_TRUE(all_close(einsum("ij->ji", {m}), f64_tensor(transposed, {4, 3})));
  double total = 0;
  for (double x : vm) total += x;
  EXPECT_NEAR(einsum("ij->", {m}).item<double>(), total, 1e-12);

  // Ellipsis with broadcasting, three operands, a sum over a label used once.
  Tensor w = randn({4, 5}, o);
  EXPECT_TRUE(all_close(einsum("...ij,...jk->...ik", {a, w}), ref_matmul(a, w), 1e-12, 1e-12));
  Tensor c = randn({5, 2}, o);
  EXPECT_TRUE(
      all_close(einsum("ij,jk,kl->il", {m, w, c}), ref_matmul(ref_matmul(m, w), c), 1e-12, 1e-12));
  Tensor rows = randn({3, 4}, o);
  std::vector<double> row_dots(3, 0.0);
  const std::vector<double> vr = values(rows);
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j) row_dots[i] += vm[i * 4 + j] * vr[i * 4 + j];
  EXPECT_TRUE(all_close(einsum("bi,bi->b", {m, rows}), f64_tensor(row_dots, {3}), 1e-12, 1e-12));
}

TEST(LinalgMatmul, EinsumErrors) {
  Tensor m = randn({3, 4});
  EXPECT_TRUE(throws_error([&] { einsum("ij,jk->ik", {m}); }, {"einsum"}));
  EXPECT_TRUE(throws_error([&] { einsum("ijk->i", {m}); }, {"einsum", "subscripts"}));
  EXPECT_TRUE(throws_error([&] { einsum("ij->k", {m}); }, {"einsum", "output subscript"}));
  EXPECT_TRUE(throws_error([&] { einsum("ij,jk->ik", {m, randn({5, 2})}); }, {"einsum"}));
}

}  // namespace
}  // namespace kiln
