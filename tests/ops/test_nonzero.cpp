// nonzero, argwhere and masked_select: data-dependent output sizes. Hand-computed values,
// layouts, broadcasting, 0-dim and empty inputs, dtypes, the meta device (which must refuse) and
// bad masks.
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/random.h>

namespace kiln {
namespace {

using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

Tensor on_meta(IntList sizes, DType dtype) {
  return empty(sizes, TensorOptions(dtype).device(Device::meta()));
}

TEST(Nonzero, Values) {
  Tensor x = tensor({{0.0f, 1.5f, 0.0f}, {-2.0f, 0.0f, 3.0f}});
  Tensor r = nonzero(x);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.sizes(), IntList({3, 2}));
  EXPECT_EQ(values(r), (V{0, 1, 1, 0, 1, 2}));
  // Non-contiguous: coordinates of the view, in the view's row-major order.
  EXPECT_EQ(values(x.t().nonzero()), (V{0, 1, 1, 0, 2, 1}));
  EXPECT_EQ(values(nonzero(tensor({true, false, true}))), (V{0, 2}));
  EXPECT_EQ(values(nonzero(from_vector<int64_t>({0, 7, -1, 0}))), (V{1, 2}));
  // NaN is nonzero; -0.0 is zero.
  EXPECT_EQ(values(nonzero(tensor({NAN, -0.0}))), (V{0}));
  EXPECT_EQ(values(nonzero(iota({4}, kFloat16))), (V{1, 2, 3}));
  // 0-dim: [1, 0] or [0, 0]; empty: [0, ndim].
  EXPECT_EQ(nonzero(scalar_tensor(2.0)).sizes(), IntList({1, 0}));
  EXPECT_EQ(nonzero(scalar_tensor(0.0)).sizes(), IntList({0, 0}));
  EXPECT_EQ(nonzero(empty({0, 3})).sizes(), IntList({0, 2}));
  EXPECT_EQ(values(argwhere(x)), values(r));
}

TEST(Nonzero, RandomAgainstLoop) {
  Tensor x = randint(0, 3, {5, 6, 7}, kInt32);
  const std::vector<double> xv = values(x);
  V expected;
  for (int64_t a = 0; a < 5; ++a)
    for (int64_t b = 0; b < 6; ++b)
      for (int64_t c = 0; c < 7; ++c)
        if (xv[static_cast<size_t>(a * 42 + b * 7 + c)] != 0) {
          expected.insert(expected.end(), {double(a), double(b), double(c)});
        }
  EXPECT_EQ(values(nonzero(x)), expected);
}

TEST(Nonzero, MetaRefuses) {
  EXPECT_TRUE(throws_error([] { nonzero(on_meta({3}, kFloat32)); }, {"nonzero", "data-dependent"}));
  EXPECT_TRUE(throws_error([] { argwhere(on_meta({3}, kFloat32)); }, {"data-dependent"}));
  EXPECT_TRUE(throws_error([] { masked_select(on_meta({3}, kFloat32), on_meta({3}, kBool)); },
                           {"masked_select", "data-dependent"}));
}

TEST(MaskedSelect, Values) {
  Tensor x = iota({2, 3}, kFloat32);
  Tensor m = tensor({{true, false, true}, {false, false, true}});
  Tensor r = masked_select(x, m);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), (V{0, 2, 5}));
  // Mask broadcast over rows; self broadcast over the mask; both.
  EXPECT_EQ(values(x.masked_select(tensor({false, true, true}))), (V{1, 2, 4, 5}));
  EXPECT_EQ(values(masked_select(tensor({1.0, 2.0}).view({2, 1}),
                                 tensor({{true, false, true}, {true, true, false}}))),
            (V{1, 1, 2, 2}));
  // Non-contiguous self and mask.
  EXPECT_EQ(values(masked_select(x.t(), m.t())), (V{0, 2, 5}));
  EXPECT_EQ(values(masked_select(iota({3}, kInt64), tensor({true, false, true}))), (V{0, 2}));
  EXPECT_EQ(values(masked_select(tensor({true, false}), tensor({true, true}))), (V{1, 0}));
  // 0-dim and empty.
  EXPECT_EQ(masked_select(scalar_tensor(4.0), scalar_tensor(true)).sizes(), IntList({1}));
  EXPECT_EQ(masked_select(scalar_tensor(4.0), scalar_tensor(false)).sizes(), IntList({0}));
  EXPECT_EQ(masked_select(empty({0, 3}), tensor({true, true, true})).sizes(), IntList({0}));
}

TEST(MaskedSelect, Errors) {
  Tensor x = iota({3});
  EXPECT_THROW(masked_select(x, from_vector<int64_t>({1, 0, 1})), TypeError);
  EXPECT_THROW(masked_select(x, tensor({true, false})), Error);
}

}  // namespace
}  // namespace kiln
