#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

namespace kiln {
namespace {

TensorImpl make_impl(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  return TensorImpl(make_storage(0, Device::meta()), kFloat32, to_sym(sizes), to_sym(strides));
}

TEST(TensorImpl, ContiguityFollowsPyTorchRules) {
  EXPECT_TRUE(make_impl({2, 3}, {3, 1}).is_contiguous());
  EXPECT_FALSE(make_impl({2, 3}, {1, 2}).is_contiguous());
  EXPECT_TRUE(make_impl({2, 1, 3}, {3, 99, 1}).is_contiguous());  // size-1 dims: any stride
  EXPECT_TRUE(make_impl({0, 3}, {7, 5}).is_contiguous());         // empty is contiguous
  EXPECT_TRUE(make_impl({}, {}).is_contiguous());
  EXPECT_FALSE(make_impl({2, 3}, {6, 2}).is_contiguous());  // gaps
}

TEST(TensorImpl, NonOverlappingAndDense) {
  EXPECT_TRUE(make_impl({2, 3}, {1, 2}).is_non_overlapping_and_dense());  // transposed
  EXPECT_TRUE(make_impl({2, 3, 4}, {1, 8, 2}).is_non_overlapping_and_dense());
  EXPECT_FALSE(make_impl({2, 3}, {0, 1}).is_non_overlapping_and_dense());  // expanded
  EXPECT_FALSE(make_impl({2, 3}, {6, 2}).is_non_overlapping_and_dense());
}

TEST(TensorImpl, NumelAndContiguousStrides) {
  EXPECT_EQ(make_impl({2, 3, 4}, {12, 4, 1}).numel(), 24);
  EXPECT_EQ(make_impl({}, {}).numel(), 1);
  EXPECT_EQ(contiguous_strides(IntList({2, 3, 4})), DimVector({12, 4, 1}));
  EXPECT_EQ(contiguous_strides(IntList({2, 0, 4})), DimVector({4, 4, 1}));
}

TEST(Tensor, MetadataAccessors) {
  Tensor t = empty({2, 3, 4}, kFloat64);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.itemsize(), 8u);
  EXPECT_EQ(t.nbytes(), 192u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_cpu());
  EXPECT_TRUE(testing::throws_error([&] { (void)t.size(3); }, {"Tensor.size", "[-3, 2]", "3"}));
  EXPECT_THROW((void)t.data_ptr<float>(), TypeError);
  Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_TRUE(testing::throws_error([&] { (void)undefined.dim(); }, {"undefined tensor"}));
}

TEST(Tensor, ItemAndFill) {
  Tensor t = full({1}, 2.5, kFloat64);
  EXPECT_EQ(t.item<double>(), 2.5);
  Tensor i = full({}, 7, kInt32);
  EXPECT_EQ(i.item<int64_t>(), 7);
  EXPECT_TRUE(testing::throws_error([&] { (void)full({2}, 1.0).item(); }, {"item", "2 elements"}));
  Tensor z = full({3}, 4.0);
  z.zero_();
  EXPECT_EQ(z.tolist<float>(), std::vector<float>({0, 0, 0}));
}

TEST(Tensor, RequiresGradOnlyForFloatingTensors) {
  Tensor f = full({2}, 1.0);
  f.requires_grad_();
  EXPECT_TRUE(f.requires_grad());
  Tensor i = full({2}, 1, kInt64);
  EXPECT_TRUE(testing::throws_error([&] { i.requires_grad_(); }, {"requires_grad_", "int64"}));
}

TEST(Tensor, CopyConvertsAndBroadcasts) {
  Tensor dst = empty({2, 3}, kInt32);
  Tensor src = from_vector<double>({1.7, -2.2, 3.9}, {3});
  dst.copy_(src);
  EXPECT_EQ(dst.tolist<int32_t>(), std::vector<int32_t>({1, -2, 3, 1, -2, 3}));  // truncation
  Tensor bad = empty({4});
  EXPECT_TRUE(testing::throws_error([&] { dst.copy_(bad); }, {"copy_", "4", "3"}));
  uint32_t v = dst._version();
  dst.copy_(src);
  EXPECT_GT(dst._version(), v);
}

TEST(Tensor, ToDtypeConvertsValues) {
  Tensor a = from_vector<float>({1.5f, -0.5f, 2.0f}, {3});
  EXPECT_TRUE(a.to(kFloat32).is_same(a));  // no copy when nothing changes
  Tensor h = a.to(kFloat16);
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(h.tolist<float>(), std::vector<float>({1.5f, -0.5f, 2.0f}));
  Tensor b = a.to(kBool);
  EXPECT_EQ(b.tolist<bool>(), std::vector<bool>({true, true, true}));
  Tensor c = a.to(kFloat32, /*copy=*/true);
  EXPECT_FALSE(c.is_same(a));
  EXPECT_NE(c.data_ptr(), a.data_ptr());
}

}  // namespace
}  // namespace kiln
