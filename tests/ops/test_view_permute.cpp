// permute, transpose, t, mT, squeeze, unsqueeze, movedim, diagonal.
#include "test_view_util.h"

namespace kiln {
namespace {

using testing::iota;
using testing::seq;
using testing::shares_storage;
using testing::throws_error;
using testing::values;

TEST(ViewPermute, Geometry) {
  Tensor x = iota({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  EXPECT_GEOMETRY(p, ({4, 2, 3}), ({1, 12, 4}), 0);
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_TRUE(shares_storage(p, x));
  std::vector<double> expected;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) expected.push_back(12 * b + 4 * c + a);
  EXPECT_EQ(values(p), expected);
  EXPECT_GEOMETRY(x.permute({-1, -3, 1}), ({4, 2, 3}), ({1, 12, 4}), 0);
  EXPECT_GEOMETRY(x.permute({0, 1, 2}), ({2, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_EQ(iota({}).permute(IntList{}).dim(), 0);
  EXPECT_GEOMETRY(iota({0, 2}).permute({1, 0}), ({2, 0}), ({1, 2}), 0);
  // Non-contiguous with an offset: the offset is kept.
  Tensor s = iota({3, 8}).slice(1, 1, std::nullopt, 2);  // [3, 4], strides [8, 2], offset 1
  EXPECT_GEOMETRY(s.permute({1, 0}), ({4, 3}), ({2, 8}), 1);
}

TEST(ViewPermute, Errors) {
  Tensor x = iota({2, 3, 4});
  EXPECT_TRUE(throws_error(
      [&] {
        x.permute({0, 1});
      },
      {"permute", "input.dim() = 3", "len(dims) = 2"}));
  EXPECT_TRUE(throws_error([&] { x.permute({0, 0, 1}); }, {"permute", "duplicate dims"}));
  EXPECT_TRUE(throws_error([&] { x.permute({0, -3, 1}); }, {"permute", "duplicate dims"}));
  EXPECT_THROW(x.permute({0, 1, 3}), IndexError);
}

TEST(ViewTranspose, Geometry) {
  Tensor x = iota({2, 3, 4});
  EXPECT_GEOMETRY(x.transpose(0, 2), ({4, 3, 2}), ({1, 4, 12}), 0);
  EXPECT_GEOMETRY(x.transpose(-1, 0), ({4, 3, 2}), ({1, 4, 12}), 0);
  Tensor same = x.transpose(1, 1);
  EXPECT_GEOMETRY(same, ({2, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_FALSE(same.is_same(x));
  EXPECT_TRUE(shares_storage(same, x));
  EXPECT_EQ(iota({}).transpose(0, -1).dim(), 0);
  EXPECT_GEOMETRY(iota({0, 3}).transpose(0, 1), ({3, 0}), ({1, 3}), 0);
  Tensor m = iota({2, 3}, kInt32).transpose(0, 1);
  EXPECT_EQ(m.dtype(), kInt32);
  EXPECT_EQ(values(m), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(x.transpose(0, 3), IndexError);
  EXPECT_THROW(x.transpose(-4, 0), IndexError);
}

TEST(ViewTranspose, TAndMT) {
  EXPECT_GEOMETRY(iota({3, 4}).t(), ({4, 3}), ({1, 4}), 0);
  EXPECT_GEOMETRY(iota({5}).t(), ({5}), ({1}), 0);
  EXPECT_EQ(iota({}).t().dim(), 0);
  EXPECT_TRUE(throws_error([&] { iota({2, 3, 4}).t(); }, {"t", "<= 2 dimensions", "self is 3D"}));
  EXPECT_GEOMETRY(iota({2, 3, 4}).mT(), ({2, 4, 3}), ({12, 1, 4}), 0);
  // Writing through t() shows in the base.
  Tensor x = iota({2, 3});
  x.t().select(0, 2).fill_(-1.0);  // column 2 of x
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, -1, 3, 4, -1}));
}

TEST(ViewSqueeze, AllAndDims) {
  Tensor x = iota({1, 3, 1, 4});  // strides [12, 4, 4, 1]
  Tensor s = x.squeeze();
  EXPECT_GEOMETRY(s, ({3, 4}), ({4, 1}), 0);
  EXPECT_TRUE(shares_storage(s, x));
  EXPECT_EQ(values(s), seq(0, 12));
  EXPECT_GEOMETRY(x.squeeze(0), ({3, 1, 4}), ({4, 4, 1}), 0);
  EXPECT_GEOMETRY(x.squeeze(1), ({1, 3, 1, 4}), ({12, 4, 4, 1}), 0);
  EXPECT_GEOMETRY(x.squeeze(-2), ({1, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_GEOMETRY(x.squeeze({0, 2}), ({3, 4}), ({4, 1}), 0);
  EXPECT_GEOMETRY(x.squeeze({-4, 1}), ({3, 1, 4}), ({4, 4, 1}), 0);
  EXPECT_GEOMETRY(x.squeeze(IntList{}), ({1, 3, 1, 4}), ({12, 4, 4, 1}), 0);
  EXPECT_GEOMETRY(iota({1, 1}).squeeze(), ({}), ({}), 0);
  EXPECT_EQ(iota({}).squeeze().dim(), 0);
  EXPECT_EQ(iota({}).squeeze(0).dim(), 0);
  EXPECT_EQ(iota({}).squeeze(IntList{-1}).dim(), 0);
  EXPECT_GEOMETRY(iota({0, 1}).squeeze(), ({0}), ({1}), 0);
  // Transposed input with an offset.
  Tensor t = iota({4, 1, 3}).transpose(0, 2).select(1, 0);  // [3, 4], strides [1, 3]
  EXPECT_GEOMETRY(t.unsqueeze(0).squeeze(), ({3, 4}), ({1, 3}), 0);
  EXPECT_THROW(x.squeeze(4), IndexError);
  EXPECT_THROW(iota({}).squeeze(1), IndexError);
  EXPECT_TRUE(throws_error([&] { x.squeeze({0, -4}); }, {"squeeze", "appears multiple times"}));
}

TEST(ViewUnsqueeze, Dims) {
  Tensor x = iota({3, 4});
  EXPECT_GEOMETRY(x.unsqueeze(0), ({1, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_GEOMETRY(x.unsqueeze(-1), ({3, 4, 1}), ({4, 1, 1}), 0);
  EXPECT_GEOMETRY(x.unsqueeze(2), ({3, 4, 1}), ({4, 1, 1}), 0);
  EXPECT_GEOMETRY(x.unsqueeze(1), ({3, 1, 4}), ({4, 4, 1}), 0);
  EXPECT_GEOMETRY(x.unsqueeze(-3), ({1, 3, 4}), ({12, 4, 1}), 0);
  EXPECT_GEOMETRY(x.t().unsqueeze(1), ({4, 1, 3}), ({1, 12, 4}), 0);
  Tensor s = iota({}).unsqueeze(0);
  EXPECT_GEOMETRY(s, ({1}), ({1}), 0);
  EXPECT_GEOMETRY(iota({0, 3}).unsqueeze(1), ({0, 1, 3}), ({3, 3, 1}), 0);
  Tensor u = x.unsqueeze(1);
  EXPECT_TRUE(shares_storage(u, x));
  EXPECT_EQ(values(u), seq(0, 12));
  EXPECT_THROW(x.unsqueeze(3), IndexError);
  EXPECT_THROW(x.unsqueeze(-4), IndexError);
}

TEST(ViewMovedim, IntAndLists) {
  Tensor x = iota({2, 3, 4, 5});  // strides [60, 20, 5, 1]
  EXPECT_GEOMETRY(x.movedim({0, 1}, {2, 3}), ({4, 5, 2, 3}), ({5, 1, 60, 20}), 0);
  EXPECT_GEOMETRY(x.movedim({3, 0}, {0, 3}), ({5, 3, 4, 2}), ({1, 20, 5, 60}), 0);
  Tensor y = iota({2, 3, 4});
  EXPECT_GEOMETRY(y.movedim(int64_t{-1}, int64_t{0}), ({4, 2, 3}), ({1, 12, 4}), 0);
  EXPECT_GEOMETRY(y.movedim(int64_t{0}, int64_t{2}), ({3, 4, 2}), ({4, 1, 12}), 0);
  EXPECT_GEOMETRY(y.movedim(int64_t{1}, int64_t{1}), ({2, 3, 4}), ({12, 4, 1}), 0);
  Tensor m = y.movedim(int64_t{0}, int64_t{-1});
  EXPECT_TRUE(shares_storage(m, y));
  std::vector<double> expected;
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 4; ++c)
      for (int a = 0; a < 2; ++a) expected.push_back(12 * a + 4 * b + c);
  EXPECT_EQ(values(m), expected);
  EXPECT_EQ(iota({}).movedim(int64_t{0}, int64_t{0}).dim(), 0);
  EXPECT_TRUE(throws_error([&] { x.movedim({0, 1}, {2}); }, {"movedim", "same number of dims"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.movedim({0, 0}, {1, 2});
      },
      {"movedim", "repeated dim in `source`"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.movedim({0, 1}, {2, -2});
      },
      {"movedim", "repeated dim in `destination`"}));
  EXPECT_THROW(x.movedim(IntList{4}, IntList{0}), IndexError);
}

TEST(ViewDiagonal, OffsetsAndDims) {
  Tensor x = iota({4, 4});
  Tensor d = x.diagonal();
  EXPECT_GEOMETRY(d, ({4}), ({5}), 0);
  EXPECT_EQ(values(d), (std::vector<double>{0, 5, 10, 15}));
  Tensor p = iota({3, 5}).diagonal(2);
  EXPECT_GEOMETRY(p, ({3}), ({6}), 2);
  EXPECT_EQ(values(p), (std::vector<double>{2, 8, 14}));
  Tensor n = iota({5, 3}).diagonal(-1);
  EXPECT_GEOMETRY(n, ({3}), ({4}), 3);
  EXPECT_EQ(values(n), (std::vector<double>{3, 7, 11}));
  Tensor three = iota({2, 3, 4}).diagonal(1, -1, 0);
  EXPECT_GEOMETRY(three, ({3, 1}), ({4, 13}), 12);
  EXPECT_EQ(values(three), (std::vector<double>{12, 16, 20}));
  Tensor t = iota({3, 4}).t().diagonal();  // t[i][i] = x[i][i]
  EXPECT_GEOMETRY(t, ({3}), ({5}), 0);
  EXPECT_EQ(values(t), (std::vector<double>{0, 5, 10}));
  EXPECT_GEOMETRY(iota({3, 3}).diagonal(5), ({0}), ({4}), 0);
  EXPECT_GEOMETRY(iota({3, 3}).diagonal(-4), ({0}), ({4}), 0);
  EXPECT_GEOMETRY(iota({0, 3}).diagonal(), ({0}), ({4}), 0);
  // Writing the diagonal writes the base.
  d.fill_(-1.0);
  std::vector<double> expected = seq(0, 16);
  for (int i : {0, 5, 10, 15}) expected[i] = -1;
  EXPECT_EQ(values(x), expected);
  EXPECT_TRUE(
      throws_error([&] { x.diagonal(0, 1, -1); }, {"diagonal", "dimensions cannot be identical"}));
  EXPECT_THROW(iota({4}).diagonal(), IndexError);
}

}  // namespace
}  // namespace kiln
