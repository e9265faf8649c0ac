#pragma once
// What a rank is about to run: compared across ranks before each collective so that ranks that
// disagree (different ops, sizes, dtypes or roots) get a kiln::Error naming the difference.
// Without the check Gloo would mix up their messages, and a size mismatch aborts the process
// from Gloo's event loop thread, which no caller can catch.
#include <kiln/core/dtype.h>
#include <kiln/distributed/reduce_op.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace kiln::distributed::detail {

enum class CollectiveKind : int64_t {
  AllReduce = 1,
  Broadcast,
  AllGather,
  ReduceScatter,
  Barrier,
};

struct CollectiveFingerprint {
  CollectiveKind kind = CollectiveKind::Barrier;
  DType dtype = DType::Float32;
  int64_t numel = 0;
  int64_t root = -1;  // broadcast's src
  ReduceOp op = ReduceOp::Sum;

  static constexpr size_t kWords = 5;
  std::array<int64_t, kWords> encode() const;
  static CollectiveFingerprint decode(std::span<const int64_t, kWords> words);
  std::string str() const;  // e.g. "all_reduce (Sum) of 3 float32 elements"
  bool operator==(const CollectiveFingerprint&) const = default;
};

}  // namespace kiln::distributed::detail
