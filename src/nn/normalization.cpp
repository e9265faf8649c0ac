#include "nn/shape_str.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/normalization.h>
#include <kiln/ops/creation.h>

namespace kiln::nn {

BatchNormBase::BatchNormBase(std::string type_name, int64_t num_features_, double eps_,
                             std::optional<double> momentum_, bool affine_,
                             bool track_running_stats_, bool use_bias)
    : Module(std::move(type_name)),
      num_features(num_features_),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track_running_stats_) {
  if (affine) {
    weight = register_parameter("weight", kiln::empty({num_features}));
    bias = register_parameter("bias", use_bias ? kiln::empty({num_features}) : Tensor());
  } else {
    weight = register_parameter("weight", Tensor());
    bias = register_parameter("bias", Tensor());
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  } else {
    running_mean = register_buffer("running_mean", Tensor());
    running_var = register_buffer("running_var", Tensor());
    num_batches_tracked = register_buffer("num_batches_tracked", Tensor());
  }
  reset_parameters();
}

void BatchNormBase::reset_running_stats() {
  if (!track_running_stats) return;
  autograd::NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor BatchNormBase::forward(const Tensor& input) {
  check_input_dim(input);
  KILN_CHECK(input.sym_size(1) == num_features,
             "{}: expected input with {} channels (dim 1), got shape [{}]", name(), num_features,
             detail::shape_str(input));
  double factor = momentum.value_or(0.0);
  if (training_ && track_running_stats) {
    {
      autograd::NoGradGuard no_grad;
      num_batches_tracked.add_(1);
    }
    if (!momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  const bool bn_training = training_ || !running_mean.defined();
  // Running statistics are updated in training only when tracked; in eval they normalize.
  const bool pass_stats = !training_ || track_running_stats;
  return functional::batch_norm(input, pass_stats ? running_mean : Tensor(),
                                pass_stats ? running_var : Tensor(), weight, bias, bn_training,
                                factor, eps);
}

std::string BatchNormBase::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, bias={}, track_running_stats={}",
                     num_features, py_float(eps), momentum ? py_float(*momentum) : "None",
                     py_bool(affine), py_bool(bias.defined()), py_bool(track_running_stats));
}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  KILN_CHECK(input.dim() == 2 || input.dim() == 3, "{}: expected 2D or 3D input (got {}D input)",
             name(), input.dim());
}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  KILN_CHECK(input.dim() == 4, "{}: expected 4D input (got {}D input)", name(), input.dim());
}

namespace {

void check_trailing_shape(const std::string& type_name, const Tensor& input,
                          const std::vector<int64_t>& shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  bool ok = input.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i)
    ok = input.sym_size(input.dim() - n + i) == shape[static_cast<size_t>(i)];
  KILN_CHECK(ok, "{}: expected input with trailing shape {}, got shape [{}]", type_name,
             py_tuple(shape), detail::shape_str(input));
}

}  // namespace

LayerNorm::LayerNorm(std::vector<int64_t> normalized_shape_, double eps_, bool elementwise_affine_,
                     bool bias_)
    : Module("LayerNorm"),
      normalized_shape(std::move(normalized_shape_)),
      eps(eps_),
      elementwise_affine(elementwise_affine_) {
  weight =
      register_parameter("weight", elementwise_affine ? kiln::empty(normalized_shape) : Tensor());
  bias = register_parameter("bias",
                            elementwise_affine && bias_ ? kiln::empty(normalized_shape) : Tensor());
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& input) {
  check_trailing_shape(name(), input, normalized_shape);
  return functional::layer_norm(input, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}, bias={}", py_tuple(normalized_shape),
                     py_float(eps), py_bool(elementwise_affine), py_bool(bias.defined()));
}

GroupNorm::GroupNorm(int64_t num_groups_, int64_t num_channels_, double eps_, bool affine_,
                     bool bias_)
    : Module("GroupNorm"),
      num_groups(num_groups_),
      num_channels(num_channels_),
      eps(eps_),
      affine(affine_) {
  KILN_CHECK(num_groups > 0 && num_channels % num_groups == 0,
             "GroupNorm: num_channels ({}) must be divisible by num_groups ({})", num_channels,
             num_groups);
  weight = register_parameter("weight", affine ? kiln::empty({num_channels}) : Tensor());
  bias = register_parameter("bias", affine && bias_ ? kiln::empty({num_channels}) : Tensor());
  reset_parameters();
}

void GroupNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  KILN_CHECK(input.dim() >= 2 && input.sym_size(1) == num_channels,
             "GroupNorm: expected input (N, {}, *), got shape [{}]", num_channels,
             detail::shape_str(input));
  return functional::group_norm(input, num_groups, weight, bias, eps);
}

std::string GroupNorm::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}, bias={}", num_groups, num_channels, py_float(eps),
                     py_bool(affine), py_bool(bias.defined()));
}

RMSNorm::RMSNorm(std::vector<int64_t> normalized_shape_, std::optional<double> eps_,
                 bool elementwise_affine_)
    : Module("RMSNorm"),
      normalized_shape(std::move(normalized_shape_)),
      eps(eps_),
      elementwise_affine(elementwise_affine_) {
  weight =
      register_parameter("weight", elementwise_affine ? kiln::empty(normalized_shape) : Tensor());
  reset_parameters();
}

void RMSNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNorm::forward(const Tensor& input) {
  check_trailing_shape(name(), input, normalized_shape);
  return functional::rms_norm(input, normalized_shape, weight, eps);
}

std::string RMSNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", py_tuple(normalized_shape),
                     eps ? py_float(*eps) : "None", py_bool(elementwise_affine));
}

}  // namespace kiln::nn
