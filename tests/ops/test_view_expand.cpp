// expand, expand_as, broadcast_to, broadcast_tensors: stride-0 views.
#include "test_view_util.h"

namespace kiln {
namespace {

using testing::iota;
using testing::shares_storage;
using testing::throws_error;
using testing::values;

TEST(ViewExpand, Geometry) {
  Tensor col = iota({3, 1});
  Tensor e = col.expand({3, 4});
  EXPECT_GEOMETRY(e, ({3, 4}), ({1, 0}), 0);
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_TRUE(shares_storage(e, col));
  EXPECT_EQ(values(e), (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_GEOMETRY(iota({3}).expand({2, 3}), ({2, 3}), ({0, 1}), 0);
  EXPECT_GEOMETRY(iota({3}).expand({1, 3}), ({1, 3}), ({3, 1}), 0);
  EXPECT_GEOMETRY(iota({1, 3}).expand({2, -1, -1}), ({2, 1, 3}), ({0, 3, 1}), 0);
  EXPECT_GEOMETRY(iota({2, 3}).expand({2, 3}), ({2, 3}), ({3, 1}), 0);
  EXPECT_GEOMETRY(iota({}).expand({2, 2}), ({2, 2}), ({0, 0}), 0);
  EXPECT_GEOMETRY(iota({}).expand({1, 1}), ({1, 1}), ({0, 0}), 0);
  EXPECT_EQ(iota({}).expand(IntList{}).dim(), 0);
  EXPECT_GEOMETRY(iota({1, 3}).expand({0, 3}), ({0, 3}), ({0, 1}), 0);
  Tensor b = iota({2, 1}, kBool).expand({2, 3});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values(b), (std::vector<double>{0, 0, 0, 1, 1, 1}));
}

TEST(ViewExpand, NonContiguousWithOffset) {
  // Row 1 of the odd columns of a [3, 8]: sizes [1, 4], strides [8, 2], offset 9.
  Tensor row = iota({3, 8}, kInt64).slice(1, 1, std::nullopt, 2).slice(0, 1, 2);
  EXPECT_GEOMETRY(row, ({1, 4}), ({8, 2}), 9);
  Tensor e = row.expand({3, 4});
  EXPECT_GEOMETRY(e, ({3, 4}), ({0, 2}), 9);
  EXPECT_EQ(values(e), (std::vector<double>{9, 11, 13, 15, 9, 11, 13, 15, 9, 11, 13, 15}));
}

TEST(ViewExpand, WritesToBaseShow) {
  Tensor x = iota({1, 3});
  Tensor e = x.expand({2, 3});
  x.select(1, 1).fill_(-5.0);
  EXPECT_EQ(values(e), (std::vector<double>{0, -5, 2, 0, -5, 2}));
}

TEST(ViewExpand, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_error(
      [&] {
        x.expand({2, 4});
      },
      {"expand: the expanded size of the tensor (4) must match the existing size (3) at "
       "non-singleton dimension 1. Target sizes: [2, 4]. Tensor sizes: [2, 3]"}));
  EXPECT_TRUE(throws_error([&] { x.expand({3}); }, {"expand", "number of sizes provided (1)",
                                                    "number of dimensions in the tensor (2)"}));
  EXPECT_TRUE(throws_error([&] { x.expand({-1, 2, 3}); }, {"expand", "leading, non-existing"}));
  EXPECT_TRUE(throws_error([&] { iota({1, 3}).expand({-2, 3}); }, {"expand", "-2"}));
}

TEST(ViewExpand, ExpandAsAndBroadcastTo) {
  Tensor e = iota({3, 1}).expand_as(iota({2, 3, 4}));
  EXPECT_GEOMETRY(e, ({2, 3, 4}), ({0, 1, 0}), 0);
  Tensor b = iota({4}).broadcast_to({2, 3, 4});
  EXPECT_GEOMETRY(b, ({2, 3, 4}), ({0, 0, 1}), 0);
  EXPECT_EQ(iota({}).broadcast_to(IntList{}).dim(), 0);
  Tensor base = iota({1, 4});
  EXPECT_TRUE(shares_storage(base.broadcast_to({5, 4}), base));
  EXPECT_TRUE(throws_error([&] { iota({3}).broadcast_to({4}); },
                           {"expanded size of the tensor (4) must match the existing size (3)"}));
  EXPECT_TRUE(throws_error([&] { iota({2, 3}).expand_as(iota({3})); }, {"expand"}));
}

TEST(ViewBroadcastTensors, Shapes) {
  Tensor a = iota({3, 1});
  Tensor b = iota({4});
  std::vector<Tensor> out = broadcast_tensors({a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_GEOMETRY(out[0], ({3, 4}), ({1, 0}), 0);
  EXPECT_GEOMETRY(out[1], ({3, 4}), ({0, 1}), 0);
  EXPECT_TRUE(shares_storage(out[0], a));
  EXPECT_TRUE(shares_storage(out[1], b));
  EXPECT_EQ(values(out[1]), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));

  std::vector<Tensor> three = broadcast_tensors({iota({2, 1, 3}), iota({}), iota({5, 1})});
  ASSERT_EQ(three.size(), 3u);
  EXPECT_GEOMETRY(three[0], ({2, 5, 3}), ({3, 0, 1}), 0);
  EXPECT_GEOMETRY(three[1], ({2, 5, 3}), ({0, 0, 0}), 0);
  EXPECT_GEOMETRY(three[2], ({2, 5, 3}), ({0, 1, 0}), 0);

  std::vector<Tensor> empty = broadcast_tensors({iota({0, 1}), iota({1, 3})});
  EXPECT_GEOMETRY(empty[0], ({0, 3}), ({1, 0}), 0);
  EXPECT_GEOMETRY(empty[1], ({0, 3}), ({0, 1}), 0);

  std::vector<Tensor> one = broadcast_tensors({iota({2})});
  EXPECT_GEOMETRY(one[0], ({2}), ({1}), 0);
  EXPECT_TRUE(throws_error(
      [&] {
        broadcast_tensors({iota({3}), iota({4})});
      },
      {"broadcast_tensors", "(3)", "(4)", "dimension 0"}));
}

}  // namespace
}  // namespace kiln
