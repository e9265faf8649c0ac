#pragma once
// When the one-pass optimizer kernels (adam_kernel.h, sgd_kernel.h) may stand in for a step's
// elementwise ops.
#include <kiln/core/tensor.h>

#include <functional>
#include <initializer_list>

namespace kiln::optim::detail {

// Whether no dispatch mode records the step's ops (a capture or an aot trace: the ops are what it
// records) and every tensor is a real dense float32 CPU tensor of the first one's sizes, on a
// storage of its own (the kernels read each element of each tensor once, then write).
bool one_pass_applies(std::initializer_list<std::reference_wrapper<const Tensor>> tensors);

}  // namespace kiln::optim::detail
