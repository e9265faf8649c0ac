#pragma once
// The convolution op's geometry: its list arguments expanded to the spatial rank, the checks
// PyTorch makes (with its wording), the output sizes of forward and transposed convolutions, and
// the memory format the output takes.
#include "ops/sizes_str.h"

#include <kiln/ops/registry.h>

#include <cstdint>
#include <vector>

namespace kiln::ops::conv {

// The non-tensor arguments of convolution, each list of length `spatial` (1, 2 or 3).
struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;

  int64_t spatial() const { return static_cast<int64_t>(stride.size()); }
};

// Reads convolution's arguments 3..8 from its stack, expanding one-element lists to the weight's
// spatial rank and checking signs (non-positive stride/dilation/groups, negative padding).
ConvParams read_params(const Stack& args, int64_t spatial);

// Checks input/weight/bias against each other and params, and returns the output's sizes
// (N, C_out, spatial...). Reads metadata only.
SymDimVector output_sizes(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          const ConvParams& params);

// Channels-last output when the input or the weight is channels-last (4-d or 5-d), as PyTorch's
// CPU convolutions decide; Contiguous otherwise.
MemoryFormat output_format(const Tensor& input, const Tensor& weight);

using ops::sizes_str;

}  // namespace kiln::ops::conv
