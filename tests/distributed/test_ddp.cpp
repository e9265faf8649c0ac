// DistributedDataParallel across real processes: each rank of kiln_dist_worker trains a DDP
// replica on its slice of a batch and compares it with a model it trains itself, in one process,
// on the whole batch (see the ddp_* scenarios in dist_worker.cpp).
#include <gtest/gtest.h>

#include "distributed/gpu_ranks.h"
#include "distributed/launch_ranks.h"

#include <string>
#include <vector>

namespace kiln::testing {
namespace {

// Relative agreement with the single-process reference after three float32 steps.
constexpr double kTolerance = 1e-6;
// On GPUs: cuBLAS may pick other kernels (other summation orders) for a rank's half batch than
// for the whole one.
constexpr double kGpuTolerance = 1e-5;

std::string first_error(const RankResult& r) { return r.errors.empty() ? "" : r.errors.front(); }

// Fills *results with what the ranks reported (for further checks).
void expect_matches_reference(const std::string& scenario, int world,
                              std::vector<RankResult>* results_out = nullptr,
                              double tolerance = kTolerance) {
  auto results = launch_ranks(scenario, world);
  if (results_out != nullptr) *results_out = results;
  ASSERT_EQ(results.size(), static_cast<size_t>(world));
  for (int rank = 0; rank < world; ++rank) {
    const auto& r = results[rank];
    SCOPED_TRACE(scenario + ", rank " + std::to_string(rank) + " of " + std::to_string(world));
    ASSERT_EQ(r.exit_code, 0) << first_error(r);
    EXPECT_TRUE(r.errors.empty()) << first_error(r);
    ASSERT_EQ(r.at("relative_error").size(), 1u);
    EXPECT_LE(r.at("relative_error")[0], tolerance);
    EXPECT_EQ(r.at("done"), std::vector<double>{1});
  }
}

TEST(DistributedDDP, MlpMatchesSingleProcessTwoRanks) {
  std::vector<RankResult> results;
  expect_matches_reference("ddp_mlp", 2, &results);
  // The replicas start from their own seeds: after construction they hold rank 0's weights.
  for (const auto& r : results) {
    ASSERT_EQ(r.at("initial_error").size(), 1u);
    EXPECT_EQ(r.at("initial_error")[0], 0);
    EXPECT_EQ(r.at("buckets"), std::vector<double>{1});  // 1 MB holds the whole MLP
  }
}

TEST(DistributedDDP, MlpMatchesSingleProcessFourRanks) { expect_matches_reference("ddp_mlp", 4); }

// kiln::compile(ddp): the wrapped MLP's graph cut at DDP's buckets (a 20-byte cap: a piece per
// Linear layer, the view of its weight kept with the layer), each piece compiled forward and
// backward by the inductor or aot_eager, the buckets reduced from the pieces' gradients.
TEST(DistributedDDP, CompiledMatchesSingleProcessTwoRanks) {
  for (const std::string scenario : {"ddp_compiled", "ddp_compiled_aot_eager"}) {
    std::vector<RankResult> results;
    expect_matches_reference(scenario, 2, &results);
    for (const auto& r : results) EXPECT_EQ(r.at("pieces"), std::vector<double>{3}) << scenario;
  }
}

TEST(DistributedDDP, TinyBucketsMatchSingleProcess) {
  // 4-8-8-3 (Linear layers at Sequential indices 4, 2, 0) under a 20-byte cap, last parameters
  // first: [4.bias (12 bytes), 4.weight], [2.bias], [2.weight], [0.bias], [0.weight].
  for (int world : {2, 4}) {
    std::vector<RankResult> results;
    expect_matches_reference("ddp_tiny_buckets", world, &results);
    for (const auto& r : results) EXPECT_EQ(r.at("buckets"), std::vector<double>{5});
  }
}

TEST(DistributedDDP, NoSyncAccumulatesLikeTheFullBatch) {
  auto results = launch_ranks("ddp_no_sync", 2);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << first_error(r);
    ASSERT_EQ(r.at("relative_error").size(), 1u);
    EXPECT_LE(r.at("relative_error")[0], kTolerance);
    // Under no_sync the gradient is this rank's own (what a model without DDP computes).
    ASSERT_EQ(r.at("no_sync_gradient_error").size(), 1u);
    EXPECT_LE(r.at("no_sync_gradient_error")[0], 1e-7);
  }
}

TEST(DistributedDDP, FindUnusedParametersWithABranchNotTaken) {
  auto results = launch_ranks("ddp_unused_branch", 2);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << first_error(r);
    EXPECT_TRUE(r.errors.empty()) << first_error(r);
    EXPECT_EQ(r.at("skipped_grad_is_zero"), std::vector<double>{1});
    EXPECT_EQ(r.at("skipped_change"), std::vector<double>{0});
    ASSERT_EQ(r.at("relative_error").size(), 1u);
    EXPECT_LE(r.at("relative_error")[0], kTolerance);
  }
}

