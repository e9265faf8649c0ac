#pragma once
// DistributedSampler: which dataset indices each rank takes in an epoch
// (torch.utils.data.distributed.DistributedSampler). Every rank computes the same permutation
// (seeded with seed + epoch) and takes every num_replicas-th index from its rank on, so the ranks'
// shards are disjoint and together cover the dataset. Unless drop_last, the list is padded by
// repeating its start so that every rank gets as many indices; with drop_last the tail that does
// not divide evenly is dropped.
#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::distributed {

struct DistributedSamplerOptions {
  std::optional<int> num_replicas;  // default: the default group's world size
  std::optional<int> rank;          // default: the default group's rank
  bool shuffle = true;
  uint64_t seed = 0;  // must be the same on every rank
  bool drop_last = false;
};

class DistributedSampler {
 public:
  explicit DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options = {});

  // This rank's indices for the current epoch, size() of them.
  std::vector<int64_t> indices() const;
  // How many indices each rank gets per epoch (PyTorch's len(sampler)).
  int64_t size() const { return num_samples_; }
  // The shuffle's epoch: call before each epoch so that the order changes between epochs.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }

 private:
  int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t epoch_ = 0;
  int64_t num_samples_;
  int64_t total_size_;
};

}  // namespace kiln::distributed
