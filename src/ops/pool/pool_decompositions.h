#pragma once
// The 2-d pooling ops written in kiln ops (their decompositions, src/ops/pool/
// pool_decompositions.cpp). Each takes the op's (normalized) arguments and runs the op's checks.
#include <kiln/ops/registry.h>

namespace kiln::ops::pool {

// avg_pool2d: zero-padded windows as an as_strided view, summed, over per-window divisors.
std::vector<Tensor> avg_pool2d_decomposition(const Stack& a);
// avg_pool2d_backward: each window's share added back with index_put(accumulate=True).
std::vector<Tensor> avg_pool2d_backward_decomposition(const Stack& a);
// max_pool2d_with_indices_backward and adaptive_max_pool2d_backward: the gradient added at each
// output's argmax (a scatter-add over the flattened planes); `op` names the op whose checks run.
std::vector<Tensor> max_pool_backward_decomposition(const Stack& a, const char* op,
                                                    size_t indices_at);
// _adaptive_avg_pool2d: every window gathered at the largest window's size (clamped positions,
// masked), summed, over the window sizes.
std::vector<Tensor> adaptive_avg_pool2d_decomposition(const Stack& a);
// _adaptive_avg_pool2d_backward: each window's share added back with index_put(accumulate=True).
std::vector<Tensor> adaptive_avg_pool2d_backward_decomposition(const Stack& a);

}  // namespace kiln::ops::pool
