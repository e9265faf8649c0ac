#pragma once
// Convolution by im2col + GEMM (col2im for transposed), for the dtypes and geometries oneDNN does
// not take: float64 always, float32 where oneDNN has no implementation.
#include "ops/conv/conv_params.h"

namespace kiln::ops::conv {

// out = conv(input, weight) (+ bias); input, weight, out contiguous (row-major) of one dtype,
// float32 or float64; bias contiguous or undefined. 1 to 3 spatial dims.
void gemm_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                      const Tensor& bias, const ConvParams& params);

}  // namespace kiln::ops::conv
