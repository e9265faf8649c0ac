// ShapeEnv: symbol creation, 0/1 specialization, duck sizing, bounds, guard recording, static
// decisions and what guards teach the environment.
#include <gtest/gtest.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_node.h>

#include <string>
#include <vector>

namespace kiln::symbolic {
namespace {

std::vector<std::string> guard_strs(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const Guard& g : env.guards()) out.push_back(g.str());
  return out;
}

TEST(ShapeEnv, CreatesSymbolsWithHintsAndSources) {
  auto env = ShapeEnv::create();
  SymInt a = env->create_symbol(8, "x.size(0)");
  SymInt b = env->create_symbol(5, "x.size(1)");
  ASSERT_TRUE(a.is_symbolic());
  EXPECT_EQ(a.str(), "s0");
  EXPECT_EQ(b.str(), "s1");
  EXPECT_EQ(a.maybe_int(), 8);
  ASSERT_EQ(env->symbols().size(), 2u);
  EXPECT_EQ(env->symbols()[1].source, "x.size(1)");
  EXPECT_EQ(env->symbols()[1].declared, (SymRange{2, SymRange::kPosInf}));
  EXPECT_EQ(env->inputs().size(), 2u);
  EXPECT_EQ(env->inputs()[0].kind, InputDim::Kind::Symbol);
  EXPECT_TRUE(env->guards().empty());
}

TEST(ShapeEnv, ZeroAndOneAreSpecialized) {
  auto env = ShapeEnv::create();
  SymInt one = env->create_symbol(1, "x.size(0)");
  SymInt zero = env->create_symbol(0, "y.size(0)");
  SymInt marked = env->create_symbol(1, "z.size(0)", 0, 16);
  EXPECT_FALSE(one.is_symbolic());
  EXPECT_EQ(one.expect_int(), 1);
  EXPECT_EQ(zero.expect_int(), 0);
  EXPECT_EQ(marked.expect_int(), 1);
  EXPECT_TRUE(env->symbols().empty());
  ASSERT_EQ(env->inputs().size(), 3u);
  EXPECT_EQ(env->inputs()[0].kind, InputDim::Kind::Specialized);
  EXPECT_NE(env->inputs()[0].reason.find("0/1 specialization"), std::string::npos);
  EXPECT_NE(env->inputs()[2].reason.find("marked dynamic"), std::string::npos);
}

TEST(ShapeEnv, DuckSizingSharesSymbolsOfEqualSizes) {
  auto env = ShapeEnv::create();
  SymInt a = env->create_symbol(8, "x.size(0)");
  SymInt b = env->create_symbol(8, "y.size(0)");
  EXPECT_EQ(b.str(), "s0");
  EXPECT_TRUE(a == b);  // statically: the same symbol
  EXPECT_TRUE(env->guards().empty());
  EXPECT_EQ(env->inputs()[1].kind, InputDim::Kind::Duck);
  EXPECT_EQ(env->inputs()[1].symbol, 0);

  auto plain = ShapeEnv::create({.duck_sizes = false});
  SymInt c = plain->create_symbol(8, "x.size(0)");
  SymInt d = plain->create_symbol(8, "y.size(0)");
  EXPECT_EQ(d.str(), "s1");
}

TEST(ShapeEnv, BoundsComeFromMarkDynamic) {
  auto env = ShapeEnv::create();
  SymInt a = env->create_symbol(8, "x.size(0)", 4, 64);
  SymInt b = env->create_symbol(8, "y.size(0)", std::nullopt, 100);
  EXPECT_EQ(b.str(), "s1");  // bounded dimensions get their own symbol
  EXPECT_EQ(env->symbols()[0].declared, (SymRange{4, 64}));
  EXPECT_EQ(env->symbols()[1].declared, (SymRange{2, 100}));
  EXPECT_TRUE(a < 65);  // decided by the range: no guard
  EXPECT_TRUE(a >= 4);
  EXPECT_FALSE(a < 4);
  EXPECT_TRUE(env->guards().empty());
  EXPECT_TRUE(a < 10);  // not decided: a guard
  EXPECT_EQ(guard_strs(*env), (std::vector<std::string>{"Lt(s0, 10)"}));
}

TEST(ShapeEnv, BadInputRaises) {
  auto env = ShapeEnv::create();
  EXPECT_THROW(env->create_symbol(-1, "x.size(0)"), Error);
  EXPECT_THROW(env->create_symbol(8, "x.size(0)", 10, 4), Error);
  EXPECT_THROW(env->create_symbol(8, "x.size(0)", 10, 20), Error);
  EXPECT_THROW(env->create_symbol(8, "x.size(0)", std::nullopt, 5), Error);
  EXPECT_THROW(env->create_symbol(8, "x.size(0)", -2, 5), Error);
  try {
    env->create_symbol(30, "x.size(2)", 2, 16);
    ADD_FAILURE() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.size(2)"), std::string::npos) << e.what();
  }
}

TEST(ShapeEnv, ComparisonsRecordGuardsAtTheHint) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(4, "x.size(1)");
  EXPECT_TRUE(s0 * 2 < 64);
  EXPECT_FALSE(s0 == s1);
  EXPECT_TRUE(s1 < s0);
  EXPECT_FALSE(s0 * 2 < 10);
  EXPECT_TRUE(SymInt(5) < s0);  // a plain left operand
  EXPECT_EQ(guard_strs(*env), (std::vector<std::string>{"Lt(s0*2, 64)", "Ne(s0, s1)", "Lt(s1, s0)",
                                                        "Ge(s0*2, 10)", "Gt(s0, 5)"}));
  // Asking again adds nothing.
  EXPECT_TRUE(s0 * 2 < 64);
  EXPECT_EQ(env->guards().size(), 5u);
}

