// slice, narrow, select, unbind, split, split_with_sizes, chunk, as_strided.
#include "test_view_util.h"

namespace kiln {
namespace {

using std::nullopt;
using testing::iota;
using testing::seq;
using testing::shares_storage;
using testing::throws_error;
using testing::values;

// Expects each piece to have `sizes[i]` and storage offset `offsets[i]`, all sharing base.
void expect_pieces(const std::vector<Tensor>& pieces, const Tensor& base,
                   const std::vector<std::vector<int64_t>>& sizes,
                   const std::vector<int64_t>& offsets) {
  ASSERT_EQ(pieces.size(), sizes.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(testing::vec(pieces[i].sizes()), sizes[i]) << "piece " << i;
    EXPECT_EQ(pieces[i].storage_offset(), offsets[i]) << "piece " << i;
    EXPECT_EQ(testing::vec(pieces[i].strides()), testing::vec(base.strides())) << "piece " << i;
    EXPECT_TRUE(shares_storage(pieces[i], base)) << "piece " << i;
  }
}

TEST(ViewSlice, Ranges) {
  Tensor x = iota({5, 4});
  Tensor rows = x.slice(0, 1, 4);
  EXPECT_GEOMETRY(rows, ({3, 4}), ({4, 1}), 4);
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_TRUE(shares_storage(rows, x));
  EXPECT_EQ(values(rows), seq(4, 16));
  EXPECT_GEOMETRY(x.slice(), ({5, 4}), ({4, 1}), 0);
  EXPECT_GEOMETRY(x.slice(-1, -100, 100), ({5, 4}), ({4, 1}), 0);
  EXPECT_GEOMETRY(x.slice(1, -3, -1), ({5, 2}), ({4, 1}), 1);

  Tensor stepped = iota({5, 6}).slice(1, -5, nullopt, 2);
  EXPECT_GEOMETRY(stepped, ({5, 3}), ({6, 2}), 1);
  EXPECT_FALSE(stepped.is_contiguous());
  std::vector<double> expected;
  for (int i = 0; i < 5; ++i)
    for (int j : {1, 3, 5}) expected.push_back(6 * i + j);
  EXPECT_EQ(values(stepped), expected);
  EXPECT_GEOMETRY(iota({7}).slice(0, 0, 7, 3), ({3}), ({3}), 0);
  EXPECT_GEOMETRY(iota({7}).slice(0, 1, 7, 3), ({2}), ({3}), 1);
}

TEST(ViewSlice, EmptyAndClamped) {
  EXPECT_GEOMETRY(iota({5}).slice(0, 3, 1), ({0}), ({1}), 3);
  EXPECT_GEOMETRY(iota({5}).slice(0, 10), ({0}), ({1}), 5);
  EXPECT_GEOMETRY(iota({5}).slice(0, -10, -8), ({0}), ({1}), 0);
  EXPECT_GEOMETRY(iota({0, 3}).slice(0, 0, 2), ({0, 3}), ({3, 1}), 0);
}

TEST(ViewSlice, NonContiguousAndWrites) {
  Tensor x = iota({4, 10}, kInt64);
  Tensor even = x.slice(1, 0, nullopt, 2);  // [4, 5], strides [10, 2]
  Tensor s = even.slice(1, 0, 5, 2);
  EXPECT_GEOMETRY(s, ({4, 3}), ({10, 4}), 0);
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j : {0, 4, 8}) expected.push_back(10 * i + j);
  EXPECT_EQ(values(s), expected);

