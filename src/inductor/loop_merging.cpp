#include "inductor/loop_merging.h"

#include <algorithm>
#include <unordered_set>
#include <variant>
#include <vector>

namespace kiln::inductor {

namespace {

// Every index of the kernel (its loads and its store).
template <typename F>
void for_each_index(const Kernel& k, F&& f) {
  for_each_load(k.body, [&](const ExprNode& l) { f(l.index); });
  f(k.store);
}

// Whether an index value (a position used as data: a pooling window's bounds) reads `v`.
bool value_reads(const Expr& body, int64_t v) {
  std::vector<const ExprNode*> stack = {body.get()};
  std::unordered_set<const ExprNode*> seen;  // shared subexpressions once
  while (!stack.empty()) {
    const ExprNode* e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    if (e->kind == ExprNode::Kind::IndexAsValue && uses_var(e->index, v)) return true;
    for (const Expr& a : e->args) stack.push_back(a.get());
  }
  return false;
}

// Whether variables `outer` and `outer + 1` (of range `inner_range`) read as one run in k, and
// only as addresses (a value computed from one of them would change meaning).
bool mergeable(const Kernel& k, int64_t outer, const Size& inner_range, const SizeFacts& facts) {
  if (value_reads(k.body, outer) || value_reads(k.body, outer + 1)) return false;
  bool ok = true;
  for_each_index(k, [&](const Index& e) {
    const auto a = linear_size_coefficient(e, outer), b = linear_size_coefficient(e, outer + 1);
    ok = ok && a && b && facts.known_eq(*a, *b * inner_range);
  });
  return ok;
}

// k with variables `outer` and `outer + 1` as one (numbered `outer`); later variables move down.
Kernel merged(const Kernel& k, int64_t outer) {
  const auto vars = static_cast<int64_t>(k.ranges.size() + k.reduction_ranges.size());
  const auto index = [outer, vars](const Index& e) {
    // c_o * o + c_i * i with c_o = c_i * range(i): the same as c_i * (o * range(i) + i).
    Index out = substitute(e, outer, constant(0));
    out = substitute(out, outer + 1, var(outer));
    for (int64_t v = outer + 2; v < vars; ++v) out = substitute(out, v, var(v - 1));
    return out;
  };
  Kernel m = k;
  m.body = rewrite(k.body, index, [](int b) { return b; });
  m.store = index(k.store);
  return m;
}

void merge_pointwise_nest(LoopNest& nest, const SizeFacts& facts) {
  while (nest.outer.size() >= 2) {
    const size_t p = nest.outer.size();
    const bool all = std::all_of(nest.parts.begin(), nest.parts.end(), [&](const Kernel& k) {
      return k.kind == Kernel::Kind::Pointwise && k.ranges.size() == p + 1 &&
             facts.hint(k.ranges[p]) < kShortLoop &&
             mergeable(k, static_cast<int64_t>(p - 1), k.ranges[p], facts);
    });
    if (!all) return;
    for (Kernel& k : nest.parts) {
      k = merged(k, static_cast<int64_t>(p - 1));
      k.ranges[p - 1] = k.ranges[p - 1] * k.ranges[p];
      k.ranges.pop_back();
    }
    nest.outer.pop_back();
  }
}

void merge_reduction_loops(Kernel& k, const SizeFacts& facts) {
  while (k.reduction_ranges.size() >= 2 && facts.hint(k.reduction_ranges.back()) < kShortLoop) {
    const size_t r = k.reduction_ranges.size();
    const auto outer = static_cast<int64_t>(k.ranges.size() + r - 2);
    if (!mergeable(k, outer, k.reduction_ranges[r - 1], facts)) return;
    k = merged(k, outer);
    k.reduction_ranges[r - 2] = k.reduction_ranges[r - 2] * k.reduction_ranges[r - 1];
    k.reduction_ranges.pop_back();
  }
}

}  // namespace

bool merge_reduction_pair(Kernel& k, size_t d, const SizeFacts& facts) {
  if (d + 1 >= k.reduction_ranges.size()) return false;
  const auto outer = static_cast<int64_t>(k.ranges.size() + d);
  if (!mergeable(k, outer, k.reduction_ranges[d + 1], facts)) return false;
  k = merged(k, outer);
  k.reduction_ranges[d] = k.reduction_ranges[d] * k.reduction_ranges[d + 1];
  k.reduction_ranges.erase(k.reduction_ranges.begin() + static_cast<std::ptrdiff_t>(d) + 1);
  return true;
}

void merge_contiguous_loops(Program& program) {
  for (Step& step : program.steps) {
    auto* nest = std::get_if<LoopNest>(&step);
    if (nest == nullptr || !nest->locals.empty()) continue;
    merge_pointwise_nest(*nest, program.facts);
    for (Kernel& k : nest->parts) {
      if (k.kind == Kernel::Kind::Reduction) merge_reduction_loops(k, program.facts);
    }
  }
}

}  // namespace kiln::inductor
