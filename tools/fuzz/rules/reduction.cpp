// Reductions over random dims (one or several, negative indices too, keepdim either way), over
// all dims, and scans. Ops that have no identity (amax, amin) only reduce non-empty dims; var/std
// only reduce more elements than their correction.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

#include <algorithm>

namespace kiln::fuzz {
namespace {

struct ReductionOp {
  const char* name;
  bool floats_only;     // mean, var, std, logsumexp
  bool needs_elements;  // amax, amin: every reduced dim non-empty
  bool dim_list;        // int[1] dim (else a single int dim)
  bool correction;      // var/std: the correction keyword
};

const ReductionOp kReductions[] = {
    {"sum", false, false, true, false},          {"mean", true, false, true, false},
    {"amax", false, true, true, false},          {"amin", false, true, true, false},
    {"var.correction", true, false, true, true}, {"std.correction", true, false, true, true},
    {"logsumexp", true, false, true, false},     {"prod.dim_int", false, false, false, false},
};

// Distinct dims of a tensor of this rank, some given negative.
std::vector<int64_t> random_dims(Rng& rng, int64_t rank, int64_t count) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d) all.push_back(d);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < count && !all.empty(); ++i) {
    const size_t k = static_cast<size_t>(rng.uniform(0, static_cast<int64_t>(all.size()) - 1));
    out.push_back(rng.chance(0.3) ? all[k] - rank : all[k]);
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return out;
}

bool propose(const ReductionOp& op, ProgramBuilder& b) {
  const std::string name = op.name;
  const int x = b.pick([&](int w, const Tensor& t) {
    if (op.floats_only && !is_float(t)) return false;
    if (is_bool(t) && name != "sum") return false;
    if (op.needs_elements && t.dim() == 0 && t.numel() == 0) return false;
    // prod multiplies everything: keep magnitudes near 1 so nothing overflows or vanishes.
    if (name == "prod.dim_int" && (b.facts(w).max_abs > 2 || t.numel() > 64)) return false;
    return true;
  });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t rank = t.dim();
  std::vector<int64_t> dims;
  if (rank > 0) dims = random_dims(b.rng(), rank, b.rng().uniform(1, std::min<int64_t>(rank, 3)));
  if (!op.dim_list && dims.empty()) return false;
  int64_t reduced = 1;
  for (int64_t d : dims) reduced *= t.size(d < 0 ? d + rank : d);
  if (dims.empty()) reduced = t.numel();
  if (op.needs_elements && reduced == 0) return false;
  if (op.needs_elements && dims.empty() && t.numel() == 0) return false;
  const bool keepdim = b.rng().chance(0.5);
  // Reserved up front: growing a vector of Args trips GCC 12's -Wstringop-overflow here.
  std::vector<Arg> args;
  args.reserve(4);
  args.push_back(v(x));
  if (!op.dim_list) {
    args.push_back(lit(dims[0]));
    args.push_back(lit(keepdim));
  } else if (op.correction) {
    const int64_t correction = b.rng().uniform(0, 1);
    if (reduced <= correction) return false;
    // var/std of all elements when no dims are drawn (dim=None).
    args.push_back(dims.empty() ? lit(ops::IValue()) : lit(dims));
    args.push_back(lit(correction));
    args.push_back(lit(keepdim));
    // std's gradient is infinite at zero variance: keep clear of constant rows.
    if (name == "std.correction" && b.facts(x).max - b.facts(x).min < 1e-2 && t.numel() > 1) {
      return false;
    }
  } else if (name == "logsumexp" && dims.empty()) {
    return false;  // logsumexp needs dims
  } else {
    args.push_back(dims.empty()
                       ? lit(name == "sum" || name == "mean" ? ops::IValue() : ops::IValue(dims))
                       : lit(dims));
    args.push_back(lit(keepdim));
  }
  // A whole reduction of a 0-dim tensor, or amax over [] (all dims), is still valid.
  b.add_node(op_node(name, std::move(args)));
  return true;
}

bool propose_scan(ProgramBuilder& b) {
  const int x = b.pick([](int, const Tensor& t) { return (is_float(t) || is_int(t)); });
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim();
  const int64_t dim = rank == 0 ? 0 : b.rng().uniform(-rank, rank - 1);
  b.add_node(op_node("cumsum", {v(x), lit(dim)}));
  return true;
}

}  // namespace

std::vector<Rule> reduction_rules() {
  std::vector<Rule> rules;
  for (const ReductionOp& op : kReductions) {
    const bool common = std::string_view(op.name) == "sum" || std::string_view(op.name) == "mean";
    rules.push_back({std::string("reduction/") + op.name, common ? 1.0 : 0.3,
                     [op](ProgramBuilder& b) { return propose(op, b); }});
  }
  rules.push_back({"reduction/cumsum", 0.3, propose_scan});
  return rules;
}

}  // namespace kiln::fuzz
