// Comparisons, logical and bitwise ops, and shifts.
#include "ops/test_binary_util.h"

#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::bools;
using testing::f32;
using testing::i32;
using testing::i64;
using testing::make;
using testing::ramp;
using testing::reference;
using testing::throws_error;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> as_ints(const Tensor& t) { return t.tolist<int64_t>(); }

TEST(BinaryComparison, ValuesAndDtype) {
  Tensor a = f32({1, 2, 3, kNaN}, {4}), b = f32({2, 2, 2, kNaN}, {4});
  EXPECT_EQ(eq(a, b).dtype(), kBool);
  EXPECT_EQ(as_ints(eq(a, b)), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(as_ints(ne(a, b)), (std::vector<int64_t>{1, 0, 1, 1}));
  EXPECT_EQ(as_ints(lt(a, b)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(as_ints(le(a, b)), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(as_ints(gt(a, b)), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(as_ints(ge(a, b)), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(as_ints(a > 1.5), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(as_ints(Scalar(2) == a), (std::vector<int64_t>{0, 1, 0, 0}));
}

TEST(BinaryComparison, ReferencesWithBroadcastAndLayouts) {
  using Cmp = std::function<Tensor(const Tensor&, const Tensor&)>;
  std::vector<std::pair<Cmp, std::function<double(double, double)>>> ops = {
      {[](auto& x, auto& y) { return eq(x, y); },
       [](double x, double y) { return double(x == y); }},
      {[](auto& x, auto& y) { return ne(x, y); },
       [](double x, double y) { return double(x != y); }},
      {[](auto& x, auto& y) { return lt(x, y); }, [](double x, double y) { return double(x < y); }},
      {[](auto& x, auto& y) { return le(x, y); },
       [](double x, double y) { return double(x <= y); }},
      {[](auto& x, auto& y) { return gt(x, y); }, [](double x, double y) { return double(x > y); }},
      {[](auto& x, auto& y) { return ge(x, y); },
       [](double x, double y) { return double(x >= y); }},
      {[](auto& x, auto& y) { return logical_and(x, y); },
       [](double x, double y) { return double(x != 0 && y != 0); }},
      {[](auto& x, auto& y) { return logical_or(x, y); },
       [](double x, double y) { return double(x != 0 || y != 0); }},
      {[](auto& x, auto& y) { return logical_xor(x, y); },
       [](double x, double y) { return double((x != 0) != (y != 0)); }},
  };
  for (DType d : {kFloat32, kInt32, kInt64, kBool, kFloat16}) {
    Tensor col = ramp({9, 1}, d, -2, 3, 1), row = ramp({7}, d, -2, 3, 2);
    Tensor sq = ramp({7, 9}, d, -2, 3, 3), sq2 = ramp({9, 7}, d, -2, 3, 4);
    Tensor t = testing::transposed(sq);
    for (const auto& [run, ref] : ops) {
      Tensor r = run(col, row);
      EXPECT_EQ(r.dtype(), kBool);
      EXPECT_TRUE(all_close(r, reference(col, row, ref))) << dtype_name(d);
      EXPECT_TRUE(all_close(run(t, sq2), reference(t, sq2, ref))) << dtype_name(d);
      EXPECT_TRUE(
          all_close(run(sq2, scalar_tensor(1, d)), reference(sq2, scalar_tensor(1, d), ref)));
      EXPECT_EQ(run(zeros({0, 3}, d), zeros({3}, d)).sizes(), IntList({0, 3}));
    }
  }
}

TEST(BinaryComparison, ComparesInPromotedDtype) {
  // int32 1 vs float 1.5: compared in float32, not truncated.
  EXPECT_EQ(as_ints(lt(i32({1, 2}, {2}), f32({1.5, 1.5}, {2}))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(as_ints(eq(i32({1, 2}, {2}), Scalar(1.5))), (std::vector<int64_t>{0, 0}));
  // uint8 with -1: the number converts to uint8 (255), as in PyTorch.
  Tensor u = make<int64_t>({1, 255}, {2}, kUInt8);
  EXPECT_EQ(as_ints(lt(u, Scalar(-1))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(as_ints(eq(u, Scalar(-1))), (std::vector<int64_t>{0, 1}));
  // int64 vs 0-dim float64 compares in float64.
  EXPECT_EQ(as_ints(gt(i64({3}, {1}), scalar_tensor(2.5, kFloat64))), (std::vector<int64_t>{1}));
}

TEST(BinaryComparison, InPlaceAndOut) {
  // In place: self keeps its dtype and receives 0/1.
  Tensor a = f32({1, 2, 3}, {3});
  a.lt_(Scalar(2.5));
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_TRUE(all_close(a, f32({1, 1, 0}, {3})));
  Tensor b = i64({0, 5, 0}, {3});
  b.logical_or_(i64({0, 0, 7}, {3}));
  EXPECT_EQ(as_ints(b), (std::vector<int64_t>{0, 1, 1}));
  static const auto& eq_out = ops::OpRegistry::instance().get("eq.out");
  Tensor out = empty({0}, kBool);
  ops::call(eq_out, {f32({1, 2}, {2}), f32({1, 3}, {2}), out});
  EXPECT_EQ(as_ints(out), (std::vector<int64_t>{1, 0}));
}

TEST(BinaryBitwise, Values) {
  Tensor a = i32({12, -1, 5}, {3}), b = i32({10, 7, -8}, {3});
  EXPECT_EQ(as_ints(bitwise_and(a, b)), (std::vector<int64_t>{12 & 10, -1 & 7, 5 & -8}));
  EXPECT_EQ(as_ints(bitwise_or(a, b)), (std::vector<int64_t>{12 | 10, -1 | 7, 5 | -8}));
  EXPECT_EQ(as_ints(bitwise_xor(a, b)), (std::vector<int64_t>{12 ^ 10, -1 ^ 7, 5 ^ -8}));
  EXPECT_EQ(as_ints(a & 6), (std::vector<int64_t>{4, 6, 4}));
  EXPECT_EQ((a ^ b).dtype(), kInt32);
  Tensor t = bools({1, 1, 0, 0}, {4}), f = bools({1, 0, 1, 0}, {4});
  EXPECT_EQ((t & f).dtype(), kBool);
  EXPECT_EQ(as_ints(t & f), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(as_ints(t | f), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(as_ints(t ^ f), (std::vector<int64_t>{0, 1, 1, 0}));
  // Broadcast and promotion: uint8 & int64 tensor -> int64.
  Tensor r = bitwise_and(make<int64_t>({255, 15}, {2, 1}, kUInt8), i64({1, 2, 4}, {3}));
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(as_ints(r), (std::vector<int64_t>{1, 2, 4, 1, 2, 4}));
  // In place.
  Tensor c = i64({6, 3}, {2});
  c.bitwise_or_(Scalar(8));
  EXPECT_EQ(as_ints(c), (std::vector<int64_t>{14, 11}));
}

TEST(BinaryBitwise, Shifts) {
  // PyTorch's results for out-of-range and negative shift amounts (int8):
  // [1, 1, 1, -8] << [-1, 7, 8, 1] = [0, -128, 0, -16];
  // [-8, 8, -8, 100] >> [-1, 9, 7, 2] = [-1, 0, -1, 25]; uint8 200 >> 200 = 0.
  Tensor a = make<int64_t>({1, 1, 1, -8}, {4}, kInt8), s = make<int64_t>({-1, 7, 8, 1}, {4}, kInt8);
  EXPECT_EQ(as_ints(bitwise_left_shift(a, s)), (std::vector<int64_t>{0, -128, 0, -16}));
  Tensor c = make<int64_t>({-8, 8, -8, 100}, {4}, kInt8),
         r = make<int64_t>({-1, 9, 7, 2}, {4}, kInt8);
  EXPECT_EQ(as_ints(bitwise_right_shift(c, r)), (std::vector<int64_t>{-1, 0, -1, 25}));
  Tensor u = make<int64_t>({200}, {1}, kUInt8);
  EXPECT_EQ(as_ints(bitwise_right_shift(u, u)), (std::vector<int64_t>{0}));
  // In-range shifts against <<, >> in int64.
  Tensor x = i64({1, -5, 1000, 3}, {4}), n = i64({0, 2, 10, 62}, {4});
  EXPECT_EQ(as_ints(x << n), (std::vector<int64_t>{1, -20, 1024000, int64_t{3} << 62}));
  EXPECT_EQ(as_ints(x >> i64({0, 1, 3, 1}, {4})), (std::vector<int64_t>{1, -3, 125, 1}));
  EXPECT_EQ(as_ints(i64({-1}, {1}) >> Scalar(100)), (std::vector<int64_t>{-1}));
  EXPECT_EQ(as_ints(i64({5}, {1}) << Scalar(64)), (std::vector<int64_t>{0}));
}

TEST(BinaryBitwise, Errors) {
  // Bitwise ops on floating tensors raise TypeError; shifts also reject bool.
  EXPECT_THROW(bitwise_and(f32({1}, {1}), f32({1}, {1})), TypeError);
  EXPECT_THROW(bitwise_or(i64({1}, {1}), Scalar(1.5)), TypeError);
  EXPECT_THROW(bitwise_xor(f32({1}, {1}), i64({1}, {1})), TypeError);
  EXPECT_THROW(bitwise_left_shift(f32({1}, {1}), i64({1}, {1})), TypeError);
  EXPECT_THROW(bitwise_right_shift(bools({1}, {1}), bools({1}, {1})), TypeError);
  EXPECT_TRUE(
      throws_error([] { bitwise_and(f32({1}, {1}), f32({1}, {1})); }, {"bitwise_and", "float32"}));
  EXPECT_TRUE(throws_error([] { eq(ones({2, 3}), ones({4})); }, {"3", "4", "dimension 1"}));
  Tensor f = f32({1}, {1});
  EXPECT_TRUE(throws_error([&] { f.bitwise_and_(f); }, {"float32"}));
}

}  // namespace
}  // namespace kiln
