#pragma once
// SGD with momentum on one float32 parameter in a single pass over its three tensors (parameter,
// gradient, momentum buffer) instead of three elementwise ops (8 tensor reads and writes per
// step against 5). The float operations and their order are sgd.cpp's ops': identical results.
#include "ops/cpu/capability.h"

#include <cstdint>

namespace kiln::optim::detail {

struct SGDUpdateArgs {
  float* param = nullptr;
  const float* grad = nullptr;
  float* momentum_buffer = nullptr;
  int64_t n = 0;
  // Weight decay: d = (negate_grad ? -grad : grad) + grad_decay * param (when decay_grad);
  // otherwise d = grad.
  bool decay_grad = false;
  bool negate_grad = false;
  float grad_decay = 0;
  // buf = buf * momentum + buf_scale * d.
  float momentum = 0, buf_scale = 0;
  // param += grad_step * d + buf_step * buf (nesterov), or param += buf_step * buf.
  bool nesterov = false;
  float grad_step = 0, buf_step = 0;
};

using SGDUpdateKernel = void(const SGDUpdateArgs& args);
extern cpu::KernelDispatch<SGDUpdateKernel> sgd_update_kernels;

}  // namespace kiln::optim::detail
