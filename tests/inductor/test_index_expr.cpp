// Index expressions simplify as they are built, so that folded views read like hand-written
// indexing; unravel and strided offsets are the view-folding arithmetic.
#include "inductor/index_expr.h"

#include <gtest/gtest.h>

namespace kiln::inductor {
namespace {

const std::vector<std::string> kNames = {"i0", "i1", "i2"};

TEST(IndexExpr, ConstantsFoldAndIdentitiesVanish) {
  EXPECT_EQ(to_cpp(constant(3) + constant(4), kNames), "7L");
  EXPECT_EQ(to_cpp(var(0) * 1 + 0, kNames), "i0");
  EXPECT_EQ(to_cpp(var(0) * 0 + var(1), kNames), "i1");
  EXPECT_EQ(to_cpp((var(0) + 3) + 4, kNames), "(i0 + 7L)");
  EXPECT_EQ(to_cpp((var(1) * 4) * 8, kNames), "(i1 * 32L)");
  EXPECT_EQ(to_cpp(floordiv(var(0) * 12, constant(4)), kNames), "(i0 * 3L)");
  EXPECT_EQ(to_cpp(mod(var(0) * 12, constant(4)), kNames), "0L");
  // Python-style floor division and modulo on constants.
  EXPECT_EQ(to_cpp(floordiv(constant(-7), constant(2)), kNames), "-4L");
  EXPECT_EQ(to_cpp(mod(constant(-7), constant(2)), kNames), "1L");
}

TEST(IndexExpr, StridedOffsetAndUnravel) {
  const Index offset = strided_offset({var(0), var(1)}, {1, 5}, 2);  // a transposed view
  EXPECT_EQ(to_cpp(offset, kNames), "((i0 + 2L) + (i1 * 5L))");
  const std::vector<Index> idx = unravel(var(0), {3, 4});
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(to_cpp(idx[0], kNames), "(i0 / 4L)");
  EXPECT_EQ(to_cpp(idx[1], kNames), "(i0 % 4L)");
  EXPECT_TRUE(uses_var(offset, 1));
  EXPECT_FALSE(uses_var(offset, 2));
}

TEST(IndexExpr, LinearCoefficientOfAffineExpressions) {
  EXPECT_EQ(linear_coefficient(constant(5), 1), 0);
  EXPECT_EQ(linear_coefficient(var(1), 1), 1);
  EXPECT_EQ(linear_coefficient(var(0), 1), 0);
  // A row-major offset: stride 1 along the inner variable, 64 along the outer one.
  const Index offset = strided_offset({var(0), var(1)}, {64, 1}, 3);
  EXPECT_EQ(linear_coefficient(offset, 1), 1);
  EXPECT_EQ(linear_coefficient(offset, 0), 64);
  EXPECT_EQ(linear_coefficient(offset, 2), 0);
  EXPECT_EQ(linear_coefficient(var(1) * 2 + var(1) * 3, 1), 5);
  EXPECT_EQ(linear_coefficient(constant(4) * (var(1) + 1), 1), 4);
  EXPECT_EQ(linear_coefficient(var(1) * -1 + 7, 1), -1);
  // Not affine: the variable under a division or modulo, or times another variable.
  EXPECT_EQ(linear_coefficient(floordiv(var(1), constant(4)), 1), std::nullopt);
  EXPECT_EQ(linear_coefficient(mod(var(1), constant(4)) + var(0), 1), std::nullopt);
  EXPECT_EQ(linear_coefficient(var(1) * var(0), 1), std::nullopt);
  // ... which is fine for the variables that do not occur there.
  EXPECT_EQ(linear_coefficient(floordiv(var(0), constant(4)) + var(1), 1), 1);
  EXPECT_EQ(linear_coefficient(var(1) * var(0), 2), 0);
}

TEST(IndexExpr, SubstituteRebuildsWithSimplification) {
  const Index offset = strided_offset({var(0), var(1)}, {64, 1}, 3);
  EXPECT_EQ(to_cpp(substitute(offset, 1, constant(0)), kNames), "((i0 * 64L) + 3L)");
  EXPECT_EQ(to_cpp(substitute(offset, 0, constant(2)), kNames), "(i1 + 131L)");
  EXPECT_EQ(to_cpp(substitute(offset, 1, var(2) + 5), kNames), "(((i0 * 64L) + 3L) + (i2 + 5L))");
  EXPECT_EQ(to_cpp(substitute(mod(var(1), constant(4)), 1, constant(9)), kNames), "1L");
  EXPECT_EQ(to_cpp(substitute(floordiv(var(1) * 8, constant(4)), 1, var(0)), kNames), "(i0 * 2L)");
  EXPECT_EQ(substitute(offset, 2, constant(7)), offset);  // untouched when var does not occur
}

}  // namespace
}  // namespace kiln::inductor
