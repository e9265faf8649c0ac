#include <kiln/nn/activation.h>
#include <kiln/nn/functional.h>

namespace kiln::nn {

Tensor InplaceActivation::forward(const Tensor& input) {
  Tensor out = compute(input);
  if (!inplace) return out;
  Tensor self = input;
  self.copy_(out);
  return self;
}

Tensor ReLU::compute(const Tensor& input) const { return functional::relu(input); }

Tensor ReLU::forward(const Tensor& input) {
  if (!inplace) return compute(input);
  Tensor self = input;
  self.relu_();
  return self;
}

Hardtanh::Hardtanh(double min_val_, double max_val_, bool inplace_)
    : Hardtanh("Hardtanh", min_val_, max_val_, inplace_) {}

Hardtanh::Hardtanh(std::string type_name, double min_val_, double max_val_, bool inplace_)
    : InplaceActivation(std::move(type_name), inplace_), min_val(min_val_), max_val(max_val_) {
  KILN_CHECK(max_val > min_val, "{}: max_val ({}) must be greater than min_val ({})", name(),
             max_val, min_val);
}

Tensor Hardtanh::compute(const Tensor& input) const {
  return functional::hardtanh(input, min_val, max_val);
}

std::string Hardtanh::extra_repr() const {
  std::string s = fmt::format("min_val={}, max_val={}", py_float(min_val), py_float(max_val));
  if (inplace) s += ", inplace=True";
  return s;
}

Tensor LeakyReLU::compute(const Tensor& input) const {
  return functional::leaky_relu(input, negative_slope);
}

std::string LeakyReLU::extra_repr() const {
  std::string s = "negative_slope=" + py_float(negative_slope);
  if (inplace) s += ", inplace=True";
  return s;
}

Tensor ELU::compute(const Tensor& input) const { return functional::elu(input, alpha); }

std::string ELU::extra_repr() const {
  std::string s = "alpha=" + py_float(alpha);
  if (inplace) s += ", inplace=True";
  return s;
}

Tensor SiLU::compute(const Tensor& input) const { return functional::silu(input); }
Tensor Mish::compute(const Tensor& input) const { return functional::mish(input); }
Tensor Hardswish::compute(const Tensor& input) const { return functional::hardswish(input); }
Tensor Hardsigmoid::compute(const Tensor& input) const { return functional::hardsigmoid(input); }

GELU::GELU(std::string approximate_) : Module("GELU"), approximate(std::move(approximate_)) {
  KILN_CHECK(approximate == "none" || approximate == "tanh",
             "GELU: approximate must be 'none' or 'tanh', got '{}'", approximate);
}

Tensor GELU::forward(const Tensor& input) { return functional::gelu(input, approximate); }
Tensor Tanh::forward(const Tensor& input) { return functional::tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return functional::sigmoid(input); }

Tensor Softplus::forward(const Tensor& input) {
  return functional::softplus(input, beta, threshold);
}

std::string Softplus::extra_repr() const {
  return fmt::format("beta={}, threshold={}", py_float(beta), py_float(threshold));
}

namespace {

int64_t softmax_dim(std::optional<int64_t> dim, const Tensor& input) {
  if (dim) return *dim;
  const int64_t d = input.dim();
  return (d == 0 || d == 1 || d == 3) ? 0 : 1;
}

std::string dim_repr(std::optional<int64_t> dim) {
  return dim ? fmt::format("dim={}", *dim) : std::string("dim=None");
}

}  // namespace

Tensor Softmax::forward(const Tensor& input) {
  return functional::softmax(input, softmax_dim(dim, input));
}
std::string Softmax::extra_repr() const { return dim_repr(dim); }

Tensor LogSoftmax::forward(const Tensor& input) {
  return functional::log_softmax(input, softmax_dim(dim, input));
}
std::string LogSoftmax::extra_repr() const { return dim_repr(dim); }

}  // namespace kiln::nn
