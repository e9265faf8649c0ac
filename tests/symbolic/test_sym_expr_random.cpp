// Random expression trees: the canonical SymExpr built from a tree must evaluate like the tree
// itself, evaluated directly with Python's floor semantics (the independent reference), at every
// binding where the tree is defined (simplification may assume divisors are nonzero).
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/sym_expr.h>
#include <kiln/symbolic/value_ranges.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace kiln::symbolic {
namespace {

constexpr int kSymbols = 3;

struct Tree {
  enum class Op { Const, Sym, Add, Sub, Mul, FloorDiv, Mod, Min, Max, Neg } op;
  int64_t value = 0;
  std::unique_ptr<Tree> a, b;
};

std::unique_ptr<Tree> leaf(std::mt19937& rng) {
  auto t = std::make_unique<Tree>();
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    t->op = Tree::Op::Const;
    t->value = std::uniform_int_distribution<int64_t>(-4, 4)(rng);
  } else {
    t->op = Tree::Op::Sym;
    t->value = std::uniform_int_distribution<int64_t>(0, kSymbols - 1)(rng);
  }
  return t;
}

std::unique_ptr<Tree> random_tree(std::mt19937& rng, int depth) {
  if (depth == 0 || std::uniform_int_distribution<int>(0, 4)(rng) == 0) return leaf(rng);
  auto t = std::make_unique<Tree>();
  t->op = static_cast<Tree::Op>(std::uniform_int_distribution<int>(2, 9)(rng));
  t->a = random_tree(rng, depth - 1);
  if (t->op == Tree::Op::Neg) return t;
  const bool division = t->op == Tree::Op::FloorDiv || t->op == Tree::Op::Mod;
  if (division && std::uniform_int_distribution<int>(0, 3)(rng) != 0) {
    // Mostly constant divisors, as sizes have; never a literal zero.
    t->b = std::make_unique<Tree>();
    t->b->op = Tree::Op::Const;
    int64_t v = std::uniform_int_distribution<int64_t>(1, 6)(rng);
    t->b->value = std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? -v : v;
  } else {
    t->b = random_tree(rng, depth - 1);
  }
  return t;
}

int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// nullopt where the tree divides by zero.
std::optional<int64_t> reference(const Tree& t, const std::vector<int64_t>& v) {
  if (t.op == Tree::Op::Const) return t.value;
  if (t.op == Tree::Op::Sym) return v[static_cast<size_t>(t.value)];
  std::optional<int64_t> a = reference(*t.a, v);
  if (!a) return std::nullopt;
  if (t.op == Tree::Op::Neg) return -*a;
  std::optional<int64_t> b = reference(*t.b, v);
  if (!b) return std::nullopt;
  switch (t.op) {
    case Tree::Op::Add:
      return *a + *b;
    case Tree::Op::Sub:
      return *a - *b;
    case Tree::Op::Mul:
      return *a * *b;
    case Tree::Op::FloorDiv:
      if (*b == 0) return std::nullopt;
      return py_floordiv(*a, *b);
    case Tree::Op::Mod:
      if (*b == 0) return std::nullopt;
      return *a - py_floordiv(*a, *b) * *b;
    case Tree::Op::Min:
      return std::min(*a, *b);
    case Tree::Op::Max:
      return std::max(*a, *b);
    default:
      return std::nullopt;
  }
}

SymExpr build(const Tree& t) {
  switch (t.op) {
    case Tree::Op::Const:
      return t.value;
    case Tree::Op::Sym:
      return SymExpr::symbol(t.value);
    case Tree::Op::Neg:
      return -build(*t.a);
    case Tree::Op::Add:
      return build(*t.a) + build(*t.b);
    case Tree::Op::Sub:
      return build(*t.a) - build(*t.b);
    case Tree::Op::Mul:
      return build(*t.a) * build(*t.b);
    case Tree::Op::FloorDiv:
      return floordiv(build(*t.a), build(*t.b));
    case Tree::Op::Mod:
      return mod(build(*t.a), build(*t.b));
    case Tree::Op::Min:
      return min(build(*t.a), build(*t.b));
    case Tree::Op::Max:
      return max(build(*t.a), build(*t.b));
  }
  return 0;
}

