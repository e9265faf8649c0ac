#include "distributed/bucket_assignment.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <map>

namespace kiln::distributed::detail {

std::vector<std::vector<size_t>> assign_buckets(const std::vector<Tensor>& tensors,
                                                const std::vector<size_t>& size_limits_bytes) {
  KILN_CHECK(!size_limits_bytes.empty(), "assign_buckets: expected at least one size limit");
  struct OpenBucket {
    std::vector<size_t> positions;
    size_t bytes = 0;
    size_t limit_index = 0;
  };
  std::map<DType, OpenBucket> open;  // one bucket filling per dtype
  std::vector<std::vector<size_t>> buckets;
  for (size_t i = 0; i < tensors.size(); ++i) {
    OpenBucket& bucket = open[tensors[i].dtype()];
    bucket.positions.push_back(i);
    bucket.bytes += static_cast<size_t>(tensors[i].numel()) * itemsize(tensors[i].dtype());
    if (bucket.bytes >= size_limits_bytes[bucket.limit_index]) {
      buckets.push_back(std::move(bucket.positions));
      bucket.positions.clear();
      bucket.bytes = 0;
      bucket.limit_index = std::min(bucket.limit_index + 1, size_limits_bytes.size() - 1);
    }
  }
  for (auto& [dtype, bucket] : open)
    if (!bucket.positions.empty()) buckets.push_back(std::move(bucket.positions));
  std::sort(buckets.begin(), buckets.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return buckets;
}

}  // namespace kiln::distributed::detail
