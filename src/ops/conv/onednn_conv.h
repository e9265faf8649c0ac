#pragma once
// float32 convolutions through oneDNN (convolution_forward, deconvolution_forward for transposed),
// with the primitives cached across calls.
#include "ops/conv/conv_params.h"

#include <cstddef>

namespace kiln::ops::conv {

// out = conv(input, weight) (+ bias), all float32 on the CPU. input and out are dense in `fmt`
// (Contiguous or ChannelsLast(3d)); weight is dense in any format; bias is contiguous or
// undefined. Returns false (writing nothing) when oneDNN has no implementation for the geometry.
bool onednn_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                        const Tensor& bias, const ConvParams& params, MemoryFormat fmt);

// Primitives currently cached (for tests of the cache's reuse and bound).
size_t onednn_cache_size();
inline constexpr size_t kOnednnCacheCapacity = 256;

}  // namespace kiln::ops::conv
