// softmax / log_softmax against float64 loops (exp(x - logsumexp) per slice): last dim and inner
// dims, strides, large magnitudes, -inf, empty and 0-dim inputs, dtypes, variants and errors.
#include "test_util.h"

#include <kiln/ops/softmax.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

const double kInf = std::numeric_limits<double>::infinity();

// softmax (or log_softmax) of x along dim by float64 loops: exp(x - logsumexp(slice)).
Tensor reference(const Tensor& x, int64_t dim, bool log) {
  const std::vector<double> v = x.tolist<double>();
  std::vector<double> out(v.size());
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  dim = dim < 0 ? dim + nd : dim;
  int64_t outer = 1, d = 1, inner = 1;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < dim) outer *= x.size(i);
    if (i == dim) d = x.size(i);
    if (i > dim) inner *= x.size(i);
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * d + k) * inner + j); };
      double m = -kInf;
      for (int64_t k = 0; k < d; ++k) m = std::max(m, v[at(k)]);
      double s = 0.0;
      for (int64_t k = 0; k < d; ++k) s += std::exp(v[at(k)] - m);
      // (x - max) - log(sum) rather than x - (max + log(sum)), which rounds at x's magnitude.
      for (int64_t k = 0; k < d; ++k) {
        const double l = (v[at(k)] - m) - std::log(s);
        out[at(k)] = log ? l : std::exp(l);
      }
    }
  }
  return from_vector(out, x.sizes(), kFloat64);
}

Tensor random_input(IntList sizes, DType dtype, double scale = 3.0) {
  manual_seed(7);
  return (randn(sizes, kFloat64) * scale).to(dtype);
}

TEST(Softmax, LastDimMatchesReferenceAndRowsSumToOne) {
  for (int64_t cols : {1, 7, 16, 37, 100, 1000}) {
    Tensor x = random_input({9, cols}, kFloat32);
    Tensor y = softmax(x, -1);
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(all_close(y, reference(x, 1, false), 1e-5, 1e-7)) << cols;
    EXPECT_TRUE(all_close(y.sum(IntList{1}), ones({9}, kFloat32), 1e-5, 1e-6)) << cols;
    EXPECT_TRUE(all_close(log_softmax(x, 1), reference(x, 1, true), 1e-5, 1e-5)) << cols;
  }
}

TEST(Softmax, Float64IsTight) {
  Tensor x = random_input({5, 41}, kFloat64, 10.0);
  EXPECT_TRUE(all_close(softmax(x, 1), reference(x, 1, false), 1e-13, 1e-300));
  EXPECT_TRUE(all_close(log_softmax(x, 1), reference(x, 1, true), 1e-13, 1e-13));
}

TEST(Softmax, InnerDimsMatchReference) {
  Tensor x = random_input({3, 5, 19}, kFloat32);
  for (int64_t dim : {0, 1, -2, 2}) {
    EXPECT_TRUE(all_close(softmax(x, dim), reference(x, dim, false), 1e-5, 1e-7)) << dim;
    EXPECT_TRUE(all_close(log_softmax(x, dim), reference(x, dim, true), 1e-5, 1e-5)) << dim;
  }
  Tensor d = random_input({2, 4, 3, 5}, kFloat64);
  EXPECT_TRUE(all_close(softmax(d, 1), reference(d, 1, false), 1e-13, 1e-300));
  EXPECT_TRUE(all_close(log_softmax(d, 2), reference(d, 2, true), 1e-13, 1e-13));
}

TEST(Softmax, NonContiguousInput) {
  Tensor base = random_input({37, 6}, kFloat32);
  Tensor x = base.t();  // (6, 37), rows strided
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(all_close(softmax(x, 1), reference(x, 1, false), 1e-5, 1e-7));
  EXPECT_TRUE(all_close(log_softmax(x, 0), reference(x, 0, true), 1e-5, 1e-5));
  Tensor sliced = random_input({4, 20}, kFloat32).slice(1, 0, 20, 2);
  EXPECT_TRUE(all_close(softmax(sliced, -1), reference(sliced, -1, false), 1e-5, 1e-7));
}

TEST(Softmax, ManyRowsRunInParallelWithTheSameResult) {
  Tensor x = random_input({64, 4096}, kFloat32);
  const int threads = get_num_threads();
  set_num_threads(1);
  Tensor one = softmax(x, 1);
  set_num_threads(2);
  Tensor two = softmax(x, 1);
  set_num_threads(threads);
  EXPECT_TRUE(all_close(one, two, 0.0, 0.0));
  EXPECT_TRUE(all_close(one, reference(x, 1, false), 1e-5, 1e-8));
  EXPECT_TRUE(all_close(log_softmax(x, 1), reference(x, 1, true), 1e-5, 1e-4));
}

TEST(Softmax, LargeMagnitudesDoNotOverflow) {
  Tensor x = tensor({{1e4, -1e4, 9999.0, 1e4}, {-1e4, -1e4 + 1, -1e4, -1e4 - 5}}, kFloat32);
  Tensor y = softmax(x, 1);
  EXPECT_TRUE(all_close(y, reference(x, 1, false), 1e-5, 1e-7));
  EXPECT_TRUE(all_close(log_softmax(x, 1), reference(x, 1, true), 1e-5, 1e-4));
  EXPECT_TRUE(all_close(softmax(x, 0), reference(x, 0, false), 1e-5, 1e-7));
  EXPECT_TRUE(all_close(softmax(x.to(kFloat64), 1), reference(x, 1, false), 1e-13, 1e-300));
  // 1e4 and 1e4 split evenly; 9999 is e^-1 of them.
  EXPECT_NEAR(y[0][0].item<double>(), 1.0 / (2.0 + std::exp(-1.0)), 1e-6);
}

