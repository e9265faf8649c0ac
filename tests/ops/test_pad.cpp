// constant_pad_nd, reflection/replication pads, _pad_circular and the pad composite: hand-computed
// values (PyTorch's documented results), a loop reference for larger shapes, layouts, dtypes,
// out= forms and every kind of bad input.
#include "test_view_util.h"

#include <kiln/ops/resample.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

TEST(PadConstant, HandComputed) {
  Tensor x = iota({2, 3});  // 0 1 2 / 3 4 5
  EXPECT_EQ(values(constant_pad_nd(x, {1, 2})), (V{0, 0, 1, 2, 0, 0, 0, 3, 4, 5, 0, 0}));
  Tensor both = constant_pad_nd(x, {0, 1, 1, 0}, 9);
  EXPECT_EQ(both.sizes(), IntList({3, 4}));
  EXPECT_EQ(values(both), (V{9, 9, 9, 9, 0, 1, 2, 9, 3, 4, 5, 9}));
  // Negative pads crop: drop column 0 and row 1, add two columns on the right.
  Tensor crop = constant_pad_nd(x, {-1, 2, 0, -1}, -1);
  EXPECT_EQ(crop.sizes(), IntList({1, 4}));
  EXPECT_EQ(values(crop), (V{1, 2, -1, -1}));
  // Cropped away entirely, then padded: only the value remains.
  EXPECT_EQ(values(constant_pad_nd(x, {-3, 1}, 4)), (V{4, 4}));
  // An empty pad list copies.
  Tensor same = constant_pad_nd(x, {});
  EXPECT_EQ(values(same), values(x));
  EXPECT_FALSE(testing::shares_storage(same, x));
}

TEST(PadConstant, DtypesLayoutsAndEdges) {
  // The value is cast to the tensor's dtype (2.5 -> 2 for int64), as PyTorch does.
  Tensor i = tensor({{1, 2}, {3, 4}});
  Tensor pi = constant_pad_nd(i, {1, 0}, 2.5);
  EXPECT_EQ(pi.dtype(), kInt64);
  EXPECT_EQ(values(pi), (V{2, 1, 2, 2, 3, 4}));
  Tensor b = constant_pad_nd(tensor({true, false}), {1, 1}, true);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values(b), (V{1, 1, 0, 1}));
  Tensor h = constant_pad_nd(tensor({1.5f}).to(kFloat16), {1, 0}, 0.25);
  EXPECT_EQ(values(h), (V{0.25, 1.5}));
  // Transposed input: values follow the logical layout.
  Tensor t = iota({3, 2}).t();  // 0 2 4 / 1 3 5
  EXPECT_EQ(values(constant_pad_nd(t, {1, 0})), (V{0, 0, 2, 4, 0, 1, 3, 5}));
  // 0-dim and empty inputs.
  EXPECT_EQ(constant_pad_nd(scalar_tensor(3.0), {}).dim(), 0);
  Tensor e = constant_pad_nd(empty({0, 2}), {1, 1, 1, 0}, 7);
  EXPECT_EQ(e.sizes(), IntList({1, 4}));
  EXPECT_EQ(values(e), (V{7, 7, 7, 7}));
}

TEST(PadConstant, OutVariantAndErrors) {
  const auto& out_op = ops::OpRegistry::instance().get("constant_pad_nd.out");
  Tensor out = empty({0}, kFloat64);
  ops::call(out_op, {iota({2}), std::vector<int64_t>{1, 1}, 5, out});
  EXPECT_EQ(values(out), (V{5, 0, 1, 5}));
  EXPECT_TRUE(throws_error(
      [] {
        constant_pad_nd(iota({2, 3}), {1, 1, 1});
      },
      {"constant_pad_nd", "even", "3"}));
  EXPECT_TRUE(throws_error(
      [] {
        constant_pad_nd(iota({3}), {1, 1, 1, 1});
      },
      {"constant_pad_nd", "Pad length is 4", "1 dimensions"}));
  EXPECT_TRUE(throws_error(
      [] {
        constant_pad_nd(iota({3}), {-4, 0});
      },
      {"constant_pad_nd", "negative output size", "dimension 0"}));
}

// A loop reference: the source index along one dim of size n padded by lo on the left.
int64_t ref_index(const std::string& mode, int64_t j, int64_t n, int64_t lo) {
  int64_t i = j - lo;
  if (mode == "reflect") {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  } else if (mode == "replicate") {
    i = std::max<int64_t>(0, std::min(i, n - 1));
  } else {
    i = ((i % n) + n) % n;
  }
  return i;
}

