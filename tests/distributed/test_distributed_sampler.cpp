// DistributedSampler: each rank's indices, worked out by hand from PyTorch's rules (pad by
// repeating the start, or drop the tail; rank r takes every num_replicas-th index from r).
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <numeric>

namespace kiln::distributed {
namespace {

using Indices = std::vector<int64_t>;

DistributedSamplerOptions ordered(int num_replicas, int rank, bool drop_last = false) {
  DistributedSamplerOptions options;
  options.num_replicas = num_replicas;
  options.rank = rank;
  options.shuffle = false;
  options.drop_last = drop_last;
  return options;
}

TEST(DistributedSampler, PadsByRepeatingTheStart) {
  // 10 indices over 3 ranks: 4 each, 0..9 then 0, 1.
  const std::vector<Indices> want = {{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}};
  for (int rank = 0; rank < 3; ++rank) {
    DistributedSampler sampler(10, ordered(3, rank));
    EXPECT_EQ(sampler.size(), 4);
    EXPECT_EQ(sampler.indices(), want[rank]) << "rank " << rank;
  }
  // More ranks than indices: 0, 1, 0, 1.
  const std::vector<Indices> tiny = {{0}, {1}, {0}, {1}};
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(DistributedSampler(2, ordered(4, rank)).indices(), tiny[rank]) << "rank " << rank;
  // Padding longer than the list repeats it whole: 3 indices over 8 ranks: 0 1 2 0 1 2 0 1.
  const Indices wrapped = {0, 1, 2, 0, 1, 2, 0, 1};
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_EQ(DistributedSampler(3, ordered(8, rank)).indices(), Indices{wrapped[rank]});
}

TEST(DistributedSampler, DropLastDropsTheTail) {
  const std::vector<Indices> want = {{0, 3, 6}, {1, 4, 7}, {2, 5, 8}};
  for (int rank = 0; rank < 3; ++rank) {
    DistributedSampler sampler(10, ordered(3, rank, /*drop_last=*/true));
    EXPECT_EQ(sampler.size(), 3);
    EXPECT_EQ(sampler.indices(), want[rank]) << "rank " << rank;
  }
  EXPECT_EQ(DistributedSampler(2, ordered(4, 3, true)).indices(), Indices{});
  // Evenly divisible: drop_last changes nothing.
  EXPECT_EQ(DistributedSampler(6, ordered(2, 1, true)).indices(), (Indices{1, 3, 5}));
}

TEST(DistributedSampler, ShuffleIsOnePermutationSharedByTheRanks) {
  const int replicas = 4;
  const int64_t n = 12;
  for (int64_t epoch : {0, 1}) {
    // Interleaving the ranks' shards gives back the permutation: randperm seeded seed + epoch.
    Generator generator(5 + epoch);
    const Indices permutation = randperm(n, TensorOptions(kInt64), &generator).tolist<int64_t>();
    Indices interleaved(n);
    for (int rank = 0; rank < replicas; ++rank) {
      DistributedSamplerOptions options;
      options.num_replicas = replicas;
      options.rank = rank;
      options.seed = 5;
      DistributedSampler sampler(n, options);
      sampler.set_epoch(epoch);
      Indices mine = sampler.indices();
      ASSERT_EQ(mine.size(), 3u);
      for (size_t k = 0; k < mine.size(); ++k) interleaved[k * replicas + rank] = mine[k];
    }
    EXPECT_EQ(interleaved, permutation) << "epoch " << epoch;
    Indices sorted = interleaved;
    std::sort(sorted.begin(), sorted.end());
    Indices all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all);
  }
  // Another epoch, another order.
  DistributedSamplerOptions options;
  options.num_replicas = 1;
  options.rank = 0;
  DistributedSampler sampler(50, options);
  Indices first = sampler.indices();
  sampler.set_epoch(1);
  EXPECT_NE(sampler.indices(), first);
  sampler.set_epoch(0);
  EXPECT_EQ(sampler.indices(), first);
}

TEST(DistributedSampler, BadArgumentsAreErrors) {
  try {
    DistributedSampler(10, ordered(2, 2));
    FAIL() << "rank 2 of 2 did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid rank 2, rank should be in the interval [0, 1]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(DistributedSampler(10, ordered(0, 0)), Error);
  // Without num_replicas and rank, the default group supplies them, and there is none.
  ASSERT_FALSE(is_initialized());
  EXPECT_THROW(DistributedSampler(10, DistributedSamplerOptions{}), Error);
}

}  // namespace
}  // namespace kiln::distributed
