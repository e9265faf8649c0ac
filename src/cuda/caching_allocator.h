#pragma once
// The CUDA caching allocator's internals shared with the rest of the layer.
#include <cstddef>

namespace kiln::cuda {

// Sizes the cache hands out: up to 1 MiB rounded up to 512 bytes, larger ones to 2 MiB.
inline constexpr size_t kSmallLimit = size_t{1} << 20;
inline constexpr size_t kSmallRound = 512;
inline constexpr size_t kLargeRound = size_t{2} << 20;
constexpr size_t rounded_size(size_t nbytes) {
  const size_t r = nbytes <= kSmallLimit ? kSmallRound : kLargeRound;
  return (nbytes + r - 1) / r * r;
}

}  // namespace kiln::cuda
