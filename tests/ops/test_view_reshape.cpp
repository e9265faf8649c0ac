// view, reshape, flatten, unflatten: geometry as PyTorch reports it, values by index arithmetic,
// aliasing, when reshape copies, and the errors.
#include "test_view_util.h"

namespace kiln {
namespace {

using testing::iota;
using testing::seq;
using testing::shares_storage;
using testing::throws_error;
using testing::values;
using testing::vec;

TEST(ViewView, ContiguousSplitsAndMerges) {
  Tensor x = iota({2, 3, 4});
  Tensor v = x.view({4, 6});
  EXPECT_GEOMETRY(v, ({4, 6}), ({6, 1}), 0);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_TRUE(shares_storage(v, x));
  EXPECT_EQ(v.data_ptr(), x.data_ptr());
  EXPECT_EQ(values(v), seq(0, 24));

  Tensor inferred = x.view({-1, 4});
  EXPECT_GEOMETRY(inferred, ({6, 4}), ({4, 1}), 0);
  EXPECT_GEOMETRY(x.view({24}), ({24}), ({1}), 0);
  EXPECT_GEOMETRY(x.view({2, 1, 12}), ({2, 1, 12}), ({12, 12, 1}), 0);
}

TEST(ViewView, ZeroDimAndEmpty) {
  Tensor s = iota({});
  EXPECT_GEOMETRY(s.view({1, 1}), ({1, 1}), ({1, 1}), 0);
  EXPECT_GEOMETRY(s.view({-1}), ({1}), ({1}), 0);
  Tensor one = iota({1});
  Tensor back = one.view(IntList{});
  EXPECT_EQ(back.dim(), 0);
  EXPECT_EQ(values(back), seq(0, 1));

  Tensor e = iota({0, 3});
  EXPECT_GEOMETRY(e.view({3, 0, 5}), ({3, 0, 5}), ({5, 5, 1}), 0);
  EXPECT_GEOMETRY(e.view({0}), ({0}), ({1}), 0);
  // Same shape on an empty tensor keeps its strides.
  EXPECT_GEOMETRY(e.view({0, 3}), ({0, 3}), ({3, 1}), 0);
}

TEST(ViewView, TransposedInputWhenStridesAllow) {
  Tensor a = iota({4, 6}).t();  // sizes [6, 4], strides [1, 6]: a[i][j] = 6 j + i
  Tensor v = a.view({2, 3, 4});
  EXPECT_GEOMETRY(v, ({2, 3, 4}), ({3, 1, 6}), 0);
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_TRUE(shares_storage(v, a));
  std::vector<double> expected;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < 4; ++r) expected.push_back(6 * r + (3 * p + q));
  EXPECT_EQ(values(v), expected);
  // Adding size-1 dims is always possible.
  EXPECT_GEOMETRY(a.view({6, 1, 4}), ({6, 1, 4}), ({1, 24, 6}), 0);
}

TEST(ViewView, StridedSliceWithOffset) {
  // Every other column of a [4, 6], starting at column 1: sizes [4, 3], strides [6, 2], offset 1.
  Tensor s = iota({4, 6}).slice(1, 1, std::nullopt, 2);
  Tensor v = s.view({2, 2, 3});
  EXPECT_GEOMETRY(v, ({2, 2, 3}), ({12, 6, 2}), 1);
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) expected.push_back(6 * i + 1 + 2 * j);
  EXPECT_EQ(values(v), expected);
}

TEST(ViewView, WritesShowInBase) {
  Tensor x = iota({2, 6});
  Tensor v = x.view({3, 4});
  Tensor row = v.select(0, 1);  // storage positions 4..7
  row.fill_(-1.0);
  std::vector<double> expected = seq(0, 12);
  for (int i = 4; i < 8; ++i) expected[i] = -1;
  EXPECT_EQ(values(x), expected);
}

TEST(ViewView, Errors) {
  Tensor x = iota({3, 4});
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({3, 5});
      },
      {"view: shape '[3, 5]' is invalid for input of size 12"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({-1, 5});
      },
      {"shape '[-1, 5]' is invalid for input of size 12"}));
  EXPECT_TRUE(throws_error([&] { x.view({-1, -1}); }, {"view", "only one dimension"}));
  EXPECT_TRUE(throws_error([&] { x.view({-2, -6}); }, {"view", "invalid shape dimension -2"}));
  EXPECT_TRUE(throws_error(
      [&] {
        iota({0, 3}).view({0, -1});
      },
      {"view", "0 elements", "ambiguous"}));
  Tensor a = iota({4, 6}).t();
  const char* msg =
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.";
  EXPECT_TRUE(throws_error([&] { a.view({24}); }, {msg}));
  EXPECT_TRUE(throws_error([&] { a.view({4, 6}); }, {msg}));
  // Every other column of rows 6 apart: the rows still join into one stride-2 run...
  Tensor s = iota({4, 6}).slice(1, 0, std::nullopt, 2);
  EXPECT_GEOMETRY(s.view({12}), ({12}), ({2}), 0);
  // ...but the first 3 columns of rows 8 apart do not.
  Tensor narrow = iota({4, 8}).slice(1, 0, 3);
  EXPECT_TRUE(throws_error([&] { narrow.view({12}); }, {msg}));
  EXPECT_GEOMETRY(narrow.view({2, 2, 3}), ({2, 2, 3}), ({16, 8, 1}), 0);
}

