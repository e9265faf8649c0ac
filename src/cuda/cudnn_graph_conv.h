#pragma once
// One convolution pass through cuDNN's graph API (the backend API PyTorch reaches through
// cudnn-frontend): an operation graph of the one convolution, the engine configurations cuDNN's
// heuristics rank for it, and an execution plan of the first that builds -- or, benchmarking, of
// the fastest of the first ten (PyTorch's torch.backends.cudnn.benchmark_limit). The legacy API's
// eight algorithms leave out most of the engines cuDNN 9 has (resnet18's 16-bit convolutions ran
// about twice as long through them as through PyTorch's plans).
//
// Plans are kept per problem, handle (a thread's) and operand alignment; a problem with no plan
// is remembered too, and the caller runs the legacy API then.
#include "cuda/cudnn_conv_pass.h"
#include "cuda/cudnn_conv_problem.h"

#include <kiln/core/tensor.h>

#include <cstddef>

namespace kiln::cuda {

// Runs `pass` as run_cudnn_pass describes; `problem` is conv_problem_key's for these arguments
// (the caller's, which the legacy API reads too). False when the graph API has no engine for the
// problem (nothing is written then); raises on a cuDNN failure that is not an unsupported problem.
bool run_cudnn_graph_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                          const ops::conv::ConvParams& p, bool accumulate, bool tf32, bool timed,
                          const ConvProblemKey& problem);

// Problems with an execution plan, and problems the graph API has none for (for tests).
size_t cudnn_graph_plans_cached();
size_t cudnn_graph_problems_without_plan();

}  // namespace kiln::cuda
