// Softmax and log_softmax over a random dim, layer_norm over the last one or two dims with or
// without an affine weight and bias.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

namespace kiln::fuzz {
namespace {

bool propose_softmax(ProgramBuilder& b, const char* op) {
  const int x = b.pick([](int, const Tensor& t) { return is_float(t); });
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim();
  const int64_t dim = rank == 0 ? 0 : b.rng().uniform(-rank, rank - 1);
  b.add_node(op_node(op, {v(x), lit(dim)}));
  return true;
}

bool propose_layer_norm(ProgramBuilder& b) {
  const int x = b.pick([&](int w, const Tensor& t) {
    return is_float(t) && t.dim() >= 1 && t.size(-1) >= 2 && b.facts(w).max - b.facts(w).min > 0.1;
  });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t n = t.dim() >= 2 && b.rng().chance(0.3) ? 2 : 1;
  std::vector<int64_t> shape(t.sizes().end() - n, t.sizes().end());
  // A row of (nearly) equal values has a variance of rounding noise: its normalized values and
  // gradients are meaningless, so keep clearly varying rows only.
  if (t.numel() > 0) {
    std::vector<int64_t> dims;
    for (int64_t d = t.dim() - n; d < t.dim(); ++d) dims.push_back(d);
    const Tensor row_var = kiln::var(t.to(DType::Float64), dims, Scalar(0.0));
    if (row_var.min().item().to<double>() < 1e-2) return false;
  }
  std::vector<Arg> args = {v(x), lit(shape)};
  if (b.rng().chance(0.6)) {
    args.push_back(v(b.add_input(shape, DType::Float32)));
    args.push_back(b.rng().chance(0.7) ? v(b.add_input(shape, DType::Float32))
                                       : lit(ops::IValue()));
  }
  b.add_node(op_node("layer_norm", std::move(args)));
  return true;
}

}  // namespace

std::vector<Rule> normalization_rules() {
  return {
      {"normalization/softmax", 0.6,
       [](ProgramBuilder& b) { return propose_softmax(b, "softmax.int"); }},
      {"normalization/log_softmax", 0.4,
       [](ProgramBuilder& b) { return propose_softmax(b, "log_softmax.int"); }},
      {"normalization/layer_norm", 0.5, propose_layer_norm},
  };
}

}  // namespace kiln::fuzz
