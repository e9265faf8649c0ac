#pragma once
// float32 convolution gradients through oneDNN: backward-data and backward-weights primitives
// (deconvolution ones for transposed convolutions), cached like the forward's.
#include "ops/conv/conv_params.h"

namespace kiln::ops::conv {

// grad_input = d(conv)/d(input) applied to grad_output. grad_input and grad_output are dense in
// `fmt` (Contiguous or ChannelsLast(3d)), weight dense in any format. Returns false (writing
// nothing) when oneDNN has no implementation for the geometry.
bool onednn_convolution_backward_data(const Tensor& grad_input, const Tensor& grad_output,
                                      const Tensor& weight, const ConvParams& params,
                                      MemoryFormat fmt);

// grad_weight (dense in any format) and grad_bias (contiguous, or undefined to skip) from
// grad_output and input, both dense in `fmt`. Returns false when oneDNN has no implementation.
bool onednn_convolution_backward_weights(const Tensor& grad_weight, const Tensor& grad_bias,
                                         const Tensor& grad_output, const Tensor& input,
                                         const ConvParams& params, MemoryFormat fmt);

}  // namespace kiln::ops::conv
