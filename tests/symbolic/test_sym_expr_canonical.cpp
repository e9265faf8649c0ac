// Canonical forms: spellings of one expression compare equal and print the same.
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/sym_expr.h>

namespace kiln::symbolic {
namespace {

const SymExpr s0 = SymExpr::symbol(0);
const SymExpr s1 = SymExpr::symbol(1);
const SymExpr s2 = SymExpr::symbol(2);

TEST(SymExprCanonical, SumsOfProductsFoldCoefficients) {
  EXPECT_EQ(s0 * 2 + s0, s0 * 3);
  EXPECT_EQ(s0 * 2 + s0, 3 * s0);
  EXPECT_EQ(s0 + s1 - s0, s1);
  EXPECT_EQ(s0 - s0, SymExpr(0));
  EXPECT_EQ((s0 + 1) + 2, s0 + 3);
  EXPECT_EQ(s0 * 1, s0);
  EXPECT_EQ(s0 * 0, SymExpr(0));
  EXPECT_EQ(-(-s0), s0);
  EXPECT_EQ((s0 * 3).str(), "s0*3");
  EXPECT_EQ((s0 * 3 + s1).str(), "s0*3 + s1");
  EXPECT_EQ((s1 + s0 * 3).str(), "s0*3 + s1");
  EXPECT_EQ((s0 - s1 * 2 - 1).str(), "s0 - s1*2 - 1");
  EXPECT_EQ((4 - s0).str(), "-s0 + 4");
  EXPECT_EQ((s0 * s1).str(), "s0*s1");
}

TEST(SymExprCanonical, CommutativeAssociativeDistributive) {
  EXPECT_EQ(s0 + s1, s1 + s0);
  EXPECT_EQ(s0 * s1, s1 * s0);
  EXPECT_EQ((s0 + s1) + s2, s0 + (s1 + s2));
  EXPECT_EQ((s0 * s1) * s2, s0 * (s1 * s2));
  EXPECT_EQ((s0 + s1) * 2, s0 * 2 + s1 * 2);
  EXPECT_EQ((s0 + 1) * (s0 - 1), s0 * s0 - 1);
  EXPECT_EQ((s0 + s1) * s2, s2 * s1 + s0 * s2);
  EXPECT_EQ(((s0 + 2) * 3 - 6) * s1, s0 * s1 * 3);
  EXPECT_NE(s0 * s0, s0 * 2);
  EXPECT_NE(s0, s1);
  EXPECT_EQ((s0 * s1 + s0).hash(), (s0 + s1 * s0).hash());
}

TEST(SymExprCanonical, FloorDivision) {
  EXPECT_EQ(floordiv(s0 * 4, 2), s0 * 2);
  EXPECT_EQ(floordiv(s0 * 4 + 2, 2), s0 * 2 + 1);
  EXPECT_EQ(floordiv(s0 * 4 + 3, 2), s0 * 2 + 1);
  EXPECT_EQ(floordiv(floordiv(s0, 2), 3), floordiv(s0, 6));
  EXPECT_EQ(floordiv(s0, 1), s0);
  EXPECT_EQ(floordiv(s0 * 2 + 2, 4), floordiv(s0 + 1, 2));  // common factor 2
  EXPECT_EQ(floordiv(s0 + 5, 2), floordiv(s0 + 1, 2) + 2);
  EXPECT_EQ(floordiv(s0 * 6 + s1, 3), s0 * 2 + floordiv(s1, 3));
  EXPECT_EQ(floordiv(s0, -2), floordiv(-s0, 2));
  EXPECT_EQ(floordiv(s0 * s1 * 4, s1 * 2), s0 * 2);  // a monomial divisor (assumed nonzero)
  EXPECT_EQ(floordiv(s0 * s1 + 3, s1), s0 + floordiv(SymExpr(3), s1));
  EXPECT_EQ(floordiv(s0 + s1, s0 + s1), SymExpr(1));
  EXPECT_EQ(floordiv(s0, 6).str(), "(s0//6)");
  EXPECT_EQ(floordiv(s0 + 1, 2).str(), "((s0 + 1)//2)");
  EXPECT_EQ(floordiv(SymExpr(-7), 2), SymExpr(-4));
}

TEST(SymExprCanonical, FloorDivisionOfSumsIsExact) {
  // s0*4 + 3 over 2 keeps s0*2 + (3 // 2) = s0*2 + 1 because s0*4 is a multiple of 2.
  EXPECT_EQ(floordiv(s0 * 4 + 3, 2).str(), "s0*2 + 1");
  EXPECT_EQ(floordiv(s0 * 3, 2).str(), "((s0*3)//2)");
}

TEST(SymExprCanonical, Modulo) {
  EXPECT_EQ(mod(s0 * 4, 2), SymExpr(0));
  EXPECT_EQ(mod(s0 * 3, 2), mod(s0, 2));
  EXPECT_EQ(mod(s0 * 4 + s1 * 2 + 3, 2), SymExpr(1));
  EXPECT_EQ(mod(s0 + s1 * 2, 2), mod(s0, 2));
  EXPECT_EQ(mod(s0 + 7, 4), mod(s0 + 3, 4));
  EXPECT_EQ(mod(s0 * 4 + 2, 6), mod(s0 * 2 + 1, 3) * 2);  // g*x % g*c == g*(x % c)
  EXPECT_EQ(mod(mod(s0, 8), 4), mod(s0, 4));
  EXPECT_EQ(mod(mod(s0, 4), 4), mod(s0, 4));
  EXPECT_EQ(mod(s0, 1), SymExpr(0));
  EXPECT_EQ(mod(s0, -3), -mod(-s0, 3));
  EXPECT_EQ(mod(s0 * s1, s1), SymExpr(0));
  EXPECT_EQ(mod(s0 * s1 + s2, s1), mod(s2, s1));
  EXPECT_EQ(mod(s0, 4).str(), "(s0 % 4)");
}

TEST(SymExprCanonical, MinMax) {
  EXPECT_EQ(min(s0, s1), min(s1, s0));
  EXPECT_EQ(max(s0, s1), max(s1, s0));
  EXPECT_EQ(min(min(s0, s1), s2), min(s0, min(s1, s2)));
  EXPECT_EQ(min(s0, s0), s0);
  EXPECT_EQ(min(s0, s0 + 1), s0);
  EXPECT_EQ(max(s0, s0 + 1), s0 + 1);
  EXPECT_EQ(min(SymExpr(3), SymExpr(5)), SymExpr(3));
  EXPECT_EQ(max(max(s0, 3), 5), max(s0, 5));
  EXPECT_EQ(min(s0, s1).str(), "min(s0, s1)");
  EXPECT_NE(min(s0, s1), max(s0, s1));
}

TEST(SymExprCanonical, OrderAndFreeSymbols) {
  EXPECT_LT(SymExpr(100), s0);
  EXPECT_LT(s0, s1);
  EXPECT_EQ(free_symbols(s2 * s0 + floordiv(s1, 2) + s0), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(free_symbols(SymExpr(4)).empty());
  EXPECT_EQ(substitute(s0 * 2 + s1,
                       [](int64_t id) -> std::optional<SymExpr> {
                         if (id == 1) return SymExpr::symbol(0) * 3;
                         return std::nullopt;
                       }),
            s0 * 5);
}

TEST(SymExprCanonical, BadInputRaises) {
  EXPECT_THROW(floordiv(s0, 0), Error);
  EXPECT_THROW(mod(s0, 0), Error);
  EXPECT_THROW(floordiv(SymExpr(4), s0 - s0), Error);  // the divisor folds to 0
  EXPECT_THROW(SymExpr::symbol(-1), Error);
  EXPECT_THROW(SymExpr(std::numeric_limits<int64_t>::max()) + 1, Error);
  EXPECT_THROW(s0 * std::numeric_limits<int64_t>::max() * 2, Error);
  try {
    floordiv(s0 + 1, 0);
    ADD_FAILURE() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("by zero"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::symbolic
