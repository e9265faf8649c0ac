// Pointwise unary ops, taken from the registry: every functional op whose only required argument
// is one tensor and whose op-info samples are pointwise (output sizes = input sizes). Each op's
// domain is read from its float32 samples (they are drawn from the op's valid range, e.g. [0.1, 5)
// for log), its accepted dtypes from which dtypes its samples use. What the registry cannot say,
// where an op jumps or bends, is the table below.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

#include <cmath>
#include <map>
#include <set>

namespace kiln::fuzz {
namespace {

// Where an op's value jumps (a comparison of values close to such a point may flip between eager
// and compiled rounding) or its derivative does (a gradient would flip).
enum class Breaks { None, AtZero, AtIntegers, AtHalfIntegers, AtPlusMinusOne, AtPlusMinusThree };

const std::map<std::string, Breaks> kBreaks = {
    {"abs", Breaks::AtZero},
    {"sign", Breaks::AtZero},
    {"relu", Breaks::AtZero},
    {"leaky_relu", Breaks::AtZero},
    {"floor", Breaks::AtIntegers},
    {"ceil", Breaks::AtIntegers},
    {"trunc", Breaks::AtIntegers},
    {"frac", Breaks::AtIntegers},
    {"round", Breaks::AtHalfIntegers},
    {"hardtanh", Breaks::AtPlusMinusOne},
    {"hardsigmoid", Breaks::AtPlusMinusThree},
    {"hardswish", Breaks::AtPlusMinusThree},
    {"logical_not", Breaks::AtZero},
    {"relu6", Breaks::AtZero},
    {"elu", Breaks::AtZero},
    {"celu", Breaks::AtZero},
    {"selu", Breaks::AtZero},
    {"signbit", Breaks::AtZero},
};

// Registry ops of that form that are not pointwise or not for this family (reductions, views and
// data-dependent sizes have their own families or graph-break on purpose).
const std::set<std::string> kNotUnary = {"clone",
                                         "contiguous",
                                         "t",
                                         "sum",
                                         "mean",
                                         "prod",
                                         "amax",
                                         "amin",
                                         "max",
                                         "min",
                                         "argmax",
                                         "argmin",
                                         "any",
                                         "all",
                                         "nonzero",
                                         "squeeze",
                                         "numel",
                                         "std.correction",
                                         "var.correction",
                                         "var_mean.correction",
                                         "std_mean.correction",
                                         "linalg_vector_norm",
                                         "norm",
                                         "_to_copy",
                                         "empty_like",
                                         "zeros_like",
                                         "ones_like",
                                         "rand_like",
                                         "randn_like",
                                         "bernoulli",
                                         "flatten.using_ints",
                                         "unique",
                                         "_unique2",
                                         "masked_select",
                                         "count_nonzero",
                                         "trace",
                                         "matrix_exp",
                                         "logdet",
                                         "det",
                                         "inverse",
                                         "cholesky",
                                         "diag",
                                         "diagonal",
                                         "ravel",
                                         "unbind.int",
                                         "broadcast_tensors",
                                         "nan_to_num",
                                         "alias",
                                         "detach",
                                         "lift_fresh",
                                         "positive",
                                         "fill_",
                                         "zero_",
                                         "triu",
                                         "tril",
                                         "pinverse",
                                         "linalg_inv",
                                         "linalg_det",
                                         "isfinite_",
                                         "resolve_conj",
                                         "resolve_neg",
                                         "conj",
                                         "dropout",
                                         "feature_dropout",
                                         "alpha_dropout",
                                         "flip",
                                         "fliplr",
                                         "flipud",
                                         "rot90",
                                         "msort",
                                         "sort",
                                         "argsort",
                                         "median",
                                         "nanmedian",
                                         "mode",
                                         "logcumsumexp",
                                         "cummax",
                                         "cummin",
                                         "cumsum",
                                         "cumprod",
                                         "log_softmax.int",
                                         "softmax.int",
                                         "glu",
                                         "pdist",
                                         "atleast_1d",
                                         "atleast_2d",
                                         "atleast_3d",
                                         "item",
                                         "bincount",
                                         "histc",
                                         "nansum",
                                         "nanmean",
                                         "std",
                                         "var",
                                         "frobenius_norm",
                                         "logsumexp",
                                         "renorm",
                                         "rrelu",
                                         "hardshrink",
                                         "softshrink",
                                         "tanhshrink",
                                         "logit"};

struct UnaryOp {
  std::string name;
  double low, high;  // the domain, from the float32 samples
  bool takes_float = false, takes_int = false, takes_bool = false;
  Breaks breaks = Breaks::None;
};

bool only_self_required(const ops::OpDef& op) {
  const auto& args = op.schema.arguments;
  if (args.empty() || args[0].type != ops::ArgType::Tensor || args[0].optional) return false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (!args[i].default_value && !args[i].optional) return false;
  }
  return op.schema.returns.size() == 1 && op.schema.returns[0].type == ops::ArgType::Tensor;
}

std::vector<UnaryOp> unary_ops_of_registry() {
  std::vector<UnaryOp> out;
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || op->kind == ops::OpKind::View || op->is_random ||
        !op->samples || !only_self_required(*op) || kNotUnary.count(op->full_name())) {
      continue;
    }
    UnaryOp u{op->full_name(), INFINITY, -INFINITY};
    bool pointwise = true;
    for (const ops::Sample& s : op->samples()) {
      if (s.args.size() != 1 || !s.args[0].is_tensor()) continue;
      const Tensor& x = s.args[0].to_tensor();
      if (x.dtype() == DType::Float32) {
        u.takes_float = true;
        for (double e : x.to(DType::Float64).contiguous().tolist<double>()) {
          if (!std::isfinite(e)) continue;
          u.low = std::min(u.low, e);
          u.high = std::max(u.high, e);
        }
      }
      u.takes_int = u.takes_int || x.dtype() == DType::Int64 || x.dtype() == DType::Int32;
      u.takes_bool = u.takes_bool || x.dtype() == DType::Bool;
      try {
        autograd::NoGradGuard no_grad;
        const Tensor y = ops::call(*op, s.args)[0];
        pointwise = pointwise && y.sizes().vec() == x.sizes().vec();
      } catch (const Error&) {
        // A sample that shows an error is the op tests' business.
      }
    }
    if (!pointwise || (!u.takes_float && !u.takes_int && !u.takes_bool)) continue;
    if (auto it = kBreaks.find(u.name); it != kBreaks.end()) u.breaks = it->second;
    out.push_back(u);
  }
  return out;
}