TEST(Softmax, NegativeInfinity) {
  Tensor x = tensor({{0.0, -kInf, 1.0}, {-kInf, -kInf, 2.0}}, kFloat32);
  auto y = softmax(x, 1).tolist<double>();
  EXPECT_EQ(y[1], 0.0);
  EXPECT_NEAR(y[0], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_EQ(y[5], 1.0);
  auto ly = log_softmax(x, 1).tolist<double>();
  EXPECT_EQ(ly[1], -kInf);
  EXPECT_EQ(ly[3], -kInf);
  EXPECT_EQ(ly[5], 0.0);
  // A row that is all -inf has no maximum to shift by: NaN, as in PyTorch.
  Tensor all_inf = full({2, 3}, -kInf, kFloat32);
  EXPECT_TRUE(std::isnan(softmax(all_inf, 1)[0][0].item<double>()));
  EXPECT_TRUE(std::isnan(log_softmax(all_inf, 0)[0][0].item<double>()));
}

TEST(Softmax, NaNPropagatesThroughItsRow) {
  Tensor x = tensor({{1.0, std::nan(""), 2.0}, {1.0, 2.0, 3.0}}, kFloat32);
  auto y = softmax(x, 1).tolist<double>();
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[2]));
  EXPECT_FALSE(std::isnan(y[3]));
}

TEST(Softmax, EmptyAndZeroDim) {
  EXPECT_EQ(IntList(softmax(zeros({0, 5}), 1).sizes()), IntList({0, 5}));
  EXPECT_EQ(IntList(log_softmax(zeros({3, 0}), 1).sizes()), IntList({3, 0}));
  EXPECT_EQ(IntList(softmax(zeros({3, 0, 2}), 0).sizes()), IntList({3, 0, 2}));
  Tensor s = scalar_tensor(2.5, kFloat32);
  EXPECT_EQ(softmax(s, 0).dim(), 0);
  EXPECT_EQ(softmax(s, 0).item<double>(), 1.0);
  EXPECT_EQ(softmax(s, -1).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(s, 0).item<double>(), 0.0);
  EXPECT_THROW(softmax(s, 1), IndexError);
}

TEST(Softmax, DtypeArgumentAndSixteenBitFloats) {
  Tensor i = tensor({{1, 2, 3}, {0, 0, 5}}, kInt64);
  Tensor y = softmax(i, 1, kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(all_close(y, reference(i, 1, false), 1e-6, 1e-7));
  EXPECT_EQ(log_softmax(random_input({2, 3}, kFloat32), 1, kFloat64).dtype(), kFloat64);
  EXPECT_TRUE(throws_error([&] { softmax(i, 1); }, {"softmax", "floating point", "int64"}));
  EXPECT_THROW(softmax(i, 1), TypeError);
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor x = random_input({4, 33}, dt, 2.0);
    Tensor h = softmax(x, 1);
    EXPECT_EQ(h.dtype(), dt);
    const double tol = dt == kFloat16 ? 2e-3 : 1e-2;
    EXPECT_TRUE(all_close(h, reference(x, 1, false), tol, 1e-3)) << dtype_name(dt);
    EXPECT_TRUE(all_close(log_softmax(x, 0), reference(x, 0, true), tol, 1e-2)) << dtype_name(dt);
    // half_to_float: the 16-bit input computes and returns float32.
    const auto& op = ops::OpRegistry::instance().get("_softmax");
    Tensor f = ops::call1(op, {x, int64_t{1}, true});
    EXPECT_EQ(f.dtype(), kFloat32);
    EXPECT_TRUE(all_close(f, reference(x, 1, false), 1e-5, 1e-7));
  }
  const auto& op = ops::OpRegistry::instance().get("_log_softmax");
  EXPECT_TRUE(throws_error(
      [&] {
        ops::call1(op, {random_input({2, 2}, kFloat32), 1, true});
      },
      {"_log_softmax", "half_to_float", "float32"}));
}

TEST(Softmax, TensorMethodsAndOutVariant) {
  Tensor x = random_input({3, 8}, kFloat32);
  EXPECT_TRUE(all_close(x.softmax(1), reference(x, 1, false), 1e-5, 1e-7));
  EXPECT_TRUE(all_close(x.log_softmax(0), reference(x, 0, true), 1e-5, 1e-5));
  // _softmax.out into a transposed (non-contiguous) buffer of the right shape.
  Tensor out = empty({8, 3}, kFloat32).t();
  const auto& op = ops::OpRegistry::instance().get("_softmax.out");
  ops::call(op, {x, int64_t{1}, false, out});
  EXPECT_TRUE(all_close(out, reference(x, 1, false), 1e-5, 1e-7));
  const auto& lop = ops::OpRegistry::instance().get("log_softmax.int");
  EXPECT_TRUE(
      all_close(ops::call1(lop, {x, int64_t{1}, kFloat64}), reference(x, 1, true), 1e-12, 1e-12));
}

TEST(Softmax, MetaTensorsGiveShapeAndDtype) {
  Tensor x = empty({4, 6}, TensorOptions(kFloat16).device(Device::meta()));
  Tensor y = softmax(x, 0, kFloat32);
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(IntList(y.sizes()), IntList({4, 6}));
}

}  // namespace
}  // namespace kiln
