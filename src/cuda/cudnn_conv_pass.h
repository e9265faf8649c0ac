#pragma once
// One pass of a convolution through cuDNN: its graph API first (cudnn_graph_conv.h: the engines
// PyTorch's plans run), else its legacy convolution API, the choice made once per problem. A pass
// is one of the three cuDNN runs of a forward convolution y = conv(x, w): Forward (writes y),
// BackwardData (writes x from y) and BackwardFilter (writes w from x and y).
//
// Legacy API: the first call of a problem (pass, dtype, device, sizes, parameters and the math
// switches) asks cuDNN for its algorithms -- its heuristics, or timing runs of each (cudnnFind)
// with kiln::cuda::set_cudnn_benchmark(true), as PyTorch's torch.backends.cudnn.benchmark -- and
// keeps the descriptors, the algorithm that ran and its workspace size; later calls only allocate
// the workspace and run. Asking the heuristics took longer on the host than resnet18's convolutions
// took on the GPU.
#include "ops/conv/conv_params.h"

#include <kiln/core/tensor.h>

namespace kiln::cuda {

enum class ConvPass { Forward, BackwardData, BackwardFilter };

// Runs `pass` with x, w, y contiguous (or, 4-d, dense in channels-last order: NHWC tensors and
// filter, as cuDNN's tensor-core kernels for 16-bit types read them), of one cuDNN dtype, sizes
// fitting cuDNN's ints. With `accumulate` the filter pass adds to w. False when cuDNN has no
// kernel for the problem (nothing useful is written then).
bool run_cudnn_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                    const ops::conv::ConvParams& p, bool accumulate, const char* op);

// Problems whose plan or algorithm is cached, in either API (for tests).
size_t cudnn_conv_plans_cached();

}  // namespace kiln::cuda
