#pragma once
// The arguments of the one-pass optimizer updates (adam_kernel.h, sgd_kernel.h on the CPU; a
// device layer's multi-tensor kernels, device_updates.h): plain structs with no kiln headers, so
// that device compilers (nvcc) can read them too.
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

}  // namespace kiln::optim::detail
