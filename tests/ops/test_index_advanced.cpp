// Advanced indexing (index.Tensor) and index_put: every placement rule for the indexed dims,
// boolean/uint8 masks, negative indices, broadcasting among index tensors, layouts, empty and
// 0-dim cases, accumulate with duplicates, and each kind of bad input. References are
// hand-computed or loops over plain vectors in the test.
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/random.h>

#include <random>

namespace kiln {
namespace {

using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

Tensor idx(std::vector<int64_t> v, IntList shape) { return from_vector(v, shape); }
Tensor idx(std::vector<int64_t> v) { return from_vector(v); }
Tensor mask(std::vector<int64_t> v, IntList shape) { return from_vector(v, shape).to(kBool); }
Tensor mask(std::vector<int64_t> v) { return from_vector(v).to(kBool); }
const Tensor none;

TEST(IndexAdvanced, OneIndexAndNegatives) {
  Tensor x = iota({5, 3});  // row r: 3r .. 3r+2
  Tensor r = index(x, {idx({4, -1, 0})});
  EXPECT_EQ(r.sizes(), IntList({3, 3}));
  EXPECT_EQ(values(r), (V{12, 13, 14, 12, 13, 14, 0, 1, 2}));
  // A 0-dim index drops the dim; int32 indices work the same.
  EXPECT_EQ(values(index(x, {scalar_tensor(int64_t{-2}, kInt64)})), (V{9, 10, 11}));
  EXPECT_EQ(values(x.index({idx({1, 2}).to(kInt32)})), (V{3, 4, 5, 6, 7, 8}));
}

TEST(IndexAdvanced, AdjacentIndicesPickPoints) {
  Tensor x = iota({4, 5});
  Tensor r = index(x, {idx({0, 3, 1}), idx({4, -5, 2})});
  EXPECT_EQ(r.sizes(), IntList({3}));
  EXPECT_EQ(values(r), (V{4, 15, 7}));
  // Broadcast [2,1] with [3]: a [2,3] grid of points.
  r = index(x, {idx({1, 2}, {2, 1}), idx({0, 2, 4})});
  EXPECT_EQ(r.sizes(), IntList({2, 3}));
  EXPECT_EQ(values(r), (V{5, 7, 9, 10, 12, 14}));
}

TEST(IndexAdvanced, SliceThenIndexKeepsPlace) {
  Tensor x = iota({3, 4, 5});
  const std::vector<int64_t> i{1, 0, 3, 3};
  Tensor r = index(x, {none, idx(i, {2, 2})});
  ASSERT_EQ(r.sizes(), IntList({3, 2, 2, 5}));
  V expected;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t p = 0; p < 4; ++p)
      for (int64_t c = 0; c < 5; ++c)
        expected.push_back(static_cast<double>(a * 20 + i[p] * 5 + c));
  EXPECT_EQ(values(r), expected);
}

TEST(IndexAdvanced, AdjacentInTheMiddle) {
  Tensor x = iota({2, 3, 4, 2});
  Tensor r = index(x, {none, idx({0, 2}), idx({3, 1})});
  ASSERT_EQ(r.sizes(), IntList({2, 2, 2}));
  const int64_t i1[] = {0, 2}, i2[] = {3, 1};
  V expected;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t c = 0; c < 2; ++c)
        expected.push_back(static_cast<double>(a * 24 + i1[p] * 8 + i2[p] * 2 + c));
  EXPECT_EQ(values(r), expected);
}

TEST(IndexAdvanced, SeparatedIndicesGoFirst) {
  Tensor x = iota({3, 4, 5});
  const int64_t a[] = {2, 0}, b[] = {1, 4, 0};
  Tensor r = index(x, {idx({2, 0}, {2, 1}), none, idx({1, 4, 0})});
  ASSERT_EQ(r.sizes(), IntList({2, 3, 4}));
  V expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        expected.push_back(static_cast<double>(a[i] * 20 + k * 5 + b[j]));
  EXPECT_EQ(values(r), expected);
  // Leading slice and a slice in between: [none, i, none, j] on [2,3,4,5] -> [n, 2, 4].
  Tensor y = iota({2, 3, 4, 5});
  r = index(y, {none, idx({2, 1}), none, idx({4, 0})});
  ASSERT_EQ(r.sizes(), IntList({2, 2, 4}));
  const int64_t i1[] = {2, 1}, i3[] = {4, 0};
  expected.clear();
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t d0 = 0; d0 < 2; ++d0)
      for (int64_t d2 = 0; d2 < 4; ++d2)
        expected.push_back(static_cast<double>(d0 * 60 + i1[p] * 20 + d2 * 5 + i3[p]));
  EXPECT_EQ(values(r), expected);
}

