// Registry-wide autograd tests: every differentiable op has a derivative, and on every op-info
// sample (in float64) the gradient autograd computes equals central finite differences of
// sum(output_i * v_i) for fixed random v_i.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include "opinfo_selection.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "test_util.h"

namespace kiln {
namespace {

using ops::IValue;
using ops::OpDef;
using ops::OpRegistry;
using ops::Stack;

bool has_tensor_argument(const OpDef& op) {
  for (const auto& a : op.schema.arguments) {
    if (a.type == ops::ArgType::Tensor || a.type == ops::ArgType::TensorList) return true;
  }
  return false;
}

// Ops recorded by autograd with their own node: composites are differentiated through the ops
// they call, factories have no tensor input. An op may instead be differentiated through its
// decomposition (backward ops with fast kernels do this for double backward).
bool needs_own_derivative(const OpDef& op) {
  return op.variant == ops::Variant::Functional && op.differentiable &&
         op.kind != ops::OpKind::Composite && has_tensor_argument(op);
}

TEST(GradcheckOpInfo, EveryDifferentiableOpHasADerivative) {
  std::vector<std::string> missing;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (needs_own_derivative(*op) && !op->derivative && !op->decomposition) {
      missing.push_back(op->full_name());
    }
  }
  EXPECT_TRUE(missing.empty()) << missing.size() << " differentiable ops without a derivative: "
                               << fmt::format("{}", fmt::join(missing, ", "));
}

// Non-smooth points the samples may hit on purpose are avoided by these ops' own tests; here
// they are skipped with the reason.
const std::set<std::string> kNotGradchecked = {
    // Outputs are piecewise constant in the inputs: the derivative is zero almost everywhere
    // and finite differences straddle the jumps the samples place on purpose.
    "round",
    "floor",
    "ceil",
    "trunc",
    "sign",
    "frac",
    "remainder",
    "fmod",
    "floor_divide",
    // PyTorch's convention for a draw from a tensor-parameterized distribution is a zero
    // gradient (not the reparameterized one finite differences see).
    "normal",
};

// KILN_GRADCHECK_OPS=a,b,c restricts the sample walk to those ops (full names), for working on
// a few derivatives at a time.
bool selected(const OpDef& op) { return testing::selected_by("KILN_GRADCHECK_OPS", op); }

// A float64 copy of every floating tensor argument (contiguous, so elements can be nudged), the
// rest unchanged; the copies to differentiate are returned in `leaves`.
Stack to_float64(const Stack& args, std::vector<Tensor>& leaves) {
  auto convert = [&](const Tensor& t) {
    if (!t.defined() || !t.is_floating_point() || t.impl()->is_wrapped_number()) return t;
    Tensor c = t.to(kFloat64).contiguous().clone();
    leaves.push_back(c);
    return c;
  };
  Stack out;
  for (const IValue& v : args) {
    if (v.is_tensor()) {
      out.emplace_back(convert(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> items;
      for (const Tensor& t : v.to_tensor_list()) items.push_back(convert(t));
      out.emplace_back(std::move(items));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

// sum_i sum(outputs_i * v_i) over the floating outputs; random ops reseed so that every
// evaluation draws the same numbers.
Tensor objective(const OpDef& op, const Stack& args, std::vector<Tensor>& weights) {
  if (op.is_random) manual_seed(1234);
  std::vector<Tensor> outs;
  if (!op.schema.arguments.empty() && op.schema.arguments[0].is_mutable) {
    // An op that writes its first argument (copy_, fill_) may not write a leaf: it writes a
    // copy, through which the gradient reaches the leaf.
    Stack copied = args;
    copied[0] = IValue(args[0].to_tensor().clone());
    outs = ops::call(op, copied);
  } else {
    outs = ops::call(op, args);
  }
  Tensor total;
  size_t w = 0;
  for (const Tensor& o : outs) {
    if (!o.defined() || !o.is_floating_point()) continue;
    // Finite differences need float64 outputs (a sample may ask for another dtype).
    if (o.dtype() != kFloat64) return Tensor();
    if (w == weights.size()) weights.push_back(randn(o.sizes(), kFloat64));
    Tensor term = (o * weights[w++]).sum();
    total = total.defined() ? total + term : term;
  }
  return total;
}

// Up to `count` flat indices spread over [0, n).
std::vector<int64_t> probe_indices(int64_t n, int64_t count) {
  std::vector<int64_t> out;
  if (n <= count) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
  } else {
    for (int64_t k = 0; k < count; ++k) out.push_back(k * (n - 1) / (count - 1));
  }
  return out;
}

TEST(GradcheckOpInfo, EverySampleMatchesFiniteDifferences) {
  int checked_samples = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->differentiable || !op->samples) continue;
    if (!has_tensor_argument(*op) || kNotGradchecked.count(op->name())) continue;
    if (!selected(*op)) continue;
    for (const ops::Sample& s : op->samples()) {
      if (!s.differentiable_point) continue;
      SCOPED_TRACE(op->full_name() + " [" + s.description + "]");
      manual_seed(7);
      std::vector<Tensor> leaves;
      Stack args = to_float64(s.args, leaves);
      if (leaves.empty()) continue;
      std::vector<Tensor> weights;
      Tensor base;
      try {
        autograd::NoGradGuard no_grad;
        base = objective(*op, args, weights);
      } catch (const Error&) {
        continue;  // error samples and float64-less ops are the op tests' business
      }
      // No float64 output, or a sample of infinities and NaNs: nothing to difference.
      // Values near float64's range (nan_to_num's replacements) swamp a 1e-6 step.
      if (!base.defined() || !std::isfinite(base.item<double>()) ||
          std::abs(base.item<double>()) > 1e10) {
        continue;
      }

      for (Tensor& leaf : leaves) leaf.requires_grad_(true);
      std::vector<Tensor> grads;
      try {
        Tensor loss = objective(*op, args, weights);
        grads = autograd::grad({loss}, leaves, {}, std::nullopt, false, /*allow_unused=*/true);
      } catch (const Error& e) {
        ADD_FAILURE() << "backward failed: " << e.what();
      }
      for (Tensor& leaf : leaves) leaf.requires_grad_(false);
      if (grads.empty()) continue;

      autograd::NoGradGuard no_grad;
      const double eps = 1e-6;
      for (size_t l = 0; l < leaves.size(); ++l) {
        double* data = leaves[l].data_ptr<double>();
        std::vector<double> analytic = grads[l].defined()
                                           ? grads[l].contiguous().tolist<double>()
                                           : std::vector<double>(leaves[l].numel(), 0.0);
        ASSERT_EQ(static_cast<int64_t>(analytic.size()), leaves[l].numel());
        for (int64_t j : probe_indices(leaves[l].numel(), 12)) {
          const double saved = data[j];
          data[j] = saved + eps;
          const double plus = objective(*op, args, weights).item<double>();
          data[j] = saved - eps;
          const double minus = objective(*op, args, weights).item<double>();
          data[j] = saved;
          const double numeric = (plus - minus) / (2 * eps);
          // A NaN gradient where the function is undefined nearby (kl_div at a zero target, as
          // PyTorch's) matches a NaN difference.
          if (std::isnan(analytic[j]) && std::isnan(numeric)) continue;
          EXPECT_NEAR(analytic[j], numeric, 1e-5 + 1e-3 * std::abs(numeric))
              << "input " << l << " element " << j;
        }
      }
      ++checked_samples;
    }
  }
  if (std::getenv("KILN_GRADCHECK_OPS") == nullptr) {
    EXPECT_GT(checked_samples, 100);
  }
}

}  // namespace
}  // namespace kiln
