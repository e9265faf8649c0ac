#include <kiln/distributed/distributed_sampler.h>

#include <kiln/core/error.h>
#include <kiln/distributed/init.h>
#include <kiln/ops/random.h>

namespace kiln::distributed {

DistributedSampler::DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options)
    : dataset_size_(dataset_size),
      num_replicas_(options.num_replicas
                        ? *options.num_replicas
                        : default_process_group("DistributedSampler")->world_size()),
      rank_(options.rank ? *options.rank : default_process_group("DistributedSampler")->rank()),
      shuffle_(options.shuffle),
      seed_(options.seed),
      drop_last_(options.drop_last) {
  KILN_CHECK(dataset_size_ >= 0, "DistributedSampler: dataset_size must be >= 0, got {}",
             dataset_size_);
  KILN_CHECK(num_replicas_ > 0, "DistributedSampler: num_replicas must be positive, got {}",
             num_replicas_);
  KILN_CHECK(rank_ >= 0 && rank_ < num_replicas_,
             "DistributedSampler: invalid rank {}, rank should be in the interval [0, {}]", rank_,
             num_replicas_ - 1);
  // drop_last drops the tail that does not split evenly; otherwise every rank gets the rounded-up
  // share and the list is padded (PyTorch's num_samples).
  num_samples_ = drop_last_ ? dataset_size_ / num_replicas_
                            : (dataset_size_ + num_replicas_ - 1) / num_replicas_;
  total_size_ = num_samples_ * num_replicas_;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order;
  if (shuffle_) {
    // The same generator state on every rank, so every rank shards the same permutation.
    Generator generator(seed_ + static_cast<uint64_t>(epoch_));
    order = randperm(dataset_size_, TensorOptions(kInt64), &generator).tolist<int64_t>();
  } else {
    order.resize(static_cast<size_t>(dataset_size_));
    for (int64_t i = 0; i < dataset_size_; ++i) order[static_cast<size_t>(i)] = i;
  }
  // Pad by repeating from the start (as often as needed), or cut the tail.
  const size_t total = static_cast<size_t>(total_size_);
  for (size_t i = order.size(); i < total && dataset_size_ > 0; ++i)
    order.push_back(order[i % static_cast<size_t>(dataset_size_)]);
  order.resize(total);
  std::vector<int64_t> mine;
  for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(num_replicas_))
    mine.push_back(order[i]);
  return mine;
}

}  // namespace kiln::distributed
