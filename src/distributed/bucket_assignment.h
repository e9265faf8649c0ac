#pragma once
// How DistributedDataParallel groups gradients into buckets (PyTorch's
// compute_bucket_assignment_by_size): tensors are taken in the given order, a bucket holds one
// dtype, and a bucket closes once it holds at least its size limit (so one large tensor can
// exceed it). The k-th bucket closed for a dtype uses size_limits[k] (the last one repeats), which
// lets the first bucket be smaller.
#include <kiln/core/tensor.h>

#include <cstddef>
#include <vector>

namespace kiln::distributed::detail {

// Buckets as lists of positions in `tensors`, ordered by the first position each holds.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<Tensor>& tensors,
                                                const std::vector<size_t>& size_limits_bytes);

}  // namespace kiln::distributed::detail
