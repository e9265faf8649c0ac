#include "fuzz/shrinker.h"

#include "fuzz/program_edit.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <optional>
#include <set>

namespace kiln::fuzz {
namespace {

// The candidates of one pass, smallest-first in spirit: removals before simplifications.
std::vector<Program> candidates(const Program& p) {
  std::vector<Program> out;
  if (p.outputs.size() > 1) {
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      Program q = p;
      q.outputs.erase(q.outputs.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back(without_dead_code(q));
    }
  }
  // The sizes and dtypes of every value, to find same-shaped replacements.
  std::vector<Tensor> values;
  try {
    autograd::NoGradGuard no_grad;
    values = execute_all(p, make_inputs(p));
  } catch (const Error&) {
    values.clear();
  }
  const int num_inputs = static_cast<int>(p.inputs.size());
  for (int n = static_cast<int>(p.nodes.size()) - 1; n >= 0; --n) {
    const int value = num_inputs + n;
    std::vector<int> replacements;
    for (const Arg& a : p.nodes[static_cast<size_t>(n)].args) {
      for (int w : a.values) replacements.push_back(w);
    }
    if (!values.empty()) {
      const Tensor& t = values[static_cast<size_t>(value)];
      for (int w = 0; w < value; ++w) {
        const Tensor& u = values[static_cast<size_t>(w)];
        if (u.dtype() == t.dtype() && u.sizes().vec() == t.sizes().vec()) replacements.push_back(w);
      }
    }
    std::set<int> tried;
    for (int w : replacements) {
      if (!tried.insert(w).second) continue;
      out.push_back(with_uses_replaced(p, value, w));
    }
  }
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i].requires_grad) {
      Program q = p;
      q.inputs[i].requires_grad = false;
      out.push_back(q);
    }
  }
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    for (size_t d = 0; d < p.inputs[i].sizes.size(); ++d) {
      const int64_t s = p.inputs[i].sizes[d];
      for (int64_t smaller : {int64_t{1}, s / 2, int64_t{0}}) {
        if (smaller >= s || (smaller == 0 && s == 1)) continue;
        Program q = p;
        q.inputs[i].sizes[d] = smaller;
        out.push_back(q);
      }
    }
  }
  return out;
}

// A rough size: nodes first, then elements, so that shrinking always moves downhill.
int64_t weight(const Program& p) {
  int64_t elements = 0;
  for (const InputSpec& in : p.inputs) {
    int64_t n = 1;
    for (int64_t s : in.sizes) n *= s;
    elements += n + (in.requires_grad ? 1 : 0);
  }
  return static_cast<int64_t>(p.nodes.size() + p.outputs.size()) * 100000 + elements;
}

}  // namespace

ShrinkResult shrink(const Program& failing, const StillFails& still_fails, int max_attempts) {
  ShrinkResult result{failing};
  for (bool progress = true; progress && result.attempts < max_attempts;) {
    progress = false;
    for (const Program& candidate : candidates(result.program)) {
      if (result.attempts >= max_attempts) break;
      if (weight(candidate) >= weight(result.program)) continue;
      ++result.attempts;
      if (still_fails(candidate)) {
        result.program = candidate;
        ++result.accepted;
        progress = true;
        break;  // candidates are relative to the program they came from
      }
    }
  }
  return result;
}

}  // namespace kiln::fuzz
