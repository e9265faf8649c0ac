// Index expressions simplify as they are built, so that folded views read like hand-written
// indexing; unravel and strided offsets are the view-folding arithmetic.
#include "inductor/index_expr.h"

#include <gtest/gtest.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_node.h>

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

// A [4, 128, 3072] view of a [512, 3072] buffer read through its flat position q: q % 3072 and
// q / 3072 are affine again once the variables' ranges are known.
TEST(IndexExpr, SimplifyInRangesUndoesUnravelling) {
  const Sizes sizes = {4, 128, 3072};
  const Index q = var(0) * 393216 + var(1) * 3072 + var(2);
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(q, constant(3072)), sizes), kNames), "i2");
  EXPECT_EQ(to_cpp(simplify_in_ranges(floordiv(q, constant(3072)), sizes), kNames),
            "((i0 * 128L) + i1)");
  EXPECT_EQ(
      to_cpp(simplify_in_ranges(floordiv(q, constant(3072)) * 3072 + mod(q, constant(3072)), sizes),
             kNames),
      "(((i0 * 393216L) + (i1 * 3072L)) + i2)");
  // Not when the remainder can reach the divisor: i2 + 1 may be 3072.
  const Index shifted = var(1) * 3072 + var(2) + 1;
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(shifted, constant(3072)), sizes), kNames),
            "((((i1 * 3072L) + i2) + 1L) % 3072L)");
  // Nor when a variable's range exceeds it (i1 up to 127 against 100).
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(var(1), constant(100)), sizes), kNames), "(i1 % 100L)");
  // An offset inside the range: (i2 + 5) / 8192 is 0 for i2 < 3072.
  EXPECT_EQ(to_cpp(simplify_in_ranges(floordiv(var(2) + 5, constant(8192)), sizes), kNames), "0L");
  // Every value agrees with the unsimplified expression over the ranges.
  const Index e = mod(floordiv(q, constant(64)), constant(48)) + floordiv(q, constant(3072));
  const Index s = simplify_in_ranges(e, sizes);
  for (int64_t i0 : {0, 3}) {
    for (int64_t i1 : {0, 1, 77, 127}) {
      for (int64_t i2 : {0, 63, 64, 3071}) {
        const auto at = [&](const Index& x) {
          return substitute(substitute(substitute(x, 0, constant(i0)), 1, constant(i1)), 2,
                            constant(i2));
        };
        int64_t a = 0, b = 0;
        ASSERT_TRUE(is_constant(at(e), &a) && is_constant(at(s), &b));
        EXPECT_EQ(a, b) << i0 << " " << i1 << " " << i2;
      }
    }
  }
}

// A [s0, s1, 32] view of a [s0*s1, 32] buffer (BERT's hidden states with a symbolic batch and
// sequence): the unravelled position folds back to its variables with symbolic divisors, and
// what the ranges cannot prove stays.
TEST(IndexExpr, SymbolicSizesFoldWhereTheRangesProveIt) {
  auto env = symbolic::ShapeEnv::create();
  const Size s0 = symbolic::expr_of(env->create_symbol(4, "x.size(0)"));
  const Size s1 = symbolic::expr_of(env->create_symbol(12, "x.size(1)"));
  const SizeFacts facts(env);
  const Sizes sizes = {s0, s1, 32};
  const Index q = strided_offset({var(0), var(1), var(2)}, {s1 * Size(32), 32, 1}, 0);
  EXPECT_EQ(to_cpp(q, kNames), "(((i0 * (32 * s1)) + (i1 * 32L)) + i2)");
  // Sizes fold with constants into one invariant.
  EXPECT_EQ(to_cpp(constant(s1) * 2 + constant(3), kNames), "(2 * s1 + 3)");
  EXPECT_EQ(to_cpp(simplify_in_ranges(floordiv(q, constant(s1 * Size(32))), sizes, facts), kNames),
            "i0");
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(floordiv(q, constant(32)), constant(s1)), sizes, facts),
                   kNames),
            "i1");
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(q, constant(32)), sizes, facts), kNames), "i2");
  // i1 + 1 reaches s1: no simplification.
  EXPECT_EQ(to_cpp(simplify_in_ranges(mod(var(1) + 1, constant(s1)), sizes, facts), kNames),
            "((i1 + 1L) % s1)");
  // Without the environment's facts nothing symbolic is proven.
  EXPECT_EQ(to_cpp(simplify_in_ranges(floordiv(q, constant(s1 * Size(32))), sizes), kNames),
            "((((i0 * (32 * s1)) + (i1 * 32L)) + i2) / (32 * s1))");
  // Coefficients: an invariant one for the outer variable, plain ones for the inner.
  EXPECT_EQ(linear_size_coefficient(q, 0), std::optional<Size>(s1 * Size(32)));
  EXPECT_EQ(linear_coefficient(q, 0), std::nullopt);
  EXPECT_EQ(linear_coefficient(q, 2), std::optional<int64_t>(1));
}

}  // namespace
}  // namespace kiln::inductor
