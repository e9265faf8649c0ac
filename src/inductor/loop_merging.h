#pragma once
// Adjacent loops that every index of a nest reads as one run of memory become one loop: an NCHW
// tensor's H and W (W = 7 to 56 wide: short vector loops, long scalar tails) run as one loop
// over H * W. Applied after fusion, so it never changes which kernels share loops.
#include "inductor/loop_ir.h"

namespace kiln::inductor {

// Loops shorter than this are merged with the loop around them (where the indexing allows). A
// symbolic range is judged by its hint (the example's size): whether to merge is a heuristic,
// that the merged loop reads the same elements is proven for every size.
inline constexpr int64_t kShortLoop = 256;

// Merges, in every nest without local buffers: for nests of pointwise kernels only, the last
// shared loop with the kernels' vector loop; for each reduction, its last two reduction loops.
// Each merge needs every load and store affine in both variables with the outer one's
// coefficient equal to the inner one's times its range, and the inner range below kShortLoop.
void merge_contiguous_loops(Program& program);

// Merges reduction loops `d` and `d + 1` of `k` into one where every index reads them as one run
// of memory (any range); returns whether it did. Split reductions (reduction_splitting.h) merge a
// channels-last batch norm's [N, H, W] before choosing a split.
bool merge_reduction_pair(Kernel& k, size_t d, const SizeFacts& facts);

}  // namespace kiln::inductor
