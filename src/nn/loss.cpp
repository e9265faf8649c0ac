#include <kiln/nn/functional.h>
#include <kiln/nn/loss.h>

namespace kiln::nn {

// The registered buffers are the tensors the options hold, so to(dtype) and
// load_state_dict reach them.
CrossEntropyLoss::CrossEntropyLoss(CrossEntropyOptions options_)
    : Loss("CrossEntropyLoss"), options(std::move(options_)) {
  if (options.weight.defined()) options.weight = register_buffer("weight", options.weight);
}

Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, options);
}

NLLLoss::NLLLoss(NllLossOptions options_) : Loss("NLLLoss"), options(std::move(options_)) {
  if (options.weight.defined()) options.weight = register_buffer("weight", options.weight);
}

Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, options);
}

Tensor MSELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, reduction);
}

Tensor L1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::l1_loss(input, target, reduction);
}

Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::smooth_l1_loss(input, target, options);
}

Tensor HuberLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::huber_loss(input, target, options);
}

BCELoss::BCELoss(BinaryCrossEntropyOptions options_)
    : Loss("BCELoss"), options(std::move(options_)) {
  if (options.weight.defined()) options.weight = register_buffer("weight", options.weight);
}

Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, options);
}

BCEWithLogitsLoss::BCEWithLogitsLoss(BinaryCrossEntropyWithLogitsOptions options_)
    : Loss("BCEWithLogitsLoss"), options(std::move(options_)) {
  if (options.weight.defined()) options.weight = register_buffer("weight", options.weight);
  if (options.pos_weight.defined())
    options.pos_weight = register_buffer("pos_weight", options.pos_weight);
}

Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target, options);
}

Tensor KLDivLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::kl_div(input, target, options);
}

}  // namespace kiln::nn
