// cat, stack, flip, roll, repeat, tile, tril, triu: hand-computed values, layouts, dtypes,
// in-place and out= forms, and every kind of bad input.
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/shape.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

TEST(ShapeCat, ValuesAlongEachDim) {
  Tensor a = iota({2, 2});       // 0 1 / 2 3
  Tensor b = iota({2, 3}) + 10;  // 10 11 12 / 13 14 15
  EXPECT_EQ(values(cat({a, b}, 1)), (V{0, 1, 10, 11, 12, 2, 3, 13, 14, 15}));
  EXPECT_EQ(values(cat({a, a}, -2)), (V{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(cat({a, a}, 0).sizes(), IntList({4, 2}));
  // A transposed input and a strided one.
  Tensor t = iota({3, 2}).t();  // [2, 3]: 0 2 4 / 1 3 5
  EXPECT_EQ(values(cat({t, b}, 0)), (V{0, 2, 4, 1, 3, 5, 10, 11, 12, 13, 14, 15}));
  Tensor every_other = iota({6}).slice(0, 0, 6, 2);
  EXPECT_EQ(values(cat({every_other, every_other})), (V{0, 2, 4, 0, 2, 4}));
  // A single input is a copy.
  Tensor one = cat({a});
  EXPECT_FALSE(testing::shares_storage(one, a));
  EXPECT_EQ(values(one), values(a));
}

TEST(ShapeCat, TypePromotion) {
  Tensor i = tensor({1, 2});
  Tensor f = tensor({0.5f});
  Tensor r = cat({i, f});
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), (V{1, 2, 0.5}));
  EXPECT_EQ(cat({tensor({true}), tensor({3})}).dtype(), kInt64);
  EXPECT_EQ(cat({i.to(kInt32), f.to(kFloat64)}).dtype(), kFloat64);
  EXPECT_EQ(cat({f, f.to(kFloat16)}).dtype(), kFloat32);
  Tensor bools = cat({tensor({true, false}), tensor({true})});
  EXPECT_EQ(bools.dtype(), kBool);
  EXPECT_EQ(values(bools), (V{1, 0, 1}));
}

TEST(ShapeCat, LegacyEmptyAndEmpty) {
  // 1-D empty tensors are skipped whatever the rank of the others (but count in promotion).
  Tensor a = iota({2, 2}, kFloat32);
  Tensor r = cat({empty({0}, kFloat64), a, empty({0})}, 1);
  EXPECT_EQ(r.sizes(), IntList({2, 2}));
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_EQ(values(r), (V{0, 1, 2, 3}));
  EXPECT_EQ(cat({empty({0}), empty({0})}).sizes(), IntList({0}));
  // Empty along the cat dim takes part normally.
  Tensor e = cat({empty({0, 2}), a}, 0);
  EXPECT_EQ(values(e), (V{0, 1, 2, 3}));
  EXPECT_EQ(cat({empty({2, 0}), empty({2, 0})}, 1).sizes(), IntList({2, 0}));
}

TEST(ShapeCat, OutVariant) {
  static const auto& cat_out = ops::OpRegistry::instance().get("cat.out");
  Tensor out = empty({0}, kFloat64);
  ops::call(cat_out, {std::vector<Tensor>{tensor({1, 2}), tensor({3})}, 0, out});
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_EQ(values(out), (V{1, 2, 3}));
  // Into a non-contiguous out.
  Tensor big = zeros({2, 4});
  Tensor col = big.slice(1, 0, 4, 2);  // [2, 2]
  ops::call(cat_out, {std::vector<Tensor>{tensor({{1.0f, 2.0f}}), tensor({{3.0f, 4.0f}})}, 0, col});
  EXPECT_EQ(values(big), (V{1, 0, 2, 0, 3, 0, 4, 0}));
  // A float result can't go into an int out.
  Tensor iout = empty({2}, kInt64);
  EXPECT_THROW(ops::call(cat_out, {std::vector<Tensor>{tensor({1.5f}), tensor({1})}, 0, iout}),
               TypeError);
}

TEST(ShapeCat, Errors) {
  EXPECT_TRUE(throws_error([] { cat({}); }, {"non-empty list"}));
  EXPECT_TRUE(throws_error(
      [] {
        cat({ones({2}), scalar_tensor(1.0)});
      },
      {"zero-dimensional", "position 1"}));
  EXPECT_TRUE(throws_error(
      [] {
        cat({ones({2, 3}), ones({2, 3}), ones({3})});
      },
      {"same number of dimensions", "got 2 and 1", "tensor number 2"}));
  EXPECT_TRUE(throws_error(
      [] {
        cat({ones({2, 3}), ones({2, 4})}, 0);
      },
      {"dimension 0", "Expected size 3 but got size 4", "tensor number 1"}));
  EXPECT_THROW(cat({ones({2, 3}), ones({2, 3})}, 2), IndexError);
}

TEST(ShapeStack, Values) {
  Tensor a = tensor({1, 2, 3});
  Tensor b = tensor({4, 5, 6});
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.sizes(), IntList({2, 3}));
  EXPECT_EQ(values(s0), (V{1, 2, 3, 4, 5, 6}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.sizes(), IntList({3, 2}));
  EXPECT_EQ(values(s1), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(stack({a, b}, -1)), values(s1));
  Tensor z = stack({scalar_tensor(1.5), scalar_tensor(2.5)});
  EXPECT_EQ(z.sizes(), IntList({2}));
  EXPECT_EQ(stack({a, b.to(kFloat64)}).dtype(), kFloat64);
  Tensor t = iota({3, 2}).t();
  EXPECT_EQ(values(stack({t, t}, 2)), (V{0, 0, 2, 2, 4, 4, 1, 1, 3, 3, 5, 5}));
  EXPECT_TRUE(throws_error(
      [&] {
        stack({a, tensor({1, 2})});
      },
      {"equal size", "[3]", "[2]", "entry 1"}));
  EXPECT_TRUE(throws_error([] { stack({}); }, {"non-empty"}));
  EXPECT_THROW(stack({a, b}, 3), IndexError);
}

TEST(ShapeFlip, Values) {
  Tensor x = iota({2, 3});  // 0 1 2 / 3 4 5
  EXPECT_EQ(values(flip(x, {0})), (V{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(values(flip(x, {1})), (V{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values(flip(x, {0, -1})), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values(flip(x, {})), values(x));
  EXPECT_EQ(values(flip(x.t(), {0})), (V{2, 5, 1, 4, 0, 3}));
  EXPECT_EQ(flip(scalar_tensor(3.0), {}).item<double>(), 3.0);
  EXPECT_EQ(flip(empty({0, 2}), {0}).sizes(), IntList({0, 2}));
  Tensor b = flip(tensor({true, false, false}), {0});
  EXPECT_EQ(values(b), (V{0, 0, 1}));
  EXPECT_EQ(flip(x.to(kFloat16), {1}).dtype(), kFloat16);
  EXPECT_EQ(values(flip(x.to(kBFloat16), {1})), (V{2, 1, 0, 5, 4, 3}));
  EXPECT_TRUE(throws_error([&] { flip(x, {0, -2}); }, {"duplicates"}));
  EXPECT_THROW(flip(x, {2}), IndexError);
}

TEST(ShapeFlip, LargeInputsSplitAcrossThreads) {
  // Big enough for several parallel chunks; every element checked against index arithmetic.
  const int64_t rows = 300, cols = 401;
  Tensor x = iota({rows, cols}, kFloat32);
  std::vector<double> got = values(flip(x.t(), {1}));  // [cols, rows], reversed rows of x.t()
  bool ok = true;
  for (int64_t i = 0; i < cols && ok; ++i)
    for (int64_t j = 0; j < rows && ok; ++j)
      ok = got[static_cast<size_t>(i * rows + j)] == static_cast<double>((rows - 1 - j) * cols + i);
  EXPECT_TRUE(ok);
  std::vector<double> rep = values(repeat(x, {2, 1}));
  EXPECT_EQ(rep[static_cast<size_t>(rows * cols + 5)], 5.0);
  EXPECT_EQ(rep.back(), static_cast<double>(rows * cols - 1));
}

TEST(ShapeRoll, Values) {
  Tensor x = iota({2, 3});  // 0 1 2 / 3 4 5
  EXPECT_EQ(values(roll(x, {1}, {1})), (V{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(values(roll(x, {-1}, {1})), (V{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(values(roll(x, {4}, {1})), (V{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(values(roll(x, {1, 1}, {0, 1})), (V{5, 3, 4, 2, 0, 1}));
  // No dims: roll the flattened tensor.
  EXPECT_EQ(values(roll(x, {2})), (V{4, 5, 0, 1, 2, 3}));
  EXPECT_EQ(values(roll(x.t(), {1})), (V{5, 0, 3, 1, 4, 2}));
  // The same dim twice adds the shifts.
  EXPECT_EQ(values(roll(x, {1, 1}, {1, 1})), (V{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(roll(empty({0, 3}), {1}, {0}).sizes(), IntList({0, 3}));
  EXPECT_EQ(roll(scalar_tensor(int64_t{4}), {3}).item<int64_t>(), 4);
  EXPECT_TRUE(throws_error([&] { roll(x, {1, 2}, {0}); }, {"shifts and dimensions must align"}));
  EXPECT_TRUE(throws_error([&] { roll(x, {1, 2}); }, {"must align"}));
  EXPECT_THROW(roll(x, {1}, {5}), IndexError);
}

TEST(ShapeRepeat, RepeatAndTile) {
  Tensor x = tensor({1, 2});
  EXPECT_EQ(values(repeat(x, {3})), (V{1, 2, 1, 2, 1, 2}));
  Tensor r = repeat(x, {2, 2});
  EXPECT_EQ(r.sizes(), IntList({2, 4}));
  EXPECT_EQ(values(r), (V{1, 2, 1, 2, 1, 2, 1, 2}));
  Tensor m = iota({2, 2});  // 0 1 / 2 3
  EXPECT_EQ(values(repeat(m, {2, 1})), (V{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(values(repeat(m.t(), {1, 2})), (V{0, 2, 0, 2, 1, 3, 1, 3}));
  EXPECT_EQ(repeat(m, {0, 2}).sizes(), IntList({0, 4}));
  EXPECT_EQ(values(repeat(scalar_tensor(7.0), {2})), (V{7, 7}));
  EXPECT_EQ(repeat(scalar_tensor(7.0), {}).dim(), 0);
  EXPECT_TRUE(throws_error([&] { repeat(m, {2}); }, {"can not be smaller"}));
  EXPECT_TRUE(throws_error([&] { repeat(m, {-1, 2}); }, {"negative dimension"}));
  // tile pads missing leading dims with 1.
  EXPECT_EQ(values(tile(m, {2})), (V{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(tile(m, {2, 1, 1}).sizes(), IntList({2, 2, 2}));
  EXPECT_EQ(values(tile(x, {2})), (V{1, 2, 1, 2}));
  static const auto& repeat_out = ops::OpRegistry::instance().get("repeat.out");
  Tensor out = empty({0}, kFloat32);
  ops::call(repeat_out, {x, std::vector<int64_t>{2}, out});
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), (V{1, 2, 1, 2}));
}

TEST(ShapeTriangle, TrilTriu) {
  Tensor x = iota({3, 4}) + 1;  // 1..12
  EXPECT_EQ(values(tril(x)), (V{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(values(triu(x)), (V{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(values(tril(x, 1)), (V{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}));
  EXPECT_EQ(values(tril(x, -1)), (V{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(values(triu(x, 2)), (V{0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0}));
  EXPECT_EQ(values(triu(x, -5)), values(x));
  EXPECT_EQ(values(tril(x, -5)), V(12, 0.0));
  // Transposed input, batched input, integer and bool dtypes.
  EXPECT_EQ(values(tril(x.t())), (V{1, 0, 0, 2, 6, 0, 3, 7, 11, 4, 8, 12}));
  Tensor batch = stack({x, x * 2});
  EXPECT_EQ(values(triu(batch, 1)), (V{0, 2, 3, 4, 0, 0, 7,  8,  0, 0, 0, 12,  //
                                       0, 4, 6, 8, 0, 0, 14, 16, 0, 0, 0, 24}));
  EXPECT_EQ(tril(x.to(kInt32)).dtype(), kInt32);
  EXPECT_EQ(values(triu(ones({2, 2}, kBool))), (V{1, 1, 0, 1}));
  EXPECT_EQ(tril(empty({0, 3})).sizes(), IntList({0, 3}));
  EXPECT_TRUE(throws_error([] { tril(ones({3})); }, {"tril", "at least 2 dimensions"}));
  EXPECT_TRUE(throws_error([] { triu(scalar_tensor(1.0)); }, {"triu", "at least 2 dimensions"}));
}

TEST(ShapeTriangle, InPlaceAndOut) {
  Tensor x = iota({3, 3}) + 1;
  Tensor& same = tril_(x);
  EXPECT_TRUE(same.is_same(x));
  EXPECT_EQ(values(x), (V{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  // In place on a transposed view writes through to the base.
  Tensor base = iota({3, 3}) + 1;
  Tensor view = base.t();
  triu_(view, 1);
  EXPECT_EQ(values(base), (V{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  static const auto& tril_out = ops::OpRegistry::instance().get("tril.out");
  Tensor out = empty({0}, kFloat32);
  ops::call(tril_out, {iota({2, 2}, kInt64), 0, out});
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), (V{0, 0, 2, 3}));
}

TEST(ShapeOut, FlipRollOut) {
  auto& reg = ops::OpRegistry::instance();
  Tensor x = iota({2, 3}, kFloat32);
  Tensor base = zeros({3, 2}, kFloat64);
  Tensor out_t = base.t();  // [2, 3], non-contiguous, wider dtype
  ops::call(reg.get("flip.out"), {x, std::vector<int64_t>{1}, out_t});
  EXPECT_EQ(values(out_t), (V{2, 1, 0, 5, 4, 3}));
  Tensor r_out = empty({0}, kFloat32);
  ops::call(reg.get("roll.out"), {x, std::vector<int64_t>{-1}, std::vector<int64_t>{}, r_out});
  EXPECT_EQ(values(r_out), (V{1, 2, 3, 4, 5, 0}));
  Tensor triu_out = empty({0}, kFloat32);
  ops::call(reg.get("triu.out"), {x, 1, triu_out});
  EXPECT_EQ(values(triu_out), (V{0, 1, 2, 0, 0, 5}));
}

TEST(ShapeMeta, ShapesWithoutData) {
  auto meta = [](IntList sizes, DType d = kFloat32) {
    return empty(sizes, TensorOptions().dtype(d).device(Device::meta()));
  };
  Tensor c = cat({meta({2, 3}), meta({4, 3}, kFloat64)});
  EXPECT_TRUE(c.is_meta());
  EXPECT_EQ(c.sizes(), IntList({6, 3}));
  EXPECT_EQ(c.dtype(), kFloat64);
  EXPECT_EQ(stack({meta({2}), meta({2})}, 1).sizes(), IntList({2, 2}));
  EXPECT_EQ(repeat(meta({2, 3}), {2, 1, 2}).sizes(), IntList({2, 2, 6}));
  EXPECT_EQ(flip(meta({2, 3}), {0}).sizes(), IntList({2, 3}));
  EXPECT_EQ(roll(meta({2, 3}), {1}, {0}).sizes(), IntList({2, 3}));
  EXPECT_EQ(tril(meta({2, 3})).sizes(), IntList({2, 3}));
}

}  // namespace
}  // namespace kiln