// Every binding of the symbols to values in [lo, hi].
std::vector<std::vector<int64_t>> bindings(int64_t lo, int64_t hi) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t x = lo; x <= hi; ++x)
    for (int64_t y = lo; y <= hi; ++y)
      for (int64_t z = lo; z <= hi; ++z) out.push_back({x, y, z});
  return out;
}

TEST(SymExprRandom, CanonicalFormEvaluatesLikeTheTree) {
  std::mt19937 rng(1234);
  const auto all = bindings(-5, 5);  // negative values exercise floor semantics
  int built = 0, compared = 0;
  for (int i = 0; i < 600; ++i) {
    std::unique_ptr<Tree> tree = random_tree(rng, 4);
    std::optional<SymExpr> e;
    try {
      e = build(*tree);
    } catch (const Error&) {
      continue;  // a divisor folded to zero: the tree divides by zero everywhere
    }
    ++built;
    for (const auto& v : all) {
      std::optional<int64_t> want = reference(*tree, v);
      if (!want) continue;
      ++compared;
      ASSERT_EQ(evaluate(*e, v), *want)
          << "expression " << *e << " at s0=" << v[0] << " s1=" << v[1] << " s2=" << v[2];
    }
  }
  EXPECT_GT(built, 500);
  EXPECT_GT(compared, 300000);
}

TEST(SymExprRandom, RangeSimplificationIsSound) {
  std::mt19937 rng(99);
  const std::vector<std::pair<SymRange, std::vector<std::vector<int64_t>>>> cases = {
      {SymRange{2, 6}, bindings(2, 6)},
      {SymRange{-3, 4}, bindings(-3, 4)},
      {SymRange{0, 3}, bindings(0, 3)},
  };
  int simplified = 0;
  for (const auto& [range, points] : cases) {
    const std::vector<SymRange> ranges(kSymbols, range);
    for (int i = 0; i < 300; ++i) {
      std::unique_ptr<Tree> tree = random_tree(rng, 4);
      std::optional<SymExpr> e, s;
      try {
        e = build(*tree);
        s = simplify_in_ranges(*e, ranges);
      } catch (const Error&) {
        continue;
      }
      if (*s != *e) ++simplified;
      for (const auto& v : points) {
        std::optional<int64_t> want = reference(*tree, v);
        if (!want) continue;
        ASSERT_EQ(evaluate(*s, v), *want) << *e << " simplified to " << *s << " in " << range.str();
        const SymRange b = bounds(*e, ranges);
        ASSERT_TRUE(b.contains(*want)) << *e << " = " << *want << " outside " << b.str();
      }
    }
  }
  EXPECT_GT(simplified, 20);  // the ranges do simplify something
}

TEST(SymExprRandom, OrderOfConstructionDoesNotMatter) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::vector<SymExpr> terms;
    for (int k = 0; k < 5; ++k) {
      std::unique_ptr<Tree> t = random_tree(rng, 2);
      try {
        terms.push_back(build(*t));
      } catch (const Error&) {
      }
    }
    if (terms.empty()) continue;
    SymExpr sum = 0, sum_reversed = 0, product = 1, product_reversed = 1;
    for (const SymExpr& t : terms) {
      sum = sum + t;
      product = product * t;
    }
    for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
      sum_reversed = *it + sum_reversed;
      product_reversed = *it * product_reversed;
    }
    EXPECT_EQ(sum, sum_reversed);
    EXPECT_EQ(sum.hash(), sum_reversed.hash());
    EXPECT_EQ(sum.str(), sum_reversed.str());
    EXPECT_EQ(product, product_reversed);
    EXPECT_EQ(min(sum, product), min(product_reversed, sum_reversed));
  }
}

}  // namespace
}  // namespace kiln::symbolic
