#pragma once
// SGD with momentum on one float32 parameter in a single pass over its three tensors (parameter,
// gradient, momentum buffer) instead of three elementwise ops (8 tensor reads and writes per
// step against 5). The float operations and their order are sgd.cpp's ops': identical results.
#include "ops/cpu/capability.h"
#include "optim/update_args.h"

namespace kiln::optim::detail {

using SGDUpdateKernel = void(const SGDUpdateArgs& args);
extern cpu::KernelDispatch<SGDUpdateKernel> sgd_update_kernels;

}  // namespace kiln::optim::detail
