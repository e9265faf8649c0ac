// SymInt arithmetic through the SymNodeImpl interface, backed by a ShapeEnv.
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_node.h>

#include <limits>
#include <memory>

namespace kiln::symbolic {
namespace {

TEST(SymNode, ArithmeticBuildsCanonicalExpressions) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(6, "x.size(0)");
  SymInt s1 = env->create_symbol(4, "x.size(1)");
  EXPECT_EQ((s0 * 2 + s0).str(), "s0*3");
  EXPECT_EQ((s0 + s1 - s0).str(), "s1");
  EXPECT_EQ((s0 * 4 / 2).str(), "s0*2");
  EXPECT_EQ((s0 / 2 / 3).str(), "(s0//6)");
  EXPECT_EQ((SymInt(3) + s0).str(), "s0 + 3");
  EXPECT_EQ((SymInt(3) - s0).str(), "-s0 + 3");
  EXPECT_EQ((SymInt(3) * s1).str(), "s1*3");
  EXPECT_EQ((-s1).str(), "-s1");
  EXPECT_EQ((s0 * s1).maybe_int(), 24);
  EXPECT_EQ((s0 / 4).maybe_int(), 1);
  EXPECT_EQ(((s0 - 10) / 4).maybe_int(), -1);  // floor, as Python
  EXPECT_EQ(((s0 - 10) % 3).maybe_int(), 2);
  EXPECT_EQ((s0 / s1).maybe_int(), 1);
  EXPECT_EQ((s0 % s1).maybe_int(), 2);
}

TEST(SymNode, ConstantResultsArePlainIntegers) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(6, "x.size(0)");
  SymInt zero = s0 - s0;
  EXPECT_FALSE(zero.is_symbolic());
  EXPECT_EQ(zero.expect_int(), 0);
  EXPECT_FALSE((s0 * 4 % 2).is_symbolic());
  EXPECT_EQ((s0 * 0).expect_int(), 0);
  EXPECT_EQ((s0 / s0).expect_int(), 1);
  EXPECT_EQ(expr_of(s0 + 1), SymExpr::symbol(0) + 1);
  EXPECT_EQ(expr_of(SymInt(7)), SymExpr(7));
}

// A plain integer compared with a symbol the environment has pinned (a guard made it a
// constant): the comparison folds instead of asking a node that the negation no longer has.
TEST(SymNode, ComparisonsWithAPinnedSymbol) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(4, "x.size(0)");
  EXPECT_TRUE(s0 == SymInt(4));  // records Eq(s0, 4): s0 reads 4 from now on
  EXPECT_FALSE((-s0).is_symbolic());
  EXPECT_TRUE(SymInt(2) < s0);
  EXPECT_FALSE(SymInt(5) < s0);
  EXPECT_TRUE(SymInt(5) > s0);
}

// A plain operand at the edge of int64 (a slice's end of None is INT64_MAX) compared with a
// symbol: decided without negating it (-INT64_MAX lies in the range SymInt reserves for handles).
TEST(SymNode, ComparisonsWithExtremePlainOperands) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(6, "x.size(0)");
  const SymInt big(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(big < s0);
  EXPECT_TRUE(s0 < big);
  EXPECT_TRUE(big > s0);
}

TEST(SymNode, NodesAndTheirEnvironmentAreFreed) {
  std::weak_ptr<ShapeEnv> weak;
  {
    auto env = ShapeEnv::create();
    weak = env;
    SymInt s0 = env->create_symbol(6, "x.size(0)");
    SymInt s1 = env->create_symbol(3, "x.size(1)");
    {
      std::vector<SymInt> sizes;
      for (int i = 0; i < 100; ++i) sizes.push_back(s0 * i + s1);
      SymInt copy = sizes[5];
      SymInt moved = std::move(sizes[6]);
      EXPECT_GT(env.use_count(), 100);
    }
    EXPECT_EQ(env.use_count(), 3);  // env, s0, s1
    env.reset();
    EXPECT_FALSE(weak.expired());  // the SymInts keep it alive
  }
  EXPECT_TRUE(weak.expired());
}

TEST(SymNode, BadInputRaises) {
  auto env = ShapeEnv::create();
  auto other = ShapeEnv::create();
  SymInt s0 = env->create_symbol(6, "x.size(0)");
  SymInt t0 = other->create_symbol(6, "y.size(0)");
  EXPECT_THROW(s0 + t0, Error);
  EXPECT_THROW(s0 / 0, Error);
  EXPECT_THROW(s0 % 0, Error);
  EXPECT_THROW(s0.expect_int(), Error);
  EXPECT_THROW(SymInt(4) / s0, Error);  // core rejects a symbolic divisor of a plain integer
  SymInt d = s0 - 6;
  EXPECT_THROW((s0 / d).maybe_int(), Error);  // zero divisor at the hint
}

}  // namespace
}  // namespace kiln::symbolic
