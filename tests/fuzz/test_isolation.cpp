// Crash isolation: a backend that aborts the process, or hangs, on graphs with a sigmoid is a
// finding charged to its configuration (the configurations before it keep their outcomes), and a
// crashing program shrinks to the one op that crashes, each attempt in its own child.
#include "fuzz/isolation.h"
#include "fuzz/shrinker.h"
#include "fuzz_test_programs.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace kiln::fuzz {
namespace {

// The children of this test process run kernels after the parent has (other tests): one thread.
const IsolationOptions kOneThread{.timeout_s = 120, .threads = 1};

bool has_sigmoid(const graph::Graph& g) {
  for (const auto& n : g.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->name.starts_with("sigmoid")) return true;
  }
  return false;
}

// Eager's backend, except that a graph with a sigmoid aborts the process / never returns.
void register_crashing_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend("fuzz_test_aborts",
                     [](const graph::Graph& g, std::span<const Tensor> example,
                        const BackendContext& context) -> CompiledGraph {
                       if (has_sigmoid(g)) std::abort();
                       return lookup_backend("eager")(g, example, context);
                     });
    register_backend("fuzz_test_hangs",
                     [](const graph::Graph& g, std::span<const Tensor> example,
                        const BackendContext& context) -> CompiledGraph {
                       while (has_sigmoid(g)) std::this_thread::sleep_for(std::chrono::hours(1));
                       return lookup_backend("eager")(g, example, context);
                     });
  });
}

TEST(FuzzIsolation, ACrashIsChargedToTheConfigurationRunningAndLaterOnesAreSkipped) {
  register_crashing_backends();
  const ProgramResult r = run_program_isolated(
      testing::chain_program(),
      configs_of({"aot_eager", "fuzz_test_aborts", "eager"}, {"static"}, {"default"}), kOneThread);
  ASSERT_FALSE(r.eager_rejected) << r.eager_detail;
  ASSERT_EQ(r.outcomes.size(), 3u);
  EXPECT_EQ(r.outcomes[0].status, Outcome::Status::Pass) << r.outcomes[0].detail;
  EXPECT_EQ(r.outcomes[1].status, Outcome::Status::Error);
  EXPECT_EQ(r.outcomes[1].config.backend, "fuzz_test_aborts");
  EXPECT_EQ(r.outcomes[1].signature(), "error: crashed") << r.outcomes[1].detail;
  EXPECT_NE(r.outcomes[1].detail.find("signal 6"), std::string::npos) << r.outcomes[1].detail;
  EXPECT_EQ(r.outcomes[2].status, Outcome::Status::Skipped);
}

TEST(FuzzIsolation, AHangIsKilledAfterTheTimeout) {
  register_crashing_backends();
  const auto start = std::chrono::steady_clock::now();
  const ProgramResult r = run_program_isolated(
      testing::chain_program(), configs_of({"fuzz_test_hangs"}, {"static"}, {"default"}),
      {.timeout_s = 2, .threads = 1});
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].status, Outcome::Status::Error);
  EXPECT_EQ(r.outcomes[0].detail, "timed out after 2 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(FuzzIsolation, PassingProgramsReportWhatInProcessRunsReport) {
  const Program p = testing::chain_program();
  const auto configs = configs_of({"eager", "aot_eager"}, {"static", "dynamic"}, {"default"});
  const ProgramResult isolated = run_program_isolated(p, configs, kOneThread);
  const ProgramResult in_process = run_program(p, configs);
  ASSERT_EQ(isolated.outcomes.size(), in_process.outcomes.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(isolated.outcomes[i].status, in_process.outcomes[i].status) << configs[i].name();
    EXPECT_EQ(isolated.outcomes[i].detail, in_process.outcomes[i].detail);
  }
}

TEST(FuzzIsolation, EagerRejectionIsNotAFinding) {
  Program p = testing::chain_program();
  p.inputs[1].sizes = {5};  // add([3, 4], [5]) does not broadcast
  const ProgramResult r =
      run_program_isolated(p, configs_of({"eager"}, {"static"}, {"default"}), kOneThread);
  EXPECT_TRUE(r.eager_rejected);
  EXPECT_TRUE(r.outcomes.empty());
  EXPECT_FALSE(run_config_isolated(p, configs_of({"eager"}, {"static"}, {"default"})[0], kOneThread)
                   .has_value());
}

TEST(FuzzIsolation, ACrashingProgramShrinksToTheOpThatCrashes) {
  register_crashing_backends();
  const RunConfig config = configs_of({"fuzz_test_aborts"}, {"static"}, {"default"})[0];
  const Program p = testing::chain_program();
  const std::optional<Outcome> original = run_config_isolated(p, config, kOneThread);
  ASSERT_TRUE(original.has_value());
  ASSERT_EQ(original->signature(), "error: crashed") << original->detail;
  const ShrinkResult r = shrink(
      p,
      [&](const Program& q) {
        const std::optional<Outcome> o = run_config_isolated(q, config, kOneThread);
        return o && o->signature() == original->signature();
      },
      200);
  ASSERT_EQ(r.program.nodes.size(), 1u) << r.program.str();
  EXPECT_EQ(r.program.nodes[0].op, "sigmoid");
}

}  // namespace
}  // namespace kiln::fuzz
