// GuardChecker: the compiled per-call check of a ShapeEnv's assumptions.
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/guard_checker.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_node.h>

#include <random>
#include <vector>

namespace kiln::symbolic {
namespace {

using Sizes = std::vector<int64_t>;

TEST(GuardChecker, PassesAndFailsPerBinding) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(4, "x.size(1)");
  EXPECT_TRUE(s0 * 2 < 64);  // Lt(s0*2, 64)
  EXPECT_FALSE(s0 == s1);    // Ne(s0, s1)
  EXPECT_TRUE(s0 % 4 == 0);  // Eq((s0 % 4), 0)
  GuardChecker checker(*env);
  EXPECT_EQ(checker.num_inputs(), 2u);
  EXPECT_EQ(checker.num_checks(), 5u);  // two ranges, three guards

  EXPECT_TRUE(checker.check(Sizes{8, 4}));
  EXPECT_TRUE(checker.check(Sizes{28, 3}));
  EXPECT_EQ(checker.first_failure(Sizes{32, 4}), 2u);  // 64 < 64 fails
  EXPECT_EQ(checker.description(2), "Lt(s0*2, 64)");
  EXPECT_EQ(checker.first_failure(Sizes{12, 12}), 3u);
  EXPECT_EQ(checker.description(3), "Ne(s0, s1)");
  EXPECT_EQ(checker.first_failure(Sizes{10, 4}), 4u);
  EXPECT_EQ(checker.description(4), "Eq((s0 % 4), 0)");
  EXPECT_EQ(checker.first_failure(Sizes{8, 1}), 1u);  // below s1's range
  EXPECT_EQ(checker.explain_failure(Sizes{8, 4}), "");
  EXPECT_EQ(checker.explain_failure(Sizes{32, 4}), "Lt(s0*2, 64) failed: x.size(0) (s0) = 32");
  EXPECT_THROW(checker.check(Sizes{8}), Error);
}

TEST(GuardChecker, AgreesWithEvaluatingTheGuards) {
  auto env = ShapeEnv::create({.duck_sizes = false});
  SymInt a = env->create_symbol(6, "x.size(0)");
  SymInt b = env->create_symbol(5, "x.size(1)");
  SymInt c = env->create_symbol(9, "y.size(0)");
  EXPECT_TRUE((a * b) / 4 < c * 2);
  EXPECT_TRUE((a + c) % 3 == 0);
  EXPECT_FALSE(a * b - c * 3 < 0);
  EXPECT_TRUE(a / 2 + b / 2 != c);
  GuardChecker checker(*env);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> size(0, 20);
  int passed = 0;
  for (int i = 0; i < 2000; ++i) {
    Sizes sizes{size(rng), size(rng), size(rng)};
    bool want = std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s >= 2; });
    for (const Guard& g : env->guards()) {
      want = want && holds(g.relation, evaluate(g.difference(), sizes));
    }
    ASSERT_EQ(checker.check(sizes), want) << sizes[0] << " " << sizes[1] << " " << sizes[2];
    passed += want;
  }
  EXPECT_GT(passed, 50);
}

TEST(GuardChecker, SpecializedAndDuckSizesStillHold) {
  auto env = ShapeEnv::create();
  env->create_symbol(1, "x.size(0)");         // specialized to 1
  env->create_symbol(16, "x.size(1)");        // s0
  env->create_symbol(16, "y.size(1)");        // duck: s0 again
  env->create_symbol(7, "y.size(0)", 2, 10);  // s1 in [2, 10]
  GuardChecker checker(*env);
  EXPECT_TRUE(checker.check(Sizes{1, 16, 16, 7}));
  EXPECT_TRUE(checker.check(Sizes{1, 5, 5, 10}));
  EXPECT_EQ(checker.first_failure(Sizes{2, 16, 16, 7}), 0u);
  EXPECT_EQ(checker.description(0), "x.size(0) == 1 (size 1 (0/1 specialization))");
  EXPECT_EQ(checker.first_failure(Sizes{1, 16, 8, 7}), 2u);
  EXPECT_EQ(checker.explain_failure(Sizes{1, 16, 8, 7}),
            "y.size(1) == x.size(1) (duck sizing: the same size 16 as x.size(1)) failed: "
            "y.size(1) (s0) = 8, x.size(1) (s0) = 16");
  EXPECT_EQ(checker.first_failure(Sizes{1, 16, 16, 11}), 3u);
  EXPECT_EQ(checker.first_failure(Sizes{1, 1, 1, 7}), 1u);  // 1 was specialized: not s0

  Sizes symbols(checker.num_symbols());
  checker.bind_symbols(Sizes{1, 5, 5, 9}, symbols);
  EXPECT_EQ(symbols, (Sizes{5, 9}));
}

TEST(GuardChecker, ReplacedSymbolsAreStillChecked) {
  auto env = ShapeEnv::create({.duck_sizes = false});
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(8, "y.size(0)");
  EXPECT_TRUE(s0 == s1);
  EXPECT_TRUE(s1 * 2 < 100);  // recorded in terms of s0
  GuardChecker checker(*env);
  EXPECT_TRUE(checker.check(Sizes{20, 20}));
  EXPECT_FALSE(checker.check(Sizes{20, 21}));
  EXPECT_FALSE(checker.check(Sizes{50, 50}));
}

TEST(GuardChecker, DivisionByZeroFailsTheGuard) {
  auto env = ShapeEnv::create({.duck_sizes = false});
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(5, "x.size(1)");
  EXPECT_TRUE(s0 / (s1 - 3) == 4);
  GuardChecker checker(*env);
  EXPECT_TRUE(checker.check(Sizes{8, 5}));
  EXPECT_FALSE(checker.check(Sizes{8, 3}));  // s1 - 3 == 0
}

TEST(GuardChecker, EmptyEnvironmentPasses) {
  auto env = ShapeEnv::create();
  GuardChecker checker(*env);
  EXPECT_TRUE(checker.check(Sizes{}));
  EXPECT_EQ(checker.num_checks(), 0u);
}

}  // namespace
}  // namespace kiln::symbolic
