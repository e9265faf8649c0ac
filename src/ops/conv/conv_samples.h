#pragma once
// Op-info samples for the convolution family (also run against PyTorch by the oracle).
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops::conv {

std::vector<Sample> convolution_samples();
// conv{k}d; `padding_mode`: the .padding overload ("same"/"valid").
std::vector<Sample> conv_nd_samples(int64_t spatial, bool padding_mode);
std::vector<Sample> conv_transpose_nd_samples(int64_t spatial);

}  // namespace kiln::ops::conv
