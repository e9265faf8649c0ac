#include "distributed/collective_fingerprint.h"

#include <fmt/format.h>

namespace kiln::distributed::detail {

std::array<int64_t, CollectiveFingerprint::kWords> CollectiveFingerprint::encode() const {
  return {static_cast<int64_t>(kind), static_cast<int64_t>(dtype), numel, root,
          static_cast<int64_t>(op)};
}

CollectiveFingerprint CollectiveFingerprint::decode(std::span<const int64_t, kWords> words) {
  return {static_cast<CollectiveKind>(words[0]), static_cast<DType>(words[1]), words[2], words[3],
          static_cast<ReduceOp>(words[4])};
}

std::string CollectiveFingerprint::str() const {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return fmt::format("all_reduce ({}) of {} {} elements", reduce_op_name(op), numel,
                         dtype_name(dtype));
    case CollectiveKind::Broadcast:
      return fmt::format("broadcast from rank {} of {} {} elements", root, numel,
                         dtype_name(dtype));
    case CollectiveKind::AllGather:
      return fmt::format("all_gather of {} {} elements per rank", numel, dtype_name(dtype));
    case CollectiveKind::ReduceScatter:
      return fmt::format("reduce_scatter ({}) of {} {} elements", reduce_op_name(op), numel,
                         dtype_name(dtype));
    case CollectiveKind::Barrier:
      return "barrier";
  }
  return fmt::format("an unknown collective (kind {})", static_cast<int64_t>(kind));
}

}  // namespace kiln::distributed::detail
