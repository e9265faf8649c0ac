#pragma once
// float32 convolutions through oneDNN (convolution_forward, deconvolution_forward for transposed),
// with the primitives cached across calls.
#include "ops/conv/conv_params.h"

#include <cstddef>

namespace kiln::ops::conv {

// What a convolution applies to its result before writing it (a oneDNN post-op: the output is
// written once, activated).
enum class ConvActivation { None, Relu };

// out = activation(conv(input, weight) (+ bias)), all float32 on the CPU. input and out are dense
// in `fmt` (Contiguous or ChannelsLast(3d)); weight is dense in any format; bias is contiguous or
// undefined. Returns false (writing nothing) when oneDNN has no implementation for the geometry.
// `packed` (optional): the weight already in the primitive's layout (onednn_pack_weight); used
// instead of reordering `weight` when its layout is the one this geometry's primitive wants.
bool onednn_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                        const Tensor& bias, const ConvParams& params, MemoryFormat fmt,
                        const Tensor& packed = {},
                        ConvActivation activation = ConvActivation::None);

// A packed weight (a uint8 tensor): the oneDNN layout's descriptor, then the weight in it, for
// the forward convolution of `input`'s geometry (sizes only are read; activations in `fmt`) into
// `out`'s. Its size in bytes, or 0 when the primitive reads the weight as it is (nothing to pack)
// or oneDNN has no kernel for the geometry.
int64_t onednn_packed_weight_bytes(const Tensor& out, const Tensor& input, const Tensor& weight,
                                   bool has_bias, const ConvParams& params, MemoryFormat fmt);
// Fills `packed` (uint8, onednn_packed_weight_bytes long). When the geometry's layout no longer
// has that size (another thread count chose another layout), writes a header matching no layout,
// and the convolution reorders `weight` as usual.
void onednn_pack_weight(const Tensor& packed, const Tensor& out, const Tensor& input,
                        const Tensor& weight, bool has_bias, const ConvParams& params,
                        MemoryFormat fmt);

// Primitives currently cached (for tests of the cache's reuse and bound).
size_t onednn_cache_size();
inline constexpr size_t kOnednnCacheCapacity = 256;

}  // namespace kiln::ops::conv
