#pragma once
// The interface of the max pooling kernels (pooling.cu): plain structs, as launch.h, so that nvcc
// parses no kiln headers.
#include "cuda/kernels/launch.h"

#include <cstdint>

namespace kiln::cuda::kernels {

// One 2-d max pooling over a dense input, planes layout (N, C, H, W) or channels last
// (N, H, W, C); output and indices have the input's layout and out_h x out_w planes.
struct MaxPool2d {
  int64_t batch = 1, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  // The window of max_pool2d; ignored when `adaptive` (output cell (i, j) then covers rows
  // [floor(i * H / OH), ceil((i + 1) * H / OH)) and columns likewise).
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  bool adaptive = false;
  bool channels_last = false;
};

// out = the maximum of each window, indices = its h * W + w within the plane: the first maximum
// in window order (rows, then columns); a NaN replaces the running maximum, so the last NaN of a
// window wins, as in the CPU kernels. `type` is any kiln dtype but bool. `indices` may be null
// (values only).
void max_pool2d(ScalarType type, const MaxPool2d& g, const void* in, void* out, int64_t* indices,
                cudaStream_t stream);

// grad_in (zeroed here) += grad_out scattered to the positions `indices` name, with atomic adds
// where windows overlap. grad_in and grad_out are float32 or float64 (`type`), in g's layout.
void max_pool2d_backward(ScalarType type, const MaxPool2d& g, const void* grad_out,
                         const int64_t* indices, void* grad_in, cudaStream_t stream);

}  // namespace kiln::cuda::kernels