TEST(ViewReshape, ViewsWhenPossible) {
  Tensor x = iota({3, 4});
  Tensor r = x.reshape({2, 6});
  EXPECT_TRUE(shares_storage(r, x));
  EXPECT_GEOMETRY(r, ({2, 6}), ({6, 1}), 0);
  Tensor a = iota({4, 6}).t();
  Tensor rv = a.reshape({2, 3, 4});
  EXPECT_TRUE(shares_storage(rv, a));
  EXPECT_GEOMETRY(rv, ({2, 3, 4}), ({3, 1, 6}), 0);
  // Aliasing: a write through the reshape shows in the base.
  r.fill_(7.0);
  EXPECT_EQ(values(x), std::vector<double>(12, 7.0));
}

TEST(ViewReshape, CopiesOnlyWhenNeeded) {
  Tensor base = iota({4, 6});
  Tensor a = base.t();  // a[i][j] = 6 j + i
  Tensor r = a.reshape({24});
  EXPECT_FALSE(shares_storage(r, a));
  EXPECT_GEOMETRY(r, ({24}), ({1}), 0);
  std::vector<double> expected;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) expected.push_back(6 * j + i);
  EXPECT_EQ(values(r), expected);
  Tensor r2 = a.reshape({-1, 8});
  EXPECT_FALSE(shares_storage(r2, a));
  EXPECT_GEOMETRY(r2, ({3, 8}), ({8, 1}), 0);
  EXPECT_EQ(values(r2), expected);
  // The copy is independent of the input.
  r.fill_(0.0);
  EXPECT_EQ(values(base), seq(0, 24));
}

TEST(ViewReshape, DtypesZeroDimEmpty) {
  Tensor i = iota({2, 3}, kInt64).t();
  Tensor ri = i.reshape({6});
  EXPECT_EQ(ri.dtype(), kInt64);
  EXPECT_EQ(values(ri), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor h = iota({2, 3}, kFloat16).reshape({3, 2});
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(values(h), seq(0, 6));
  Tensor b = iota({4}, kBool).reshape({2, 2});
  EXPECT_EQ(values(b), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_GEOMETRY(iota({}).reshape({-1}), ({1}), ({1}), 0);
  EXPECT_GEOMETRY(iota({2, 0}).reshape({0, 4}), ({0, 4}), ({4, 1}), 0);
  EXPECT_TRUE(throws_error(
      [&] {
        iota({2, 3}).reshape({4, -1});
      },
      {"reshape: shape '[4, -1]' is invalid for input of size 6"}));
}

TEST(ViewReshape, ViewAsReshapeAs) {
  Tensor x = iota({2, 6});
  Tensor like = iota({3, 4});
  EXPECT_GEOMETRY(x.view_as(like), ({3, 4}), ({4, 1}), 0);
  Tensor r = x.t().reshape_as(like);
  EXPECT_EQ(vec(r.sizes()), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values(r), (std::vector<double>{0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}));
}

TEST(ViewFlatten, Dims) {
  Tensor x = iota({2, 3, 4, 5});
  Tensor all = x.flatten();
  EXPECT_GEOMETRY(all, ({120}), ({1}), 0);
  EXPECT_TRUE(shares_storage(all, x));
  EXPECT_GEOMETRY(x.flatten(1, -2), ({2, 12, 5}), ({60, 5, 1}), 0);
  EXPECT_GEOMETRY(x.flatten(-2), ({2, 3, 20}), ({60, 20, 1}), 0);
  EXPECT_GEOMETRY(x.flatten(2, 2), ({2, 3, 4, 5}), ({60, 20, 5, 1}), 0);
  EXPECT_GEOMETRY(iota({}).flatten(), ({1}), ({1}), 0);
  EXPECT_GEOMETRY(iota({2, 0, 3}).flatten(1), ({2, 0}), ({1, 1}), 0);
  // Transposed: a copy, in the transposed order.
  Tensor t = iota({2, 3}).t().flatten();
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(throws_error([&] { x.flatten(2, 1); },
                           {"flatten", "start_dim (2) cannot come after end_dim (1)"}));
  EXPECT_THROW(x.flatten(4), IndexError);
}

TEST(ViewUnflatten, Dims) {
  Tensor x = iota({2, 12});
  Tensor u = x.unflatten(1, {3, 4});
  EXPECT_GEOMETRY(u, ({2, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_TRUE(shares_storage(u, x));
  EXPECT_EQ(values(u), seq(0, 24));
  EXPECT_GEOMETRY(iota({6, 5}).unflatten(-2, {-1, 2}), ({3, 2, 5}), ({10, 5, 1}), 0);
  // Non-contiguous input: unflattening a transposed dim keeps its stride.
  Tensor t = iota({6, 4}).t().unflatten(1, {2, 3});
  EXPECT_GEOMETRY(t, ({4, 2, 3}), ({1, 12, 4}), 0);
  EXPECT_GEOMETRY(iota({0, 4}).unflatten(1, {2, 2}), ({0, 2, 2}), ({4, 2, 1}), 0);
  EXPECT_TRUE(throws_error(
      [&] {
        x.unflatten(1, {5, 3});
      },
      {"unflatten: shape '[5, 3]' is invalid for input of size 12"}));
  EXPECT_TRUE(throws_error([&] { x.unflatten(1, IntList{}); }, {"unflatten", "non-empty"}));
  EXPECT_THROW(x.unflatten(2, {3, 4}), IndexError);
  EXPECT_THROW(iota({}).unflatten(0, {1}), IndexError);
}

}  // namespace
}  // namespace kiln