  Tensor y = iota({3, 4});
  y.slice(1, 1, 3).fill_(-1.0);
  EXPECT_EQ(values(y), (std::vector<double>{0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11}));
}

TEST(ViewSlice, Errors) {
  Tensor x = iota({5});
  EXPECT_TRUE(throws_error([&] { x.slice(0, 0, 2, 0); }, {"slice", "step must be positive"}));
  EXPECT_TRUE(throws_error([&] { x.slice(0, 0, 2, -1); }, {"slice", "step must be positive"}));
  EXPECT_THROW(x.slice(1), IndexError);
  EXPECT_THROW(iota({}).slice(0), IndexError);
}

TEST(ViewNarrow, Ranges) {
  Tensor x = iota({5, 4});
  Tensor n = x.narrow(0, 1, 3);
  EXPECT_GEOMETRY(n, ({3, 4}), ({4, 1}), 4);
  EXPECT_TRUE(shares_storage(n, x));
  Tensor c = x.narrow(-1, -3, 2);
  EXPECT_GEOMETRY(c, ({5, 2}), ({4, 1}), 1);
  std::vector<double> expected;
  for (int i = 0; i < 5; ++i)
    for (int j : {1, 2}) expected.push_back(4 * i + j);
  EXPECT_EQ(values(c), expected);
  EXPECT_GEOMETRY(x.narrow(0, 5, 0), ({0, 4}), ({4, 1}), 20);
  EXPECT_GEOMETRY(x.t().narrow(1, 2, 2), ({4, 2}), ({1, 4}), 8);
  EXPECT_TRUE(throws_error([&] { x.narrow(0, 2, 4); },
                           {"narrow", "start (2) + length (4) exceeds dimension size (5)"}));
  EXPECT_TRUE(throws_error([&] { x.narrow(0, 1, -1); }, {"narrow", "length must be non-negative"}));
  EXPECT_THROW(x.narrow(0, 6, 0), IndexError);
  EXPECT_THROW(x.narrow(0, -6, 1), IndexError);
  EXPECT_THROW(x.narrow(2, 0, 1), IndexError);
  EXPECT_THROW(iota({}).narrow(0, 0, 1), IndexError);
}

TEST(ViewSelect, Indices) {
  Tensor x = iota({3, 4});
  Tensor r = x.select(0, 1);
  EXPECT_GEOMETRY(r, ({4}), ({1}), 4);
  EXPECT_TRUE(shares_storage(r, x));
  EXPECT_EQ(values(r), seq(4, 8));
  Tensor c = x.select(1, -1);
  EXPECT_GEOMETRY(c, ({3}), ({4}), 3);
  EXPECT_EQ(values(c), (std::vector<double>{3, 7, 11}));
  EXPECT_GEOMETRY(iota({2, 3, 4}).select(-2, 2), ({2, 4}), ({12, 1}), 8);
  Tensor s = iota({4}).select(0, 2);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.storage_offset(), 2);
  EXPECT_EQ(s.item<double>(), 2.0);
  EXPECT_GEOMETRY(iota({3, 0}).select(0, 2), ({0}), ({1}), 2);
  EXPECT_GEOMETRY(x.t().select(0, 2), ({3}), ({4}), 2);
  Tensor h = iota({2, 3}, kBFloat16).select(1, 1);
  EXPECT_EQ(h.dtype(), kBFloat16);
  EXPECT_EQ(values(h), (std::vector<double>{1, 4}));
}

TEST(ViewSelect, Errors) {
  Tensor x = iota({3, 4});
  EXPECT_TRUE(throws_error([&] { x.select(0, 5); },
                           {"select(): index 5 out of range for tensor of size [3, 4] at "
                            "dimension 0"}));
  EXPECT_THROW(x.select(0, 5), IndexError);
  EXPECT_THROW(x.select(1, -5), IndexError);
  EXPECT_THROW(x.select(1, 4), IndexError);
  EXPECT_THROW(x.select(2, 0), IndexError);
  EXPECT_THROW(iota({}).select(0, 0), IndexError);
}

TEST(ViewUnbind, Pieces) {
  Tensor x = iota({3, 4});
  std::vector<Tensor> rows = x.unbind();
  ASSERT_EQ(rows.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GEOMETRY(rows[i], ({4}), ({1}), 4 * i);
    EXPECT_TRUE(shares_storage(rows[i], x));
    EXPECT_EQ(values(rows[i]), seq(4 * i, 4 * i + 4));
  }
  std::vector<Tensor> last = iota({2, 3, 4}).unbind(-1);
  ASSERT_EQ(last.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_GEOMETRY(last[i], ({2, 3}), ({12, 4}), i);
  EXPECT_EQ(iota({2, 0}).unbind().size(), 2u);
  EXPECT_EQ(iota({0, 2}).unbind().size(), 0u);
  rows[1].fill_(0.0);
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11}));
  EXPECT_THROW(iota({}).unbind(), IndexError);
  EXPECT_THROW(x.unbind(2), IndexError);
}

TEST(ViewSplit, EqualPieces) {
  Tensor x = iota({7, 3});
  expect_pieces(x.split(3), x, {{3, 3}, {3, 3}, {1, 3}}, {0, 9, 18});
  Tensor y = iota({3, 8});
  expect_pieces(y.split(4, -1), y, {{3, 4}, {3, 4}}, {0, 4});
  Tensor z = iota({3, 2});
  expect_pieces(z.split(5), z, {{3, 2}}, {0});
  Tensor e = iota({0, 2});
  expect_pieces(e.split(0), e, {{0, 2}}, {0});
  Tensor t = iota({5, 3}).t();  // [3, 5], strides [1, 3]
  std::vector<Tensor> tp = t.split(2, 1);
  expect_pieces(tp, t, {{3, 2}, {3, 2}, {3, 1}}, {0, 6, 12});
  EXPECT_EQ(values(tp[2]), (std::vector<double>{12, 13, 14}));
  EXPECT_TRUE(throws_error([&] { iota({3}).split(0); },
                           {"split", "split_size can only be 0 if dimension size is 0"}));
  EXPECT_TRUE(throws_error([&] { iota({3}).split(-1); }, {"split", "non-negative"}));
  EXPECT_THROW(iota({}).split(1), IndexError);
}