TEST(IndexAdvanced, BoolMasks) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(values(index(x, {mask({1, 0, 1})})), (V{0, 1, 2, 3, 8, 9, 10, 11}));
  // A 2-D mask covers two dims: the selected elements in row-major order.
  Tensor m = mask({1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0}, {3, 4});
  Tensor r = index(x, {m});
  EXPECT_EQ(r.sizes(), IntList({4}));
  EXPECT_EQ(values(r), (V{0, 3, 9, 10}));
  // After a slice: columns 1 and 3 of every row.
  EXPECT_EQ(values(index(x, {none, mask({0, 1, 0, 1})})), (V{1, 3, 5, 7, 9, 11}));
  // uint8 masks are masks too.
  EXPECT_EQ(values(index(x, {from_vector<int64_t>({0, 1, 0}).to(kUInt8)})), (V{4, 5, 6, 7}));
  // A mask and an index separated by a slice: the pair broadcasts, its dim goes first.
  Tensor y = iota({2, 3, 4});
  r = index(y, {idx({1, 0}), none, mask({0, 1, 1, 0})});
  ASSERT_EQ(r.sizes(), IntList({2, 3}));
  EXPECT_EQ(values(r), (V{13, 17, 21, 2, 6, 10}));
  // An all-false mask gives an empty result.
  EXPECT_EQ(index(x, {mask({0, 0, 0})}).sizes(), IntList({0, 4}));
  // Non-contiguous mask.
  Tensor mt = mask({1, 0, 0, 0, 1, 1}, {2, 3}).t();  // [3,2]: [[1,0],[0,1],[0,1]]
  EXPECT_EQ(values(index(iota({3, 2}), {mt})), (V{0, 3, 5}));
}

TEST(IndexAdvanced, LayoutsAndDtypes) {
  Tensor x = iota({4, 3}).t();  // [3,4], x[i][j] = 3j + i
  EXPECT_EQ(values(index(x, {idx({2, 0})})), (V{2, 5, 8, 11, 0, 3, 6, 9}));
  // A strided index tensor.
  Tensor strided = idx({3, 9, 1, 9}).slice(0, 0, 4, 2);
  EXPECT_EQ(values(index(x, {none, strided})), (V{9, 3, 10, 4, 11, 5}));
  EXPECT_EQ(values(index(iota({4}, kInt64), {idx({3, 1})})), (V{3, 1}));
  EXPECT_EQ(index(iota({4}, kInt64), {idx({3})}).dtype(), kInt64);
  Tensor b = tensor({true, false, true});
  EXPECT_EQ(values(index(b, {idx({1, 2, 0})})), (V{0, 1, 1}));
  Tensor h = iota({3}, kFloat16);
  EXPECT_EQ(values(index(h, {idx({2, 2})})), (V{2, 2}));
}

TEST(IndexAdvanced, EmptyAndZeroDim) {
  Tensor x = iota({4, 3});
  EXPECT_EQ(index(x, {idx({}, {0})}).sizes(), IntList({0, 3}));
  EXPECT_EQ(index(x, {none, idx({}, {2, 0})}).sizes(), IntList({4, 2, 0}));
  EXPECT_EQ(index(empty({0, 3}), {none, idx({2, 0})}).sizes(), IntList({0, 2}));
  // Indexing an empty dim with an empty index is fine.
  EXPECT_EQ(index(empty({0, 3}), {idx({}, {0})}).sizes(), IntList({0, 3}));
  // 0-dim self: aten accepts no index tensor there.
  EXPECT_THROW(index(scalar_tensor(5.0), {idx({0})}), IndexError);
}