// pad of an (N, C, H, W) tensor of iota values over the last two dims.
std::vector<double> ref_pad2d(const std::string& mode, IntList sizes, IntList pad) {
  const int64_t nc = sizes[0] * sizes[1], h = sizes[2], w = sizes[3];
  const int64_t oh = h + pad[2] + pad[3], ow = w + pad[0] + pad[1];
  std::vector<double> out;
  for (int64_t p = 0; p < nc; ++p) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        const int64_t sy = ref_index(mode, y, h, pad[2]), sx = ref_index(mode, x, w, pad[0]);
        out.push_back(static_cast<double>(p * h * w + sy * w + sx));
      }
    }
  }
  return out;
}

TEST(PadModes, HandComputed1d) {
  Tensor x = iota({1, 1, 4});  // 0 1 2 3
  EXPECT_EQ(values(reflection_pad1d(x, {2, 3})), (V{2, 1, 0, 1, 2, 3, 2, 1, 0}));
  EXPECT_EQ(values(replication_pad1d(x, {2, 3})), (V{0, 0, 0, 1, 2, 3, 3, 3, 3}));
  EXPECT_EQ(values(pad_circular(x, {2, 3})), (V{2, 3, 0, 1, 2, 3, 0, 1, 2}));
  // Negative pads crop (reflect / replicate index the full input; circular wraps in what stays).
  EXPECT_EQ(values(reflection_pad1d(x, {-1, 2})), (V{1, 2, 3, 2, 1}));
  EXPECT_EQ(values(replication_pad1d(x, {-1, 1})), (V{1, 2, 3, 3}));
  EXPECT_EQ(values(pad_circular(iota({1, 2, 3}), {-1, 2})), (V{1, 2, 1, 2, 4, 5, 4, 5}));
  // Unbatched (C, W) input.
  EXPECT_EQ(values(reflection_pad1d(iota({2, 3}), {1, 1})), (V{1, 0, 1, 2, 1, 4, 3, 4, 5, 4}));
}