TEST(DistributedDDP, BuffersComeFromRankZeroBeforeEachForward) {
  auto results = launch_ranks("ddp_buffers", 2);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << first_error(r);
    ASSERT_EQ(r.at("buffer_error").size(), 1u);
    EXPECT_LE(r.at("buffer_error")[0], kTolerance);
    EXPECT_EQ(r.at("done"), std::vector<double>{1});
  }
}

// `failed_collective`: how the error names the all-reduce that failed.
void expect_killed_rank_fails_the_others(const std::string& scenario,
                                         const std::string& failed_collective) {
  auto results = launch_ranks(scenario, 2);
  ASSERT_EQ(results.size(), 2u);
  const auto& r = results[0];
  ASSERT_EQ(r.exit_code, 0) << first_error(r);
  EXPECT_EQ(r.at("first_step"), std::vector<double>{1});
  EXPECT_TRUE(r.at("completed").empty()) << "training went on without rank 1";
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("DistributedDataParallel: reducing gradient bucket"),
            std::string::npos)
      << r.errors[0];
  EXPECT_NE(r.errors[0].find(failed_collective), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("1500 ms"), std::string::npos) << r.errors[0];
  ASSERT_EQ(r.at("elapsed_ms").size(), 1u);
  EXPECT_LT(r.at("elapsed_ms")[0], 5000);
  EXPECT_NE(results[1].exit_code, 0);  // killed
}

TEST(DistributedDDP, RankKilledMidTrainingFailsTheOthersWithinTheTimeout) {
  expect_killed_rank_fails_the_others("ddp_rank_killed", "all_reduce");
}

// ---- the same on the nccl backend, one GPU per rank ----

TEST(CudaDistributedNcclDDP, MlpMatchesSingleProcessTwoRanks) {
  KILN_SKIP_WITHOUT_GPUS(2);
  std::vector<RankResult> results;
  expect_matches_reference("nccl_ddp_mlp", 2, &results, kGpuTolerance);
  for (const auto& r : results) {
    ASSERT_EQ(r.at("initial_error").size(), 1u);
    EXPECT_EQ(r.at("initial_error")[0], 0);
  }
}

TEST(CudaDistributedNcclDDP, TinyBucketsAndCompiledMatchSingleProcess) {
  KILN_SKIP_WITHOUT_GPUS(2);
  std::vector<RankResult> results;
  expect_matches_reference("nccl_ddp_tiny_buckets", 2, &results, kGpuTolerance);
  for (const auto& r : results) EXPECT_EQ(r.at("buckets"), std::vector<double>{5});
  expect_matches_reference("nccl_ddp_compiled", 2, &results, kGpuTolerance);
  for (const auto& r : results) EXPECT_EQ(r.at("pieces"), std::vector<double>{3});
}

TEST(CudaDistributedNcclDDP, NoSyncUnusedParametersAndBuffers) {
  KILN_SKIP_WITHOUT_GPUS(2);
  for (const std::string scenario : {"nccl_ddp_no_sync", "nccl_ddp_unused_branch"}) {
    auto results = launch_ranks(scenario, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
      ASSERT_EQ(r.exit_code, 0) << scenario << ": " << first_error(r);
      ASSERT_EQ(r.at("relative_error").size(), 1u) << scenario;
      EXPECT_LE(r.at("relative_error")[0], kGpuTolerance) << scenario;
    }
  }
  auto results = launch_ranks("nccl_ddp_buffers", 2);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << first_error(r);
    ASSERT_EQ(r.at("buffer_error").size(), 1u);
    EXPECT_LE(r.at("buffer_error")[0], kGpuTolerance);
  }
}

// The killed rank's peer learns of it from the watchdog's timeout: the bucket's all-reduce of
// the first backward after the kill is raised by that backward's end or, when the host ran
// ahead of the GPU, by the next forward (DDP waits there for the previous step's buckets).
TEST(CudaDistributedNcclDDP, RankKilledMidTrainingFailsTheOthersWithinTheTimeout) {
  KILN_SKIP_WITHOUT_GPUS(2);
  expect_killed_rank_fails_the_others("nccl_ddp_rank_killed", "ProcessGroupNccl: all_reduce");
}

}  // namespace
}  // namespace kiln::testing
