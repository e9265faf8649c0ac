// Matrix products: matmul (1-D to 4-D operands, batch broadcasting), mm, bmm, linear (with and
// without bias) and addmm. The second operand is a new input (a weight) whose contraction size
// matches, or an earlier value that already fits.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

namespace kiln::fuzz {
namespace {

int pick_float(ProgramBuilder& b, int64_t min_rank, int64_t max_rank) {
  return b.pick([&](int, const Tensor& t) {
    return t.dtype() == DType::Float32 && t.dim() >= min_rank && t.dim() <= max_rank;
  });
}

// An earlier float value of exactly these sizes, else a new input.
int operand_of(ProgramBuilder& b, const std::vector<int64_t>& sizes) {
  if (b.rng().chance(0.5)) {
    const int w = b.pick([&](int, const Tensor& t) {
      return t.dtype() == DType::Float32 && t.sizes().vec() == sizes;
    });
    if (w >= 0) return w;
  }
  return b.add_input(sizes, DType::Float32);
}

int64_t small_size(ProgramBuilder& b) { return b.rng().chance(0.1) ? 1 : b.rng().uniform(2, 6); }

bool propose_matmul(ProgramBuilder& b) {
  const int x = pick_float(b, 1, 4);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t k = t.size(-1);
  std::vector<int64_t> other;
  const int64_t rank = b.rng().uniform(1, 3);
  if (rank >= 3) other.push_back(t.dim() >= 3 && b.rng().chance(0.7) ? t.size(-3) : 1);
  other.push_back(k);
  if (rank >= 2) other.push_back(small_size(b));
  b.add_node(op_node("matmul", {v(x), v(operand_of(b, other))}));
  return true;
}

bool propose_mm(ProgramBuilder& b, bool batched) {
  const int x = pick_float(b, batched ? 3 : 2, batched ? 3 : 2);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  std::vector<int64_t> other = {t.size(-1), small_size(b)};
  if (batched) other.insert(other.begin(), t.size(0));
  b.add_node(op_node(batched ? "bmm" : "mm", {v(x), v(operand_of(b, other))}));
  return true;
}

bool propose_linear(ProgramBuilder& b) {
  const int x = pick_float(b, 1, 4);
  if (x < 0) return false;
  const int64_t in = b.value(x).size(-1), out = small_size(b);
  const int weight = operand_of(b, {out, in});
  std::vector<Arg> args = {v(x), v(weight)};
  if (b.rng().chance(0.6)) args.push_back(v(operand_of(b, {out})));
  b.add_node(op_node("linear", std::move(args)));
  return true;
}

bool propose_addmm(ProgramBuilder& b) {
  const int x = pick_float(b, 2, 2);
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t n = small_size(b);
  const int mat2 = operand_of(b, {t.size(1), n});
  // The added term broadcasts to [m, n].
  const std::vector<int64_t> bias =
      b.rng().chance(0.5) ? std::vector<int64_t>{n} : std::vector<int64_t>{t.size(0), n};
  const int self = operand_of(b, bias);
  std::vector<Arg> args = {v(self), v(x), v(mat2)};
  if (b.rng().chance(0.3)) {
    args.push_back(lit(0.5));
    args.push_back(lit(2.0));
  }
  b.add_node(op_node("addmm", std::move(args)));
  return true;
}

}  // namespace

std::vector<Rule> matmul_rules() {
  return {
      {"matmul/matmul", 1.0, propose_matmul},
      {"matmul/mm", 0.3, [](ProgramBuilder& b) { return propose_mm(b, false); }},
      {"matmul/bmm", 0.3, [](ProgramBuilder& b) { return propose_mm(b, true); }},
      {"matmul/linear", 0.6, propose_linear},
      {"matmul/addmm", 0.3, propose_addmm},
  };
}

}  // namespace kiln::fuzz
