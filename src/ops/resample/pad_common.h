#pragma once
// What the reflect / replicate / circular pads and their backward ops share: the input position
// each output position reads along a padded dim.
#include <kiln/core/tensor.h>

#include <cstdint>
#include <vector>

namespace kiln::ops::padding {

enum class PadMode { Reflect, Replicate, Circular };

// The input position output position j reads along a dim of size n padded by (lo, hi)
// (negative pads crop).
std::vector<int64_t> pad_source_map(PadMode mode, int64_t n, int64_t lo, int64_t hi);

// The adjoint of a mode pad in kiln ops: grad summed back through the per-dim source maps.
Tensor mode_pad_backward(const Tensor& grad, const Tensor& self, IntList padding, PadMode mode);

}  // namespace kiln::ops::padding