TEST(ViewSplit, WithSizes) {
  Tensor x = iota({6, 4});
  std::vector<Tensor> p = split_with_sizes(x, {1, 2, 3});
  expect_pieces(p, x, {{1, 4}, {2, 4}, {3, 4}}, {0, 4, 12});
  EXPECT_EQ(values(p[1]), seq(4, 12));
  Tensor y = iota({3, 5});
  expect_pieces(y.split({2, 0, 3}, -1), y, {{3, 2}, {3, 0}, {3, 3}}, {0, 2, 2});
  EXPECT_TRUE(throws_error(
      [&] {
        x.split_with_sizes({1, 2});
      },
      {"split_with_sizes", "sum exactly to 6", "dimension 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.split_with_sizes({7, -1});
      },
      {"split_with_sizes", "non-negative"}));
}

TEST(ViewChunk, PyTorchRule) {
  Tensor x = iota({7, 2});
  expect_pieces(x.chunk(3), x, {{3, 2}, {3, 2}, {1, 2}}, {0, 6, 12});
  Tensor y = iota({2, 6});
  // ceil(6 / 4) = 2 columns each: only 3 chunks.
  expect_pieces(y.chunk(4, 1), y, {{2, 2}, {2, 2}, {2, 2}}, {0, 2, 4});
  Tensor z = iota({6});
  EXPECT_EQ(z.chunk(6).size(), 6u);
  EXPECT_EQ(iota({2}).chunk(5).size(), 2u);
  Tensor e = iota({0, 3});
  expect_pieces(e.chunk(3), e, {{0, 3}, {0, 3}, {0, 3}}, {0, 0, 0});
  Tensor n = iota({4, 8}).slice(1, 0, nullopt, 2);  // [4, 4], strides [8, 2]
  std::vector<Tensor> nc = n.chunk(2, -1);
  expect_pieces(nc, n, {{4, 2}, {4, 2}}, {0, 4});
  EXPECT_EQ(values(nc[1]), (std::vector<double>{4, 6, 12, 14, 20, 22, 28, 30}));
  EXPECT_TRUE(
      throws_error([&] { x.chunk(0); }, {"chunk: expects `chunks` to be greater than 0, got: 0"}));
  EXPECT_THROW(iota({}).chunk(1), IndexError);
}

TEST(ViewAsStrided, Geometry) {
  Tensor x = iota({4, 4});
  Tensor d = x.as_strided({4}, {5});
  EXPECT_GEOMETRY(d, ({4}), ({5}), 0);
  EXPECT_TRUE(shares_storage(d, x));
  EXPECT_EQ(values(d), (std::vector<double>{0, 5, 10, 15}));
  Tensor w = iota({12}).as_strided({3, 3}, {3, 1}, 2);
  EXPECT_GEOMETRY(w, ({3, 3}), ({3, 1}), 2);
  EXPECT_EQ(values(w), seq(2, 11));
  EXPECT_EQ(values(iota({3, 4}).as_strided({2, 3}, {1, 2})),
            (std::vector<double>{0, 2, 4, 1, 3, 5}));
  Tensor overlap = iota({5}).as_strided({2, 3}, {1, 1});
  EXPECT_EQ(values(overlap), (std::vector<double>{0, 1, 2, 1, 2, 3}));
  // The default offset is the input's own.
  Tensor tail = iota({10}).slice(0, 3);
  Tensor t = tail.as_strided({2}, {2});
  EXPECT_EQ(t.storage_offset(), 3);
  EXPECT_EQ(values(t), (std::vector<double>{3, 5}));
  // Bounds are checked against the whole storage, not the input's extent.
  EXPECT_EQ(values(iota({10}).slice(0, 0, 2).as_strided({3}, {4})), (std::vector<double>{0, 4, 8}));
  Tensor s = iota({5}).as_strided({}, {}, 4);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 4.0);
  EXPECT_GEOMETRY(iota({5}).as_strided({0, 3}, {3, 1}, 100), ({0, 3}), ({3, 1}), 100);
  // Writes go to the base.
  d.fill_(-1.0);
  EXPECT_EQ(values(x.diagonal()), std::vector<double>(4, -1.0));
}

TEST(ViewAsStrided, Errors) {
  Tensor x = iota({5});
  EXPECT_TRUE(throws_error(
      [&] {
        x.as_strided({2, 3}, {3, 1});
      },
      {"as_strided", "storage of 6 elements", "only 5"}));
  EXPECT_TRUE(throws_error([&] { x.as_strided({2}, {1}, 4); }, {"as_strided", "only 5"}));
  EXPECT_TRUE(throws_error([&] { x.as_strided({2, 2}, {1}); }, {"as_strided", "mismatch"}));
  EXPECT_TRUE(throws_error([&] { x.as_strided({2}, {-1}, 3); }, {"as_strided", "negative"}));
  EXPECT_TRUE(throws_error([&] { x.as_strided({2}, {1}, -1); }, {"as_strided", "offset"}));
}

}  // namespace
}  // namespace kiln
