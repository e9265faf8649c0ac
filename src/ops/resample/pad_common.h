#pragma once
// What the reflect / replicate / circular pads and their backward ops share: the input position
// each output position reads along a padded dim.
#include <kiln/core/tensor.h>

#include <cstdint>
#include <vector>

namespace kiln::ops::padding {

enum class PadMode { Reflect, Replicate, Circular };

// Raises unless every (lo, hi) pair suits mode on self's dims (reflect: pads below the size;
// circular: no double wrap; every mode: an output size of at least 1).
void check_mode_pads(const Tensor& self, IntList padding, PadMode mode, const char* op);

// The input position output position j reads along a dim of size n padded by (lo, hi)
// (negative pads crop).
std::vector<int64_t> pad_source_map(PadMode mode, int64_t n, int64_t lo, int64_t hi);

// The same as an int64 tensor, computed with arange arithmetic (decompositions hold no host
// data).
Tensor pad_source_index(PadMode mode, int64_t n, int64_t lo, int64_t hi, Device device);

// The adjoint of a mode pad in kiln ops: grad summed back through the per-dim source maps.
Tensor mode_pad_backward(const Tensor& grad, const Tensor& self, IntList padding, PadMode mode);

// The pads in kiln ops (their decompositions; arguments already checked): constant_pad_nd as
// slices and cat of full() blocks, the mode pads as an index along each padded dim.
Tensor constant_pad_decomposition(const Tensor& self, SymIntList pad, const Scalar& value);
Tensor mode_pad_decomposition(const Tensor& self, IntList padding, PadMode mode);

}  // namespace kiln::ops::padding