bool clear_of_breaks(const UnaryOp& u, const ValueFacts& f, double margin) {
  switch (u.breaks) {
    case Breaks::None:
      return true;
    case Breaks::AtZero:
      return f.min_abs > margin;
    case Breaks::AtIntegers:
      return f.min_to_integer > margin;
    case Breaks::AtHalfIntegers:
      return f.min_to_half_integer > margin;
    case Breaks::AtPlusMinusOne:
    case Breaks::AtPlusMinusThree:
      return false;  // accepts() keeps the values strictly between the two breaks instead
  }
  return false;
}

bool accepts(const UnaryOp& u, ProgramBuilder& b, int v, const Tensor& t) {
  if (is_bool(t)) return u.takes_bool;
  if (is_int(t)) return u.takes_int;
  if (!u.takes_float) return false;
  const ValueFacts& f = b.facts(v);
  if (t.numel() > 0 && (f.min < u.low || f.max > u.high)) return false;
  // The facts hold the range's ends, not each element's distance to ±k: for breaks at ±k keep
  // the whole range strictly between them.
  if (u.breaks == Breaks::AtPlusMinusOne || u.breaks == Breaks::AtPlusMinusThree) {
    const double k = u.breaks == Breaks::AtPlusMinusOne ? 1 : 3;
    const bool inside = f.max < k - b.margin(v) && f.min > -k + b.margin(v);
    return t.numel() == 0 || inside;
  }
  return t.numel() == 0 || clear_of_breaks(u, f, b.margin(v));
}

}  // namespace

std::vector<Rule> unary_rules() {
  std::vector<Rule> rules;
  static const std::vector<UnaryOp> ops = unary_ops_of_registry();
  for (const UnaryOp& u : ops) {
    rules.push_back(
        {"unary/" + u.name, 6.0 / static_cast<double>(ops.size()), [u](ProgramBuilder& b) {
           const int x = b.pick([&](int v, const Tensor& t) { return accepts(u, b, v, t); });
           if (x < 0) return false;
           b.add_node(op_node(u.name, {v(x)}));
           return true;
         }});
  }
  return rules;
}

}  // namespace kiln::fuzz
