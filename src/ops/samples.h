#pragma once
// Helpers for op-info samples: deterministic inputs of a given shape and dtype, and the standard
// sample sets (contiguous, non-contiguous, broadcast, 0-dim, empty) that op families share.
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops {

// Deterministic values in [low, high) (integers for integral dtypes, 0/1 for bool), from a
// fixed-seed generator independent of kiln's random ops.
Tensor make_sample(IntList sizes, DType dtype, double low = -3.0, double high = 3.0,
                   uint64_t seed = 0);

// A non-contiguous tensor with the given sizes (a transposed or strided view of a larger one).
Tensor make_noncontiguous_sample(IntList sizes, DType dtype, double low = -3.0, double high = 3.0,
                                 uint64_t seed = 0);

// One-input samples: 2-D, non-contiguous, 0-dim, empty, and a larger 1-D input that crosses
// the SIMD width and tail; values in [low, high).
std::vector<Sample> unary_samples(DType dtype, double low = -3.0, double high = 3.0);

// Two-input samples: same shape, broadcasting both ways, a wrapped scalar, 0-dim, empty,
// non-contiguous. `extra` arguments are appended to each sample.
std::vector<Sample> binary_samples(DType dtype, double low = -3.0, double high = 3.0,
                                   const Stack& extra = {});

}  // namespace kiln::ops
