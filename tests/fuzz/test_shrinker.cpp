// The shrinker on synthetic failure predicates: it reaches the minimal program that keeps the
// failure, and never returns a program the predicate rejects.
#include "fuzz/program_edit.h"
#include "fuzz/shrinker.h"
#include "fuzz_test_programs.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::fuzz {
namespace {

bool runs_in_eager(const Program& p) {
  try {
    autograd::NoGradGuard no_grad;
    execute(p, make_inputs(p));
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool has_op(const Program& p, const std::string& op) {
  return std::any_of(p.nodes.begin(), p.nodes.end(), [&](const Node& n) { return n.op == op; });
}

TEST(FuzzShrinker, ReachesTheSingleFailingOp) {
  const Program p = testing::chain_program();
  // "Fails" whenever a sigmoid runs: the minimal program is one sigmoid of one [1, 1] input
  // that does not require grad.
  const ShrinkResult r =
      shrink(p, [](const Program& q) { return runs_in_eager(q) && has_op(q, "sigmoid"); });
  ASSERT_EQ(r.program.nodes.size(), 1u) << r.program.str();
  EXPECT_EQ(r.program.nodes[0].op, "sigmoid");
  ASSERT_EQ(r.program.inputs.size(), 1u) << r.program.str();
  EXPECT_FALSE(r.program.inputs[0].requires_grad);
  for (int64_t s : r.program.inputs[0].sizes) EXPECT_EQ(s, 1);
  EXPECT_EQ(r.program.outputs, std::vector<int>{1});
  EXPECT_GT(r.accepted, 0);
}

TEST(FuzzShrinker, KeepsWhatTheFailureNeeds) {
  const Program p = testing::chain_program();
  // Fails when sigmoid feeds mul and the first input still requires grad.
  auto fails = [](const Program& q) {
    if (!runs_in_eager(q) || q.inputs.empty() || !q.inputs[0].requires_grad) return false;
    const int base = static_cast<int>(q.inputs.size());
    for (size_t n = 0; n < q.nodes.size(); ++n) {
      if (q.nodes[n].op != "mul") continue;
      for (const Arg& a : q.nodes[n].args) {
        for (int v : a.values) {
          if (v >= base && q.nodes[static_cast<size_t>(v - base)].op == "sigmoid") return true;
        }
      }
    }
    return false;
  };
  const ShrinkResult r = shrink(p, fails);
  EXPECT_TRUE(fails(r.program));
  ASSERT_EQ(r.program.nodes.size(), 2u) << r.program.str();
  EXPECT_EQ(r.program.nodes[0].op, "sigmoid");
  EXPECT_EQ(r.program.nodes[1].op, "mul");
  EXPECT_TRUE(r.program.inputs[0].requires_grad);
}

TEST(FuzzShrinker, RespectsTheAttemptBudget) {
  const Program p = testing::chain_program();
  int calls = 0;
  const ShrinkResult r = shrink(
      p, [&](const Program&) { return ++calls, false; }, 5);
  EXPECT_EQ(r.attempts, 5);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(r.program.str(), p.str());
}

TEST(FuzzProgramEdit, DeadCodeAndRenumbering) {
  Program p = testing::chain_program();
  p.outputs = {2};  // only exp(v0): v1 and every later node are dead
  const Program q = without_dead_code(p);
  EXPECT_EQ(q.inputs.size(), 1u);
  ASSERT_EQ(q.nodes.size(), 1u);
  EXPECT_EQ(q.nodes[0].op, "exp");
  EXPECT_EQ(q.outputs, std::vector<int>{1});
  // Replacing add's value by its first argument drops add and renumbers its readers.
  const Program r = with_uses_replaced(testing::chain_program(), 3, 2);
  EXPECT_FALSE(has_op(r, "add"));
  EXPECT_TRUE(runs_in_eager(r));
}

}  // namespace
}  // namespace kiln::fuzz
