// Pointwise binary ops with broadcasting: the second operand is an earlier value whose sizes
// broadcast with the first's, or a new input of sizes derived from the first's (dims dropped
// from the left or set to 1, on either side). Comparisons and maximum/minimum only see operands
// that differ by more than a margin everywhere, so rounding cannot flip them.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

#include <cmath>

namespace kiln::fuzz {
namespace {

enum class Operands { Arithmetic, IntegerOnly, Logical };
enum class Check { None, Separated, NonzeroDivisor, PositiveBase };

struct BinaryOp {
  const char* name;
  Operands operands;
  Check check;
  bool alpha = false;  // takes "alpha" (add, sub)
};

const BinaryOp kBinaryOps[] = {
    {"add", Operands::Arithmetic, Check::None, true},
    {"sub", Operands::Arithmetic, Check::None, true},
    {"mul", Operands::Arithmetic, Check::None},
    {"div", Operands::Arithmetic, Check::NonzeroDivisor},
    {"maximum", Operands::Arithmetic, Check::Separated},
    {"minimum", Operands::Arithmetic, Check::Separated},
    {"atan2", Operands::Arithmetic, Check::NonzeroDivisor},
    {"pow", Operands::Arithmetic, Check::PositiveBase},
    {"eq", Operands::Arithmetic, Check::Separated},
    {"ne", Operands::Arithmetic, Check::Separated},
    {"lt", Operands::Arithmetic, Check::Separated},
    {"le", Operands::Arithmetic, Check::Separated},
    {"gt", Operands::Arithmetic, Check::Separated},
    {"ge", Operands::Arithmetic, Check::Separated},
    {"logical_and", Operands::Logical, Check::None},
    {"logical_or", Operands::Logical, Check::None},
    {"logical_xor", Operands::Logical, Check::None},
    {"bitwise_and", Operands::IntegerOnly, Check::None},
    {"bitwise_or", Operands::IntegerOnly, Check::None},
    {"bitwise_xor", Operands::IntegerOnly, Check::None},
    {"remainder", Operands::IntegerOnly, Check::NonzeroDivisor},
    {"floor_divide", Operands::IntegerOnly, Check::NonzeroDivisor},
};

bool operand_ok(const BinaryOp& op, const Tensor& t) {
  switch (op.operands) {
    case Operands::Arithmetic:
      return is_float(t) || is_int(t);
    case Operands::IntegerOnly:
      return is_int(t) || (is_bool(t) && std::string_view(op.name).starts_with("bitwise"));
    case Operands::Logical:
      return true;
  }
  return false;
}

// Sizes that broadcast with `sizes`: some leading dims dropped, some dims set to 1.
std::vector<int64_t> broadcast_partner(Rng& rng, IntList sizes) {
  std::vector<int64_t> out(sizes.begin() + rng.uniform(0, static_cast<int64_t>(sizes.size())),
                           sizes.end());
  for (int64_t& s : out) {
    if (rng.chance(0.3)) s = 1;
  }
  return out;
}

// Whether every pair of broadcast elements differs by more than `margin` (exact for integers).
bool separated(const Tensor& a, const Tensor& b, double margin) {
  if (!is_float(a) && !is_float(b)) return true;
  const Tensor d = kiln::abs(a.to(DType::Float64) - b.to(DType::Float64));
  if (d.numel() == 0) return true;
  return d.min().item().to<double>() > margin;
}

bool check_ok(const BinaryOp& op, ProgramBuilder& b, int x, int y) {
  const Tensor& a = b.value(x);
  const Tensor& c = b.value(y);
  const ValueFacts& fy = b.facts(y);
  const bool empty = a.numel() == 0 || c.numel() == 0;
  switch (op.check) {
    case Check::None:
      return true;
    case Check::Separated:
      return separated(a, c, std::max(b.margin(x), b.margin(y)));
    case Check::NonzeroDivisor:
      return empty || (is_float(c) ? fy.min_abs > 0.1 : fy.min_abs >= 1);
    case Check::PositiveBase:
      // x ** y for x in [0.1, 10], |y| <= 3: no NaN, no overflow, and a defined gradient.
      return is_float(a) &&
             (empty || (b.facts(x).min > 0.1 && b.facts(x).max < 10 && fy.max_abs <= 3));
      return true;
  }
  return false;
}

bool propose(const BinaryOp& op, ProgramBuilder& b) {
  const int x = b.pick([&](int, const Tensor& t) { return operand_ok(op, t); });
  if (x < 0) return false;
  const Tensor& a = b.value(x);
  int y = -1;
  if (b.rng().chance(0.6)) {
    y = b.pick([&](int w, const Tensor& t) {
      return operand_ok(op, t) && broadcastable(a.sizes(), t.sizes()) && check_ok(op, b, x, w);
    });
  }
  if (y < 0) {
    // A new operand: same dtype family as the first.
    DType dtype = a.dtype();
    if (op.operands == Operands::Arithmetic && b.rng().chance(0.15)) {
      dtype = is_float(a) ? DType::Int64 : DType::Float32;
    }
    y = b.add_input(broadcast_partner(b.rng(), a.sizes()), dtype);
    if (!check_ok(op, b, x, y)) return false;  // the input stays; an unused input is harmless
  }
  std::vector<Arg> args = {v(x), v(y)};
  if (b.rng().chance(0.5)) std::swap(args[0], args[1]);
  // pow's base must be the checked one.
  if (op.check == Check::PositiveBase) args = {v(x), v(y)};
  // The divisor must be the checked one.
  if (op.check == Check::NonzeroDivisor) args = {v(x), v(y)};
  if (op.alpha && b.rng().chance(0.2) && is_float(a) && is_float(b.value(y))) {
    args.push_back(lit(b.rng().pick(std::vector<double>{-1.0, 0.5, 2.0})));
  }
  b.add_node(op_node(op.name, std::move(args)));
  return true;
}

}  // namespace

std::vector<Rule> binary_rules() {
  std::vector<Rule> rules;
  for (const BinaryOp& op : kBinaryOps) {
    const bool common = std::string_view(op.name) == "add" || std::string_view(op.name) == "mul" ||
                        std::string_view(op.name) == "sub";
    rules.push_back({std::string("binary/") + op.name, common ? 1.0 : 0.25,
                     [op](ProgramBuilder& b) { return propose(op, b); }});
  }
  return rules;
}

}  // namespace kiln::fuzz