TEST(IndexAdvanced, RandomAgainstLoops) {
  std::mt19937 gen(7);
  Tensor x = randn({6, 7, 8}, kFloat64);
  const std::vector<double> xv = values(x);
  auto at = [&](int64_t a, int64_t b, int64_t c) {
    return xv[static_cast<size_t>(a * 56 + b * 8 + c)];
  };
  std::uniform_int_distribution<int64_t> d7(-7, 6), d8(-8, 7);
  std::vector<int64_t> i(15), j(5);
  for (auto& v : i) v = d7(gen);
  for (auto& v : j) v = d8(gen);
  auto w = [](int64_t v, int64_t n) { return v < 0 ? v + n : v; };
  // Adjacent dims 1 and 2 with broadcast [3,5] x [5].
  Tensor r = index(x, {none, idx(i, {3, 5}), idx(j)});
  ASSERT_EQ(r.sizes(), IntList({6, 3, 5}));
  V expected;
  for (int64_t a = 0; a < 6; ++a)
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t q = 0; q < 5; ++q)
        expected.push_back(
            at(a, w(i[static_cast<size_t>(p * 5 + q)], 7), w(j[static_cast<size_t>(q)], 8)));
  EXPECT_EQ(values(r), expected);
  // Separated dims 0 and 2 on a transposed self.
  Tensor xt = x.permute({2, 1, 0});  // [8,7,6], xt[c][b][a] = x[a][b][c]
  std::vector<int64_t> k(5);
  std::uniform_int_distribution<int64_t> d6(0, 5);
  for (auto& v : k) v = d6(gen);
  r = index(xt, {idx(j), none, idx(k)});
  ASSERT_EQ(r.sizes(), IntList({5, 7}));
  expected.clear();
  for (int64_t p = 0; p < 5; ++p)
    for (int64_t b = 0; b < 7; ++b)
      expected.push_back(at(k[static_cast<size_t>(p)], b, w(j[static_cast<size_t>(p)], 8)));
  EXPECT_EQ(values(r), expected);
}

TEST(IndexAdvanced, Errors) {
  Tensor x = iota({4, 3});
  EXPECT_TRUE(throws_error([&] { index(x, {tensor({1.0f})}); },
                           {"tensors used as indices must be long, int, byte or bool tensors"}));
  EXPECT_THROW(index(x, {tensor({1.0f})}), TypeError);
  EXPECT_THROW(index(x, {idx({1}).to(kInt16)}), TypeError);
  EXPECT_TRUE(throws_error(
      [&] {
        index(x, {idx({0}), idx({0}), idx({0})});
      },
      {"too many indices for tensor of dimension 2 (got 3)"}));
  EXPECT_THROW(index(x, {idx({0}), mask({1, 0, 1, 1}, {2, 2})}), IndexError);
  EXPECT_TRUE(throws_error(
      [&] {
        index(x, {mask({1, 0, 1})});
      },
      {"mask [3]", "indexed tensor [4, 3] at index 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        index(x, {none, idx({1, 3})});
      },
      {"index 3 is out of bounds for dimension 1 with size 3"}));
  EXPECT_TRUE(throws_error([&] { index(x, {idx({-5})}); },
                           {"index -5 is out of bounds for dimension 0 with size 4"}));
  EXPECT_THROW(index(x, {idx({4})}), IndexError);
  EXPECT_TRUE(throws_error(
      [&] {
        index(x, {idx({0, 1}), idx({0, 1, 2})});
      },
      {"could not be broadcast together with shapes [2], [3]"}));
  EXPECT_THROW(index(x, {}), IndexError);
}

TEST(IndexAdvanced, Meta) {
  Tensor x = empty({4, 5, 6}, TensorOptions(kFloat32).device(Device::meta()));
  Tensor i = empty({2, 3}, TensorOptions(kInt64).device(Device::meta()));
  Tensor r = index(x, {i, none, i});
  EXPECT_TRUE(r.is_meta());
  EXPECT_EQ(r.sizes(), IntList({2, 3, 5}));
  Tensor m = empty({4}, TensorOptions(kBool).device(Device::meta()));
  EXPECT_TRUE(throws_error([&] { index(x, {m}); }, {"data-dependent"}));
}

