// Collectives across real processes on loopback: kiln_dist_worker runs each rank (see
// launch_ranks.h) and the values it reports are checked against ones worked out by hand.
#include <gtest/gtest.h>

#include "distributed/gpu_ranks.h"
#include "distributed/launch_ranks.h"

#include <numeric>
#include <string>
#include <vector>

namespace kiln::testing {
namespace {

std::vector<double> repeat(double v, size_t n) { return std::vector<double>(n, v); }

void expect_collectives(const std::string& scenario, int world) {
  auto results = launch_ranks(scenario, world);
  ASSERT_EQ(results.size(), static_cast<size_t>(world));
  const double n = world;
  const double sum = n * (n + 1) / 2;
  double factorial = 1;
  for (int i = 2; i <= world; ++i) factorial *= i;
  for (int rank = 0; rank < world; ++rank) {
    const auto& r = results[rank];
    SCOPED_TRACE("rank " + std::to_string(rank) + " of " + std::to_string(world));
    ASSERT_EQ(r.exit_code, 0) << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_EQ(r.at("rank"), repeat(rank, 1));
    EXPECT_EQ(r.at("world_size"), repeat(n, 1));
    EXPECT_EQ(r.at("local_rank"), repeat(rank, 1));
    for (std::string dtype : {"float32", "int64"}) {
      SCOPED_TRACE(dtype);
      EXPECT_EQ(r.at("all_reduce_sum_" + dtype), repeat(sum, 3));
      EXPECT_EQ(r.at("all_reduce_max_" + dtype), repeat(n, 3));
      EXPECT_EQ(r.at("all_reduce_min_" + dtype), repeat(1, 3));
      EXPECT_EQ(r.at("all_reduce_product_" + dtype), repeat(factorial, 3));
      EXPECT_EQ(r.at("broadcast_" + dtype), (std::vector<double>{20, 21, 22, 23}));
      std::vector<double> gathered;
      for (int i = 0; i < world; ++i) gathered.insert(gathered.end(), {double(i), 100.0 + i});
      EXPECT_EQ(r.at("all_gather_" + dtype), gathered);
      EXPECT_EQ(r.at("all_gather_into_tensor_" + dtype), gathered);
      EXPECT_EQ(r.at("reduce_scatter_" + dtype), repeat((rank + 1) * sum, 2));
      double offset = n * (n - 1) / 2;
      EXPECT_EQ(r.at("reduce_scatter_tensor_" + dtype),
                (std::vector<double>{n * (2 * rank) + offset, n * (2 * rank + 1) + offset}));
    }
    EXPECT_EQ(r.at("all_reduce_avg_float32"), repeat((n + 1) / 2, 4));
    for (std::string dtype : {"float16", "bfloat16"}) {
      EXPECT_EQ(r.at("all_reduce_sum_" + dtype), repeat(sum, 3)) << dtype;
      EXPECT_EQ(r.at("all_reduce_avg_" + dtype), repeat(n + 1, 3)) << dtype;
    }
    EXPECT_EQ(r.at("async_in_order"), repeat(1, 1));
    EXPECT_EQ(r.at("async_values"), (std::vector<double>{sum, 2 * sum, 3 * sum, 4 * sum, 5 * sum}));
    EXPECT_EQ(r.at("done"), repeat(1, 1));
  }
}

// Rank, world size and the master's address all come from the environment (as torchrun sets it).
TEST(DistributedMultiProcess, CollectivesTwoRanksFromEnvironment) {
  expect_collectives("collectives", 2);
}

TEST(DistributedMultiProcess, CollectivesFourRanksFromEnvironment) {
  expect_collectives("collectives", 4);
}

// The same collectives on the nccl backend, each rank's tensors on its GPU (cuda:LOCAL_RANK).
TEST(CudaDistributedNcclMultiProcess, CollectivesTwoRanks) {
  KILN_SKIP_WITHOUT_GPUS(2);
  expect_collectives("nccl_collectives", 2);
}

TEST(CudaDistributedNcclMultiProcess, CollectivesFourRanks) {
  KILN_SKIP_WITHOUT_GPUS(4);
  expect_collectives("nccl_collectives", 4);
}

TEST(DistributedMultiProcess, ExplicitStoreAndRanks) {
  auto results = launch_ranks("explicit_store", 2);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_EQ(r.at("all_reduce_sum"), repeat(4.5, 2));
    EXPECT_EQ(r.at("joined"), repeat(2, 1));
  }
}

void expect_rendezvous_timeout(const std::string& scenario) {
  auto results = launch_ranks(scenario, 2, /*ranks=*/{0});
  ASSERT_EQ(results.size(), 1u);
  const auto& r = results[0];
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.errors.size(), 1u) << "init_process_group succeeded without rank 1";
  EXPECT_NE(r.errors[0].find("timeout of 2000 ms"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("timed out"), std::string::npos) << r.errors[0];
  ASSERT_EQ(r.at("elapsed_ms").size(), 1u);
  EXPECT_GE(r.at("elapsed_ms")[0], 1500);
  EXPECT_LT(r.at("elapsed_ms")[0], 5000);
}

TEST(DistributedMultiProcess, PeerThatNeverStartsTimesOut) {
  expect_rendezvous_timeout("peer_never_arrives");
}

// Rank 0 alone on its GPU: the store or NCCL's own initialization waits for rank 1, and the
// group's timeout ends it (a blocking NCCL communicator would wait forever).
TEST(CudaDistributedNcclMultiProcess, PeerThatNeverStartsTimesOut) {
  KILN_SKIP_WITHOUT_GPUS(1);
  expect_rendezvous_timeout("nccl_peer_never_arrives");
}

void expect_dead_peer_fails(const std::string& scenario) {
  auto results = launch_ranks(scenario, 2);
  ASSERT_EQ(results.size(), 2u);
  const auto& r = results[0];
  ASSERT_EQ(r.exit_code, 0) << (r.errors.empty() ? "" : r.errors.front());
  ASSERT_EQ(r.errors.size(), 1u) << "all_reduce succeeded without rank 1";
  EXPECT_NE(r.errors[0].find("all_reduce"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("timeout 2000 ms"), std::string::npos) << r.errors[0];
  ASSERT_EQ(r.at("elapsed_ms").size(), 1u);
  EXPECT_LT(r.at("elapsed_ms")[0], 5000);
}

TEST(DistributedMultiProcess, PeerThatDiesFailsTheCollective) {
  expect_dead_peer_fails("peer_dies");
}

TEST(CudaDistributedNcclMultiProcess, PeerThatDiesFailsTheCollective) {
  KILN_SKIP_WITHOUT_GPUS(2);
  expect_dead_peer_fails("nccl_peer_dies");
}

void expect_stalled_peer_times_out(const std::string& scenario) {
  auto results = launch_ranks(scenario, 2);
  ASSERT_EQ(results.size(), 2u);
  const auto& r = results[0];
  ASSERT_EQ(r.exit_code, 0) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_EQ(r.at("completed_at_once"), repeat(0, 1));
  ASSERT_EQ(r.errors.size(), 1u) << "all_reduce succeeded while rank 1 stalled";
  EXPECT_NE(r.errors[0].find("timeout 1000 ms"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("all_reduce (Sum) of 4 float32 elements"), std::string::npos)
      << r.errors[0];
  EXPECT_EQ(r.at("success"), repeat(0, 1));
  ASSERT_EQ(r.at("elapsed_ms").size(), 1u);
  EXPECT_GE(r.at("elapsed_ms")[0], 900);
  EXPECT_LT(r.at("elapsed_ms")[0], 3000);  // before rank 1 wakes up and exits
}

TEST(DistributedMultiProcess, PeerThatStallsTimesOutTheAsyncCollective) {
  expect_stalled_peer_times_out("peer_stalls");
}

TEST(CudaDistributedNcclMultiProcess, PeerThatStallsTimesOutTheAsyncCollective) {
  KILN_SKIP_WITHOUT_GPUS(2);
  expect_stalled_peer_times_out("nccl_peer_stalls");
}

TEST(DistributedMultiProcess, RanksThatDisagreeOnSizesGetAnError) {
  auto results = launch_ranks("mismatched_sizes", 2);
  ASSERT_EQ(results.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    const auto& r = results[rank];
    ASSERT_EQ(r.exit_code, 0) << (r.errors.empty() ? "" : r.errors.front());
    ASSERT_EQ(r.errors.size(), 1u) << "the mismatched all_reduce succeeded on rank " << rank;
    EXPECT_NE(r.errors[0].find("the ranks disagree"), std::string::npos) << r.errors[0];
    EXPECT_NE(r.errors[0].find(rank == 0 ? "rank 1 runs all_reduce (Sum) of 5 float32"
                                         : "rank 0 runs all_reduce (Sum) of 3 float32"),
              std::string::npos)
        << r.errors[0];
  }
}

}  // namespace
}  // namespace kiln::testing
