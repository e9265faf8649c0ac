#include <kiln/nn/dropout.h>
#include <kiln/nn/functional.h>

namespace kiln::nn {

namespace {

void check_p(const char* type_name, double p) {
  KILN_CHECK(p >= 0.0 && p <= 1.0, "{}: dropout probability has to be between 0 and 1, but got {}",
             type_name, p);
}

}  // namespace

Dropout::Dropout(double p_, bool inplace_) : Module("Dropout"), p(p_), inplace(inplace_) {
  check_p("Dropout", p);
}

Tensor Dropout::forward(const Tensor& input) {
  return functional::dropout(input, p, training_, inplace);
}

std::string Dropout::extra_repr() const {
  return fmt::format("p={}, inplace={}", py_float(p), py_bool(inplace));
}

Dropout2d::Dropout2d(double p_, bool inplace_) : Module("Dropout2d"), p(p_), inplace(inplace_) {
  check_p("Dropout2d", p);
}

Tensor Dropout2d::forward(const Tensor& input) {
  Tensor out = functional::dropout2d(input, p, training_);
  if (!inplace) return out;
  Tensor self = input;
  self.copy_(out);
  return self;
}

std::string Dropout2d::extra_repr() const {
  return fmt::format("p={}, inplace={}", py_float(p), py_bool(inplace));
}

}  // namespace kiln::nn
