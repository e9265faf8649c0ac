// The runner and its comparison: a backend that returns eager's results passes; one that is off
// by a little more than rounding, or that raises, is reported; the tolerance follows float32
// eager's own distance from float64.
#include "fuzz/compare.h"
#include "fuzz/runner.h"
#include "fuzz_test_programs.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <mutex>

namespace kiln::fuzz {
namespace {

// Backends wrapping eager's: one scales every float output by (1 + 1e-3), one raises.
void register_faulty_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend("fuzz_test_off",
                     [](const graph::Graph& g, std::span<const Tensor> example,
                        const BackendContext& context) -> CompiledGraph {
                       CompiledGraph run = lookup_backend("eager")(g, example, context);
                       return [run](std::span<const Tensor> inputs) {
                         std::vector<Tensor> outs = run(inputs);
                         for (Tensor& o : outs) {
                           if (o.defined() && is_floating_point(o.dtype())) o = o * 1.001;
                         }
                         return outs;
                       };
                     });
    register_backend(
        "fuzz_test_raises",
        [](const graph::Graph&, std::span<const Tensor>, const BackendContext&) -> CompiledGraph {
          throw Error("fuzz_test_raises: refusing every graph");
        });
  });
}

TEST(FuzzRunner, EagerBackendPassesAndFaultsAreFound) {
  register_faulty_backends();
  const Program p = testing::chain_program();
  const ProgramResult result =
      run_program(p, configs_of({"eager", "aot_eager", "fuzz_test_off", "fuzz_test_raises"},
                                {"static"}, {"default"}));
  ASSERT_FALSE(result.eager_rejected) << result.eager_detail;
  ASSERT_EQ(result.outcomes.size(), 4u);
  EXPECT_EQ(result.outcomes[0].status, Outcome::Status::Pass) << result.outcomes[0].detail;
  EXPECT_EQ(result.outcomes[1].status, Outcome::Status::Pass) << result.outcomes[1].detail;
  EXPECT_EQ(result.outcomes[2].status, Outcome::Status::Mismatch);
  EXPECT_NE(result.outcomes[2].detail.find("output 0"), std::string::npos)
      << result.outcomes[2].detail;
  EXPECT_EQ(result.outcomes[3].status, Outcome::Status::Error);
  EXPECT_NE(result.outcomes[3].detail.find("refusing every graph"), std::string::npos);
}

TEST(FuzzRunner, EagerRunsHaveGradientsOfTheInputsThatRequireThem) {
  const Program p = testing::chain_program();
  const EagerRun e = run_eager(p, DType::Float64);
  ASSERT_EQ(e.grads.size(), 2u);
  EXPECT_TRUE(e.grads[0].defined());
  EXPECT_FALSE(e.grads[1].defined());
  EXPECT_EQ(e.outputs[0].dtype(), DType::Float64);
}

TEST(FuzzRunner, ShapeModesParse) {
  const auto configs = configs_of({"eager"}, {"static", "dynamic", "mark_dynamic"}, {"default"});
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[2].name(), "eager/mark_dynamic/default");
  EXPECT_THROW(configs_of({"eager"}, {"sometimes"}, {"default"}), Error);
}

Tensor floats(std::vector<double> v) { return from_vector(v).to(DType::Float32); }
Tensor doubles(std::vector<double> v) { return from_vector(v); }

TEST(FuzzCompare, ToleranceFollowsEagerRoundingError) {
  const Tolerance tol;  // rtol 1e-5
  const Tensor e32 = floats({1.0, 2.0, 3.0}), e64 = doubles({1.0, 2.0, 3.0});
  EXPECT_EQ(compare(floats({1.0, 2.0, 3.0}), e32, e64, tol), "");
  EXPECT_EQ(compare(floats({1.0, 2.0, 3.00002}), e32, e64, tol), "");
  EXPECT_NE(compare(floats({1.0, 2.0, 3.001}), e32, e64, tol), "");
  // When float32 eager is itself 1e-3 off float64, 3e-3 more is within 4x of that.
  const Tensor inexact64 = doubles({1.0, 2.0, 3.001});
  EXPECT_EQ(compare(floats({1.0, 2.0, 3.003}), e32, inexact64, tol), "");
  EXPECT_NE(compare(floats({1.0, 2.0, 3.01}), e32, inexact64, tol), "");
}

TEST(FuzzCompare, ExactForIntegersAndNonFiniteValues) {
  const Tolerance tol;
  const Tensor i = from_vector(std::vector<int64_t>{1, 2, 3});
  EXPECT_EQ(compare(i, i, i, tol), "");
  EXPECT_NE(compare(from_vector(std::vector<int64_t>{1, 2, 4}), i, i, tol), "");
  const double nan = std::nan(""), inf = INFINITY;
  EXPECT_EQ(compare(floats({nan, inf}), floats({nan, inf}), doubles({nan, inf}), tol), "");
  EXPECT_NE(compare(floats({0, inf}), floats({nan, inf}), doubles({nan, inf}), tol), "");
  EXPECT_NE(compare(floats({nan, -inf}), floats({nan, inf}), doubles({nan, inf}), tol), "");
  EXPECT_NE(compare(floats({1, 2}), floats({1, 2, 3}), doubles({1, 2, 3}), tol), "");
  EXPECT_NE(compare(i, floats({1, 2, 3}), doubles({1, 2, 3}), tol), "");
}

}  // namespace
}  // namespace kiln::fuzz
