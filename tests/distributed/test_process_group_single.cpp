// The default process group in this process, as a world of one: what every collective does with
// a single rank, and the errors that bad calls raise before anything is sent.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "distributed/error_message.h"

#include <cstdlib>

namespace kiln::distributed {
namespace {

using namespace std::chrono_literals;

// A world of one, its store hosted here on a free port.
class DistributedSingleRank : public ::testing::Test {
 protected:
  void SetUp() override {
    InitOptions options;
    options.rank = 0;
    options.world_size = 1;
    options.master_addr = "127.0.0.1";
    options.master_port = 0;
    options.timeout = 5s;
    init_process_group(options);
  }
  void TearDown() override { destroy_process_group(); }
};

TEST_F(DistributedSingleRank, CollectivesOfOneRank) {
  EXPECT_TRUE(is_initialized());
  EXPECT_EQ(get_rank(), 0);
  EXPECT_EQ(get_world_size(), 1);
  EXPECT_EQ(get_backend(), "gloo");
  Tensor t = arange(4, TensorOptions(kFloat64));
  all_reduce(t, ReduceOp::Avg);
  EXPECT_EQ(t.tolist<double>(), (std::vector<double>{0, 1, 2, 3}));
  Tensor i = full({3}, 7, TensorOptions(kInt32));
  Work work = all_reduce(i, ReduceOp::Max, /*async_op=*/true);
  work.wait();
  EXPECT_TRUE(work.is_completed());
  EXPECT_TRUE(work.is_success());
  EXPECT_EQ(i.tolist<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  std::vector<Tensor> out = {zeros({3}, TensorOptions(kInt32))};
  all_gather(out, i);
  EXPECT_EQ(out[0].tolist<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  Tensor scattered = zeros({3}, TensorOptions(kInt32));
  reduce_scatter(scattered, {i});
  EXPECT_EQ(scattered.tolist<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  broadcast(t, 0);
  barrier();
}

TEST_F(DistributedSingleRank, BadTensorsRaiseBeforeSending) {
  Tensor matrix = zeros({2, 3});
  Tensor transposed = matrix.transpose(0, 1);
  EXPECT_ERROR_MENTIONS(all_reduce(transposed), "must be contiguous");
  Tensor flags = zeros({2}, TensorOptions(kBool));
  EXPECT_ERROR_MENTIONS(all_reduce(flags), "dtype bool");
  Tensor integers = zeros({2}, TensorOptions(kInt64));
  EXPECT_ERROR_MENTIONS(all_reduce(integers, ReduceOp::Avg), "ReduceOp::Avg");
  Tensor undefined;
  EXPECT_ERROR_MENTIONS(all_reduce(undefined), "undefined");
  EXPECT_ERROR_MENTIONS(broadcast(matrix, 1), "src must be a rank in [0, 1), got 1");
  std::vector<Tensor> two = {zeros({2, 3}), zeros({2, 3})};
  EXPECT_ERROR_MENTIONS(all_gather(two, matrix), "one output tensor per rank (1), got 2");
  std::vector<Tensor> wrong_size = {zeros({5})};
  EXPECT_ERROR_MENTIONS(all_gather(wrong_size, matrix), "has 5 elements");
  std::vector<Tensor> wrong_dtype = {zeros({2, 3}, TensorOptions(kFloat64))};
  EXPECT_ERROR_MENTIONS(all_gather(wrong_dtype, matrix), "expected float32");
  Tensor small = zeros({4});
  EXPECT_ERROR_MENTIONS(all_gather_into_tensor(small, matrix), "expected 6");
  EXPECT_ERROR_MENTIONS(reduce_scatter_tensor(small, matrix), "expected 4");
  // The group still works after rejected calls.
  Tensor ok = ones({2});
  all_reduce(ok);
  EXPECT_EQ(ok.tolist<double>(), (std::vector<double>{1, 1}));
}

TEST_F(DistributedSingleRank, SecondInitIsRejected) {
  InitOptions again;
  again.rank = 0;
  again.world_size = 1;
  again.master_port = 0;
  EXPECT_ERROR_MENTIONS(init_process_group(again), "already initialized");
}

TEST(DistributedInit, UninitializedGroupIsAClearError) {
  destroy_process_group();  // a no-op without a group
  EXPECT_FALSE(is_initialized());
  Tensor t = ones({2});
  EXPECT_ERROR_MENTIONS(all_reduce(t), "all_reduce: the default process group is not initialized");
  EXPECT_ERROR_MENTIONS(get_rank(), "get_rank: the default process group is not initialized");
  EXPECT_ERROR_MENTIONS(barrier(), "init_process_group");
}

TEST(DistributedInit, UnknownBackendNamesTheAvailableOnes) {
  InitOptions options;
  options.rank = 0;
  options.world_size = 1;
  options.backend = "mpi";
  EXPECT_ERROR_MENTIONS(init_process_group(options),
                        "unknown backend 'mpi'; available: 'gloo' (CPU tensors) and 'nccl'");
  EXPECT_FALSE(is_initialized());
}

TEST(DistributedInit, MissingRankNamesTheVariable) {
  if (std::getenv("RANK") != nullptr) GTEST_SKIP() << "RANK is set in this environment";
  InitOptions options;
  options.world_size = 2;
  EXPECT_ERROR_MENTIONS(init_process_group(options), "environment variable RANK is not set");
  options.rank = 2;
  EXPECT_ERROR_MENTIONS(init_process_group(options), "rank must be in [0, 2)");
}

}  // namespace
}  // namespace kiln::distributed
