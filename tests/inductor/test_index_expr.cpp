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

}  // namespace
}  // namespace kiln::inductor