TEST(IndexPut, Assign) {
  Tensor x = zeros({4, 3});
  Tensor r = index_put(x, {idx({3, -4})}, tensor({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}));
  EXPECT_EQ(values(r), (V{4, 5, 6, 0, 0, 0, 0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(values(x), V(12, 0.0));  // functional: self untouched
  // Points, scalar values broadcast.
  r = index_put(zeros({3, 3}), {idx({0, 2}), idx({2, 0})}, scalar_tensor(7.0f));
  EXPECT_EQ(values(r), (V{0, 0, 7, 0, 0, 0, 7, 0, 0}));
  // A mask: values broadcast along the kept dim.
  r = index_put(iota({3, 2}, kFloat32), {mask({1, 0, 1})}, tensor({-1.0f, -2.0f}));
  EXPECT_EQ(values(r), (V{-1, -2, 2, 3, -1, -2}));
  // Separated indices: values shaped like the result [2, 3].
  r = index_put(zeros({2, 3, 2}, kInt64), {idx({1, 0}), none, idx({0, 1})},
                from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(values(r), (V{0, 4, 0, 5, 0, 6, 1, 0, 2, 0, 3, 0}));
}

TEST(IndexPut, AccumulateDuplicates) {
  Tensor r = index_put(zeros({4}, kFloat64), {idx({1, 3, 1, 1, -1})},
                       tensor({1.0, 2.0, 10.0, 100.0, 1000.0}).to(kFloat64), true);
  EXPECT_EQ(values(r), (V{0, 111, 0, 1002}));
  r = index_put(ones({2, 2}, kInt32), {mask({1, 1, 0, 1}, {2, 2})}, scalar_tensor(5, kInt32), true);
  EXPECT_EQ(values(r), (V{6, 6, 1, 6}));
  // Larger random case against a loop.
  std::mt19937 gen(3);
  std::uniform_int_distribution<int64_t> d(-50, 49);
  std::vector<int64_t> i(4000);
  for (auto& v : i) v = d(gen);
  Tensor vals = randn({4000, 3}, kFloat64);
  Tensor base = randn({50, 3}, kFloat64);
  std::vector<double> expected = values(base);
  const std::vector<double> vv = values(vals);
  for (size_t p = 0; p < i.size(); ++p) {
    const int64_t row = i[p] < 0 ? i[p] + 50 : i[p];
    for (size_t c = 0; c < 3; ++c) expected[static_cast<size_t>(row) * 3 + c] += vv[p * 3 + c];
  }
  r = index_put(base, {idx(i)}, vals, true);
  const std::vector<double> got = values(r);
  for (size_t p = 0; p < got.size(); ++p) EXPECT_NEAR(got[p], expected[p], 1e-9);
  // Same result run after run (serial accumulation order).
  EXPECT_EQ(values(index_put(base, {idx(i)}, vals, true)), got);
}

TEST(IndexPut, InPlaceAndOut) {
  Tensor x = zeros({3, 4}).t();  // non-contiguous [4, 3]
  Tensor& same = index_put_(x, {idx({1, 3})}, tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TRUE(same.is_same(x));
  EXPECT_EQ(values(x), (V{0, 0, 0, 1, 2, 3, 0, 0, 0, 1, 2, 3}));
  x.index_put_({idx({1})}, tensor({1.0f, 1.0f, 1.0f}), true);
  EXPECT_EQ(values(x.index({idx({1})})), (V{2, 3, 4}));
  // Values that alias self are read before writing.
  Tensor y = iota({4}, kFloat32);
  y.index_put_({idx({0, 1, 2, 3})}, y.flip({0}));
  EXPECT_EQ(values(y), (V{3, 2, 1, 0}));
  static const auto& out_op = ops::OpRegistry::instance().get("index_put.out");
  Tensor out = empty({0}, kFloat32);
  ops::call(out_op, {iota({2, 2}, kFloat32), std::vector<Tensor>{idx({1})}, tensor({9.0f, 8.0f}),
                     false, out});
  EXPECT_EQ(values(out), (V{0, 1, 9, 8}));
  // Method form.
  EXPECT_EQ(values(iota({3}).index_put({idx({0})}, scalar_tensor(5.0, kFloat64))), (V{5, 1, 2}));
}

TEST(IndexPut, Errors) {
  Tensor x = zeros({4, 3});
  EXPECT_TRUE(throws_error(
      [&] {
        index_put(x, {idx({0, 1})}, zeros({3, 3}));
      },
      {"value tensor of shape [3, 3] cannot be broadcast to indexing result "
       "of shape [2, 3]"}));
  EXPECT_THROW(index_put(x, {idx({0})}, zeros({3}, kFloat64)), TypeError);
  EXPECT_THROW(index_put(x, {idx({4})}, zeros({3})), IndexError);
  EXPECT_THROW(index_put(x, {tensor({0.5})}, zeros({3})), TypeError);
  EXPECT_THROW(index_put(x, {mask({1, 0})}, zeros({3})), IndexError);
}

}  // namespace
}  // namespace kiln
