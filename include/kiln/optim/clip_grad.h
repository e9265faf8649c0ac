#pragma once
// Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (libtorch keeps them
// in torch::nn::utils; kiln exposes them from kiln::optim and kiln::nn::utils alike).
#include <kiln/core/tensor.h>

#include <vector>

namespace kiln::optim {

// Scales every defined .grad in place so that their joint norm (the norm of the vector of their
// norms) is at most max_norm; returns that total norm before clipping, a 0-dim tensor.
// norm_type may be infinity. With error_if_nonfinite a NaN or infinite total norm raises
// kiln::Error instead of scaling.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
// Clamps every defined .grad in place to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace kiln::optim

namespace kiln::nn::utils {
using kiln::optim::clip_grad_norm_;
using kiln::optim::clip_grad_value_;
}  // namespace kiln::nn::utils
