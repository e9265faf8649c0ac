// Every unary op with a derivative against central finite differences in float64: the gradient
// of sum(f(x) * v) for a fixed random v, element by element.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace kiln {
namespace {

struct Domain {
  const char* op;
  double low, high;
};

// Inputs inside each op's smooth domain (away from kinks and poles).
const Domain kDomains[] = {
    {"neg", -2, 2},     {"abs", 0.5, 2},        {"exp", -2, 2},       {"exp2", -2, 2},
    {"expm1", -2, 2},   {"log", 0.5, 3},        {"log2", 0.5, 3},     {"log10", 0.5, 3},
    {"log1p", -0.5, 3}, {"sqrt", 0.5, 3},       {"rsqrt", 0.5, 3},    {"sin", -2, 2},
    {"cos", -2, 2},     {"tan", -1, 1},         {"asin", -0.8, 0.8},  {"acos", -0.8, 0.8},
    {"atan", -2, 2},    {"sinh", -2, 2},        {"cosh", -2, 2},      {"tanh", -2, 2},
    {"asinh", -2, 2},   {"acosh", 1.5, 3},      {"atanh", -0.8, 0.8}, {"erf", -2, 2},
    {"erfc", -2, 2},    {"erfinv", -0.8, 0.8},  {"sigmoid", -3, 3},   {"reciprocal", 0.5, 3},
    {"square", -2, 2},  {"frac", 0.1, 0.9},     {"relu", 0.5, 2},     {"silu", -3, 3},
    {"mish", -3, 3},    {"hardsigmoid", -2, 2}, {"hardswish", -2, 2},
};

TEST(GradcheckUnary, EveryDifferentiableUnaryOpMatchesFiniteDifferences) {
  manual_seed(3);
  for (const Domain& d : kDomains) {
    SCOPED_TRACE(d.op);
    const ops::OpDef& op = ops::OpRegistry::instance().get(d.op);
    ASSERT_TRUE(static_cast<bool>(op.derivative));
    Tensor x0 = rand({7}, kFloat64) * (d.high - d.low) + d.low;
    Tensor v = randn({7}, kFloat64);
    auto f = [&](const Tensor& x) { return (ops::call1(op, {x}) * v).sum().item<double>(); };
    Tensor x = x0.clone().requires_grad_();
    (ops::call1(op, {x}) * v).sum().backward();
    const std::vector<double> analytic = x.grad().tolist<double>();
    const std::vector<double> base = x0.tolist<double>();
    const double eps = 1e-6;
    for (size_t i = 0; i < base.size(); ++i) {
      std::vector<double> plus = base, minus = base;
      plus[i] += eps;
      minus[i] -= eps;
      const double numeric = (f(from_vector(plus)) - f(from_vector(minus))) / (2 * eps);
      EXPECT_NEAR(analytic[i], numeric, 1e-6 + 1e-5 * std::abs(numeric)) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln
