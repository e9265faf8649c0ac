#include "nn/shape_str.h"

#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/linear.h>
#include <kiln/ops/creation.h>

#include <cmath>

namespace kiln::nn {

Linear::Linear(int64_t in_features_, int64_t out_features_, bool bias_)
    : Linear("Linear", in_features_, out_features_, bias_) {}

Linear::Linear(std::string type_name, int64_t in_features_, int64_t out_features_, bool bias_)
    : Module(std::move(type_name)), in_features(in_features_), out_features(out_features_) {
  KILN_CHECK(in_features >= 0 && out_features >= 0,
             "{}: in_features and out_features must be non-negative, got {} and {}", name(),
             in_features, out_features);
  weight = register_parameter("weight", kiln::empty({out_features, in_features}));
  bias = register_parameter("bias", bias_ ? kiln::empty({out_features}) : Tensor());
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) {
  KILN_CHECK(input.dim() >= 1 && input.sym_size(-1) == in_features,
             "{}: expected input with last dim {} (in_features), got shape [{}]", name(),
             in_features, detail::shape_str(input));
  return functional::linear(input, weight, bias);
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features,
                     py_bool(bias.defined()));
}

Bilinear::Bilinear(int64_t in1, int64_t in2, int64_t out, bool bias_)
    : Module("Bilinear"), in1_features(in1), in2_features(in2), out_features(out) {
  weight = register_parameter("weight", kiln::empty({out, in1, in2}));
  bias = register_parameter("bias", bias_ ? kiln::empty({out}) : Tensor());
  reset_parameters();
}

void Bilinear::reset_parameters() {
  double bound = 1.0 / std::sqrt(static_cast<double>(weight.size(1)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor Bilinear::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

std::string Bilinear::extra_repr() const {
  return fmt::format("in1_features={}, in2_features={}, out_features={}, bias={}", in1_features,
                     in2_features, out_features, py_bool(bias.defined()));
}

}  // namespace kiln::nn
