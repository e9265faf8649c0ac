#pragma once
// The loop of the one-pass optimizer kernels (*.kernel.cpp): whole vectors in parallel, then a
// scalar tail, so that a tail only ever sits at the end of the tensor, as in the elementwise ops
// whose results those kernels reproduce.
#include <kiln/core/parallel.h>

#include <algorithm>
#include <cstdint>

namespace kiln::optim::detail {

// vector_body(i) for i = 0, W, 2W, ... below n - n % W (in parallel), then scalar_body(i) for
// the rest.
template <int64_t W, typename VectorBody, typename ScalarBody>
void parallel_vectors(int64_t n, const VectorBody& vector_body, const ScalarBody& scalar_body) {
  const int64_t vectors = n / W;
  parallel_for(0, vectors, std::max<int64_t>(1, kGrainSize / W), [&](int64_t v0, int64_t v1) {
    for (int64_t i = v0 * W; i < v1 * W; i += W) vector_body(i);
  });
  for (int64_t i = vectors * W; i < n; ++i) scalar_body(i);
}

}  // namespace kiln::optim::detail
