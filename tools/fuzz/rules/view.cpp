// Views and movement: reshape/view (to a random factorization, -1 sometimes), permute,
// transpose, slice with a step, narrow, select, expand (size-1 dims and new leading dims),
// unsqueeze, squeeze, flatten.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <numeric>

namespace kiln::fuzz {
namespace {

int pick_any(ProgramBuilder& b, int64_t min_rank = 0) {
  return b.pick([&](int, const Tensor& t) { return t.dim() >= min_rank; });
}

int64_t random_dim(ProgramBuilder& b, int64_t rank) {
  const int64_t d = b.rng().uniform(0, rank - 1);
  return b.rng().chance(0.3) ? d - rank : d;
}

int64_t wrap(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// A random shape with `numel` elements (numel 0 keeps one 0 dim), one entry -1 sometimes.
std::vector<int64_t> random_factorization(Rng& rng, int64_t numel, int64_t max_rank) {
  std::vector<int64_t> out;
  if (numel == 0) {
    out = {0};
    for (int64_t i = rng.uniform(0, 2); i > 0; --i) {
      out.insert(out.begin() + rng.uniform(0, static_cast<int64_t>(out.size())), rng.uniform(1, 3));
    }
    return out;
  }
  int64_t rest = numel;
  const int64_t rank = rng.uniform(0, max_rank);
  for (int64_t i = 0; i + 1 < rank; ++i) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= rest; ++d) {
      if (rest % d == 0) divisors.push_back(d);
    }
    const int64_t d = rng.pick(divisors);
    out.push_back(d);
    rest /= d;
  }
  if (rank > 0 || rest != 1) out.push_back(rest);
  if (!out.empty() && rng.chance(0.3))
    out[rng.uniform(0, static_cast<int64_t>(out.size()) - 1)] = -1;
  return out;
}

bool propose_reshape(ProgramBuilder& b, bool as_view) {
  const int x = b.pick([&](int, const Tensor& t) { return !as_view || t.is_contiguous(); });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  std::vector<int64_t> shape = random_factorization(b.rng(), t.numel(), b.options().max_rank);
  // -1 is ambiguous for an empty tensor.
  if (t.numel() == 0) std::replace(shape.begin(), shape.end(), int64_t{-1}, int64_t{0});
  b.add_node(op_node(as_view ? "view" : "reshape", {v(x), lit(shape)}));
  return true;
}

bool propose_permute(ProgramBuilder& b) {
  const int x = pick_any(b, 2);
  if (x < 0) return false;
  std::vector<int64_t> dims(static_cast<size_t>(b.value(x).dim()));
  std::iota(dims.begin(), dims.end(), 0);
  for (size_t i = dims.size(); i > 1; --i) {
    std::swap(dims[i - 1],
              dims[static_cast<size_t>(b.rng().uniform(0, static_cast<int64_t>(i) - 1))]);
  }
  b.add_node(op_node("permute", {v(x), lit(dims)}));
  return true;
}

bool propose_transpose(ProgramBuilder& b) {
  const int x = pick_any(b, 1);
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim();
  b.add_node(op_node("transpose.int", {v(x), lit(random_dim(b, rank)), lit(random_dim(b, rank))}));
  return true;
}

bool propose_slice(ProgramBuilder& b) {
  const int x = pick_any(b, 1);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t dim = random_dim(b, t.dim());
  const int64_t size = t.size(wrap(dim, t.dim()));
  const int64_t start = b.rng().uniform(0, size);
  const int64_t end = b.rng().uniform(start, size + 2);  // past the end is clamped
  const int64_t step = b.rng().chance(0.6) ? 1 : b.rng().uniform(2, 3);
  b.add_node(op_node("slice.Tensor", {v(x), lit(dim), lit(start), lit(end), lit(step)}));
  return true;
}

bool propose_narrow(ProgramBuilder& b) {
  const int x = pick_any(b, 1);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t dim = random_dim(b, t.dim());
  const int64_t size = t.size(wrap(dim, t.dim()));
  const int64_t start = b.rng().uniform(0, size);
  const int64_t length = b.rng().uniform(0, size - start);
  b.add_node(op_node("narrow", {v(x), lit(dim), lit(start), lit(length)}));
  return true;
}

bool propose_select(ProgramBuilder& b) {
  const int x = b.pick([](int, const Tensor& t) {
    for (int64_t s : t.sizes()) {
      if (s > 0) return true;
    }
    return false;
  });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  std::vector<int64_t> nonempty;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 0) nonempty.push_back(d);
  }
  const int64_t dim = b.rng().pick(nonempty);
  const int64_t index = b.rng().uniform(-t.size(dim), t.size(dim) - 1);
  b.add_node(op_node("select.int", {v(x), lit(dim), lit(index)}));
  return true;
}

bool propose_expand(ProgramBuilder& b) {
  const int x = pick_any(b);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (int64_t i = b.rng().uniform(0, 1); i > 0 && t.dim() < b.options().max_rank; --i) {
    sizes.push_back(b.rng().uniform(1, 4));
    numel *= sizes.back();
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t s = t.size(d);
    if (s == 1 && b.rng().chance(0.7))
      s = b.rng().uniform(0, 5);
    else if (b.rng().chance(0.2))
      s = -1;  // keep
    sizes.push_back(s);
    numel *= std::max<int64_t>(s < 0 ? t.size(d) : s, 1);
  }
  if (numel > 4 * b.options().max_numel) return false;
  b.add_node(op_node("expand", {v(x), lit(sizes)}));
  return true;
}

bool propose_unsqueeze(ProgramBuilder& b) {
  const int x = b.pick([&](int, const Tensor& t) { return t.dim() < b.options().max_rank; });
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim() + 1;
  b.add_node(op_node("unsqueeze", {v(x), lit(random_dim(b, rank))}));
  return true;
}

bool propose_squeeze(ProgramBuilder& b) {
  const int x = pick_any(b, 1);
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim();
  // squeeze.dim of a dim that is not 1 is a no-op view: valid and worth covering.
  b.add_node(op_node("squeeze.dim", {v(x), lit(random_dim(b, rank))}));
  return true;
}

bool propose_flatten(ProgramBuilder& b) {
  const int x = pick_any(b, 1);
  if (x < 0) return false;
  const int64_t rank = b.value(x).dim();
  int64_t start = b.rng().uniform(0, rank - 1);
  int64_t end = b.rng().uniform(start, rank - 1);
  b.add_node(op_node("flatten.using_ints", {v(x), lit(start), lit(end)}));
  return true;
}

}  // namespace

std::vector<Rule> view_rules() {
  return {
      {"view/reshape", 1.0, [](ProgramBuilder& b) { return propose_reshape(b, false); }},
      {"view/view", 0.5, [](ProgramBuilder& b) { return propose_reshape(b, true); }},
      {"view/permute", 0.6, propose_permute},
      {"view/transpose", 0.6, propose_transpose},
      {"view/slice", 0.6, propose_slice},
      {"view/narrow", 0.4, propose_narrow},
      {"view/select", 0.4, propose_select},
      {"view/expand", 0.6, propose_expand},
      {"view/unsqueeze", 0.5, propose_unsqueeze},
      {"view/squeeze", 0.4, propose_squeeze},
      {"view/flatten", 0.3, propose_flatten},
  };
}

}  // namespace kiln::fuzz
