#pragma once
// The Adam(W) update of one float32 parameter in a single pass over its four tensors (parameter,
// gradient, both moments), instead of the eight elementwise ops of torch.optim's single-tensor
// path (each a pass of its own: 21 tensor reads and writes per step against 7). Every element
// takes the same float operations, in the same order, as those ops (adam_update.h): the results
// are identical, only the memory traffic drops.
#include "ops/cpu/capability.h"

#include <cstdint>

namespace kiln::optim::detail {

struct AdamUpdateArgs {
  float* param = nullptr;
  const float* grad = nullptr;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  int64_t n = 0;
  // AdamW's decoupled decay: param *= param_scale first (when decay_param).
  bool decay_param = false;
  float param_scale = 1;
  // Adam's coupled decay: d = (negate_grad ? -grad : grad) + grad_decay * param (when
  // decay_grad); otherwise d = grad.
  bool decay_grad = false;
  bool negate_grad = false;
  float grad_decay = 0;
  // First moment: lerp(exp_avg, d, lerp_weight) when lerp_form, else exp_avg * beta1 +
  // first_scale * d (the maximize path without coupled decay).
  bool lerp_form = true;
  float lerp_weight = 0, beta1 = 0, first_scale = 0;
  // Second moment: exp_avg_sq * beta2 + second_scale * d * d.
  float beta2 = 0, second_scale = 0;
  // param += neg_step_size * exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps).
  float bias_correction2_sqrt = 1, eps = 0, neg_step_size = 0;
};

using AdamUpdateKernel = void(const AdamUpdateArgs& args);
extern cpu::KernelDispatch<AdamUpdateKernel> adam_update_kernels;

}  // namespace kiln::optim::detail
