#pragma once
// The Adam(W) update of one float32 parameter in a single pass over its four tensors (parameter,
// gradient, both moments), instead of the eight elementwise ops of torch.optim's single-tensor
// path (each a pass of its own: 21 tensor reads and writes per step against 7). Every element
// takes the same float operations, in the same order, as those ops (adam_update.h): the results
// are identical, only the memory traffic drops.
#include "ops/cpu/capability.h"
#include "optim/update_args.h"

namespace kiln::optim::detail {

using AdamUpdateKernel = void(const AdamUpdateArgs& args);
extern cpu::KernelDispatch<AdamUpdateKernel> adam_update_kernels;

}  // namespace kiln::optim::detail
