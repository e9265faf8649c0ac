#pragma once
// 16-bit convolutions on the CPU as float32 ones. kiln's CPU kernels for a bfloat16 or float16
// convolution (and its backward) widen the operands to float32, run oneDNN's float32 kernels and
// round the results once; the compiled graph says so in nodes: casts of the operands, a float32
// convolution, casts of the results. The values stay eager's, and the float32 passes apply: a
// frozen weight's cast folds into a constant that is pre-packed, the activations go
// channels-last, and the casts fuse into the generated kernels beside them.
#include <kiln/graph/graph.h>

namespace kiln::inductor {

// Rewrites every CPU `convolution` and `convolution_backward` node whose tensors are all bfloat16
// or all float16; returns how many.
size_t widen_half_float_convolutions(graph::Graph& graph);

}  // namespace kiln::inductor