TEST(PadModes, TwoAndThreeDimsAgainstLoopReference) {
  for (const std::string mode : {"reflect", "replicate", "circular"}) {
    const std::vector<int64_t> pad{2, 1, 1, 3};
    Tensor x = iota({2, 3, 4, 5});
    EXPECT_EQ(values(kiln::pad(x, pad, mode)), ref_pad2d(mode, x.sizes(), pad)) << mode;
  }
  EXPECT_EQ(values(reflection_pad2d(iota({1, 1, 4, 5}), {1, 1, 2, 2})),
            ref_pad2d("reflect", {1, 1, 4, 5}, {1, 1, 2, 2}));
  // 3-D: pads of the last dim only equal a 1-D pad.
  Tensor x = iota({1, 2, 2, 3});
  Tensor r3 = replication_pad3d(x, {1, 1, 0, 0, 0, 0});
  EXPECT_EQ(values(r3), values(replication_pad1d(x.reshape({4, 3}), {1, 1})));
  Tensor f3 = reflection_pad3d(iota({1, 3, 3, 3}), {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(f3.sizes(), IntList({1, 5, 5, 5}));
  // Corner (0,0,0) reflects to input (1,1,1) = 9 + 3 + 1.
  EXPECT_EQ(values(f3)[0], 13.0);
}

TEST(PadModes, LayoutsDtypesEmptyAndOut) {
  // Non-contiguous input: the same values as its contiguous copy.
  Tensor base = iota({2, 3, 10});
  Tensor strided = base.slice(2, 0, 10, 2);
  EXPECT_EQ(values(reflection_pad1d(strided, {2, 1})),
            values(reflection_pad1d(strided.contiguous(), {2, 1})));
  Tensor t = iota({1, 5, 4}).transpose(1, 2);
  EXPECT_EQ(values(replication_pad2d(t, {1, 1, 1, 1})),
            values(replication_pad2d(t.contiguous(), {1, 1, 1, 1})));
  // Integer and 16-bit dtypes copy exactly.
  Tensor i = reflection_pad1d(iota({1, 4}, kInt32), {1, 1});
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_EQ(values(i), (V{1, 0, 1, 2, 3, 2}));
  EXPECT_EQ(values(replication_pad1d(iota({1, 3}, kBFloat16), {1, 0})), (V{0, 0, 1, 2}));
  // An empty batch is allowed.
  EXPECT_EQ(reflection_pad2d(empty({0, 2, 3, 3}), {1, 1, 1, 1}).sizes(), IntList({0, 2, 5, 5}));
  // out= with a transposed out tensor of the right shape.
  const auto& out_op = ops::OpRegistry::instance().get("reflection_pad1d.out");
  Tensor out = empty({5, 2}, kFloat64).t();
  ops::call(out_op, {iota({2, 3}), std::vector<int64_t>{1, 1}, out});
  EXPECT_EQ(values(out), (V{1, 0, 1, 2, 1, 4, 3, 4, 5, 4}));
}

TEST(PadModes, Errors) {
  EXPECT_TRUE(throws_error(
      [] {
        reflection_pad1d(iota({1, 2, 3}), {3, 0});
      },
      {"reflection_pad1d", "less than", "(3, 0)", "dimension 2", "[1, 2, 3]"}));
  EXPECT_TRUE(throws_error(
      [] {
        reflection_pad1d(iota({2, 0}), {1, 1});
      },
      {"reflection_pad1d", "2D or 3D", "[2, 0]"}));
  EXPECT_TRUE(throws_error(
      [] {
        replication_pad2d(iota({3}), {1, 1, 1, 1});
      },
      {"replication_pad2d", "3D or 4D", "[3]"}));
  EXPECT_TRUE(throws_error(
      [] {
        reflection_pad1d(iota({1, 3}), {1, 1, 1});
      },
      {"reflection_pad1d", "expected to be 2", "3"}));
  EXPECT_TRUE(throws_error(
      [] {
        pad_circular(iota({2, 3}), {4, 1});
      },
      {"_pad_circular", "wrapping around more than once"}));
  EXPECT_TRUE(throws_error(
      [] {
        replication_pad1d(iota({1, 3}), {-2, -1});
      },
      {"replication_pad1d", "at least 1"}));
}

TEST(PadComposite, PicksAsFunctionalPad) {
  Tensor x = iota({1, 2, 3});
  EXPECT_EQ(values(kiln::pad(x, {1, 1})), (V{0, 0, 1, 2, 0, 0, 3, 4, 5, 0}));
  EXPECT_EQ(values(kiln::pad(x, {1, 0}, "constant", 2.0)), (V{2, 0, 1, 2, 2, 3, 4, 5}));
  EXPECT_EQ(values(kiln::pad(x, {1, 1}, "reflect")), (V{1, 0, 1, 2, 1, 4, 3, 4, 5, 4}));
  EXPECT_EQ(values(kiln::pad(x, {1, 1}, "replicate", 0.0)), (V{0, 0, 1, 2, 2, 3, 3, 4, 5, 5}));
  EXPECT_EQ(values(kiln::pad(x, {1, 1}, "circular")), (V{2, 0, 1, 2, 0, 5, 3, 4, 5, 3}));
  // Two pairs on a 3-D input pad (H, W) of an unbatched (C, H, W) image.
  EXPECT_EQ(values(kiln::pad(x, {0, 0, 1, 0}, "reflect")), (V{3, 4, 5, 0, 1, 2, 3, 4, 5}));
  // Constant mode pads any number of dims, including 1-D inputs.
  EXPECT_EQ(values(kiln::pad(iota({2}), {1, 0})), (V{0, 0, 1}));
}

TEST(PadComposite, Errors) {
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({1, 2, 3}), {4, 0}, "reflect");
      },
      {"less than the corresponding input dimension"}));
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({3}), {1, 1}, "reflect");
      },
      {"padding size 2 is not supported for 1D input"}));
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({2, 3}), {1, 1, 1, 1}, "replicate");
      },
      {"padding size 4 is not supported for 2D input"}));
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({2, 3}), {1, 1}, "reflect", 1.0);
      },
      {"reflect", "doesn't take in value"}));
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({2, 3}), {1, 1}, "mirror");
      },
      {"unrecognised padding mode 'mirror'"}));
  EXPECT_TRUE(throws_error([] { kiln::pad(iota({2, 3}), {1}); }, {"divisible by 2"}));
  EXPECT_TRUE(throws_error(
      [] {
        kiln::pad(iota({2}), {1, 1, 1, 1});
      },
      {"padding length 4", "input of dimension 1"}));
}

}  // namespace
}  // namespace kiln
