// In-place ops (the registry's in-place variants of add, mul, relu, ...; fill_, copy_) written
// into a fresh clone of a value, into a narrowed view of such a clone (a write through a view),
// or into an input that does not require grad and that nothing has read yet (an argument
// mutation, which functionalization turns into a copy back after the graph).
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

namespace kiln::fuzz {
namespace {

enum class Partner { None, Tensor, Scalar };

struct InplaceOp {
  const char* name;
  Partner partner;
  bool float_only;
  double max_abs;  // the target's elements stay within this (exp_)
  bool kink_at_zero;
};

const InplaceOp kInplaceOps[] = {
    {"add_", Partner::Tensor, false, 1e4, false},  {"sub_", Partner::Tensor, false, 1e4, false},
    {"mul_", Partner::Tensor, false, 1e4, false},  {"div_", Partner::Tensor, true, 1e4, false},
    {"relu_", Partner::None, true, 1e4, true},     {"sigmoid_", Partner::None, true, 1e4, false},
    {"tanh_", Partner::None, true, 1e4, false},    {"neg_", Partner::None, false, 1e4, false},
    {"exp_", Partner::None, true, 3, false},       {"sin_", Partner::None, true, 1e4, false},
    {"fill_", Partner::Scalar, false, 1e4, false}, {"copy_", Partner::Tensor, false, 1e4, false},
};

// Where the op writes, chosen at random; fills node.target and the narrowed view. Returns the
// sizes the write covers, or nothing when the target cannot take this write.
std::optional<std::vector<int64_t>> choose_target(ProgramBuilder& b, Node& node, int x) {
  const Tensor& t = b.value(x);
  const double r = b.rng().real(0, 1);
  if (r < 0.2 && b.is_input(x) && !b.requires_grad(x) && !b.has_users(x)) {
    node.target = WriteTarget::Argument;
    return t.sizes().vec();
  }
  if (r < 0.55 && t.dim() >= 1) {
    node.target = WriteTarget::CloneNarrow;
    node.narrow_dim = b.rng().uniform(0, t.dim() - 1);
    const int64_t size = t.size(node.narrow_dim);
    node.narrow_start = b.rng().uniform(0, size);
    node.narrow_length = b.rng().uniform(0, size - node.narrow_start);
    std::vector<int64_t> sizes = t.sizes().vec();
    sizes[static_cast<size_t>(node.narrow_dim)] = node.narrow_length;
    return sizes;
  }
  node.target = WriteTarget::Clone;
  return t.sizes().vec();
}

bool propose(const InplaceOp& op, ProgramBuilder& b) {
  const std::string name = op.name;
  const int x = b.pick([&](int w, const Tensor& t) {
    if (is_bool(t) || (op.float_only && !is_float(t))) return false;
    if (b.facts(w).max_abs > op.max_abs) return false;
    return !op.kink_at_zero || t.numel() == 0 || b.facts(w).min_abs > b.margin(w);
  });
  if (x < 0) return false;
  Node node = op_node(name, {v(x)});
  const std::optional<std::vector<int64_t>> sizes = choose_target(b, node, x);
  if (!sizes) return false;
  const Tensor& t = b.value(x);
  if (op.partner == Partner::Tensor) {
    // The partner broadcasts to the written sizes, and its dtype converts into the target's
    // without a jump (floats into an integer target would truncate).
    const bool float_target = is_float(t);
    auto fits = [&](int w, const Tensor& u) {
      if (!broadcasts_to(u.sizes(), *sizes) || is_bool(u)) return false;
      if (!float_target && is_float(u)) return false;
      if (name == "div_" && (u.numel() > 0 && b.facts(w).min_abs <= 0.1)) return false;
      return true;
    };
    int y = b.rng().chance(0.5) ? b.pick(fits) : -1;
    if (y < 0) {
      std::vector<int64_t> partner = *sizes;
      for (int64_t& s : partner) {
        if (b.rng().chance(0.3)) s = 1;
      }
      y = b.add_input(partner, t.dtype());
      if (!fits(y, b.value(y))) return false;
    }
    node.args.push_back(v(y));
  } else if (op.partner == Partner::Scalar) {
    node.args.push_back(is_float(t) ? lit(b.rng().real(-2, 2)) : lit(b.rng().uniform(-3, 3)));
  }
  b.add_node(std::move(node));
  return true;
}

}  // namespace

std::vector<Rule> inplace_rules() {
  std::vector<Rule> rules;
  for (const InplaceOp& op : kInplaceOps) {
    rules.push_back({std::string("inplace/") + op.name, 0.15,
                     [op](ProgramBuilder& b) { return propose(op, b); }});
  }
  return rules;
}

}  // namespace kiln::fuzz