TEST(ShapeEnv, StaticallyDecidedComparisonsRecordNothing) {
  auto env = ShapeEnv::create();
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(4, "x.size(1)");
  EXPECT_TRUE(s0 + 1 > s0);
  EXPECT_TRUE(s0 == s0);
  EXPECT_FALSE(s0 == s0 + 1);
  EXPECT_TRUE(s0 >= 2);  // sizes that reach a symbol are >= 2
  EXPECT_FALSE(s0 < 2);
  EXPECT_FALSE(s0 == 1);
  EXPECT_FALSE(s0 == 0);
  EXPECT_TRUE(s0 * s1 > 3);
  EXPECT_TRUE(s0 + s1 >= 4);
  EXPECT_TRUE(s0 % 4 < 4);
  EXPECT_TRUE((s0 * 4 + 3) / 4 == s0);
  EXPECT_TRUE(env->guards().empty()) << env->guards_str();
}

TEST(ShapeEnv, GuardsNarrowRangesAndReplaceSymbols) {
  auto env = ShapeEnv::create({.duck_sizes = false});
  SymInt s0 = env->create_symbol(8, "x.size(0)");
  SymInt s1 = env->create_symbol(8, "y.size(0)");
  SymInt s2 = env->create_symbol(3, "z.size(0)");
  EXPECT_TRUE(s2 < 4);  // s2 in [2, 3] from now on
  EXPECT_EQ(env->ranges()[2], (SymRange{2, 3}));
  EXPECT_TRUE(s2 < 5);  // implied: no second guard
  EXPECT_EQ(env->guards().size(), 1u);
  // With s2 in [2, 3], (s0*4 + s2) // 4 is s0 and the remainder is s2.
  EXPECT_EQ(((s0 * 4 + s2) / 4).str(), "s0");
  EXPECT_EQ(((s0 * 4 + s2) % 4).str(), "s2");

  EXPECT_TRUE(s0 == s1);  // Eq(s0, s1): s1 reads s0 from now on
  EXPECT_EQ(guard_strs(*env).back(), "Eq(s0, s1)");
  EXPECT_EQ((s1 - s0).expect_int(), 0);
  EXPECT_EQ((s1 * 2 + s0).str(), "s0*3");
  EXPECT_EQ(env->guards().size(), 2u);

  EXPECT_TRUE(s2 == 3);  // the range becomes one value: s2 is 3
  EXPECT_EQ((s2 * 2).expect_int(), 6);
}

TEST(ShapeEnv, LogsSymbolsGuardsAndSpecializations) {
  std::vector<std::string> records;
  logs::set_enabled("dynamic");
  logs::Sink previous = logs::set_sink([&](logs::Channel c, std::string_view m) {
    if (c == logs::Channel::dynamic) records.emplace_back(m);
  });
  {
    auto env = ShapeEnv::create();
    SymInt s0 = env->create_symbol(8, "x.size(1)");
    env->create_symbol(1, "x.size(0)");
    env->create_symbol(8, "y.size(1)");
    EXPECT_TRUE(s0 < 64);
  }
  logs::set_sink(std::move(previous));
  logs::set_enabled("");
  ASSERT_EQ(records.size(), 5u) << fmt::format("{}", fmt::join(records, "\n"));
  EXPECT_EQ(records[0], "create_symbol s0 = 8 for x.size(1), range [2, inf]");
  EXPECT_EQ(records[1], "specialized x.size(0) = 1: size 1 (0/1 specialization)");
  EXPECT_EQ(records[2], "y.size(1) = s0 (duck sizing: the same size 8 as x.size(1))");
  EXPECT_EQ(records[3], "guard added: Lt(s0, 64) (at s0 = 8)");
  EXPECT_EQ(records[4], "s0 narrowed to [2, 63]");
}

}  // namespace
}  // namespace kiln::symbolic
