#include <kiln/core/error.h>
#include <kiln/symbolic/guard_checker.h>

#include <algorithm>
#include <array>

namespace kiln::symbolic {

GuardChecker::GuardChecker(const ShapeEnv& env) : num_inputs_(env.inputs().size()) {
  for (const SymbolInfo& s : env.symbols()) symbol_inputs_.push_back(s.input);
  for (const InputDim& in : env.inputs()) {
    input_sources_.push_back(in.kind == InputDim::Kind::Specialized
                                 ? in.source
                                 : fmt::format("{} (s{})", in.source, in.symbol));
  }

  auto new_check = [&](std::string description, std::vector<size_t> inputs) {
    descriptions_.push_back(std::move(description));
    check_inputs_.push_back(std::move(inputs));
    return static_cast<uint32_t>(descriptions_.size() - 1);
  };
  const std::span<const InputDim> inputs = env.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputDim& in = inputs[i];
    const auto slot = static_cast<int64_t>(i);
    switch (in.kind) {
      case InputDim::Kind::Specialized: {
        uint32_t check =
            new_check(fmt::format("{} == {} ({})", in.source, in.hint, in.reason), {i});
        code_.push_back({Op::InputEquals, check, slot, in.hint});
        break;
      }
      case InputDim::Kind::Duck: {
        const size_t twin = symbol_inputs_.at(static_cast<size_t>(in.symbol));
        uint32_t check = new_check(
            fmt::format("{} == {} ({})", in.source, inputs[twin].source, in.reason), {i, twin});
        code_.push_back({Op::InputEqualsInput, check, slot, static_cast<int64_t>(twin)});
        break;
      }
      case InputDim::Kind::Symbol: {
        const SymRange r = env.symbols()[static_cast<size_t>(in.symbol)].declared;
        uint32_t check =
            new_check(fmt::format("{} in {} (the range of s{}; sizes 0 and 1 are specialized)",
                                  in.source, r.str(), in.symbol),
                      {i});
        code_.push_back({Op::InputInRange, check, slot, r.lo, r.hi});
        break;
      }
    }
  }
  for (const Guard& g : env.guards()) {
    const SymExpr d = g.difference();
    std::vector<size_t> read;
    for (int64_t id : free_symbols(d)) read.push_back(symbol_inputs_.at(static_cast<size_t>(id)));
    uint32_t check = new_check(g.str(), std::move(read));
    emit(d, check, 0);
    code_.push_back({Op::Test, check, static_cast<int64_t>(g.relation)});
  }
}

void GuardChecker::emit(const SymExpr& e, uint32_t check, size_t depth) {
  using Kind = SymExpr::Kind;
  KILN_CHECK(depth < kMaxStack, "GuardChecker: the guard {} nests deeper than {} levels",
             descriptions_[check], kMaxStack);
  // Binary operators: the left operand stays at `depth`, the right one is evaluated above it.
  auto fold = [&](std::span<const SymExpr> args, Op op) {
    emit(args[0], check, depth);
    for (const SymExpr& a : args.subspan(1)) {
      emit(a, check, depth + 1);
      emit_op(op, check);
    }
  };
  switch (e.kind()) {
    case Kind::Constant:
      code_.push_back({Op::PushConst, check, e.value()});
      return;
    case Kind::Symbol: {
      const size_t id = static_cast<size_t>(e.value());
      KILN_CHECK(id < symbol_inputs_.size(), "GuardChecker: the guard {} reads unknown symbol s{}",
                 descriptions_[check], id);
      code_.push_back({Op::PushInput, check, static_cast<int64_t>(symbol_inputs_[id])});
      return;
    }
    case Kind::FloorDiv:
      return fold(e.args(), Op::FloorDiv);
    case Kind::Mod:
      return fold(e.args(), Op::Mod);
    case Kind::Min:
      return fold(e.args(), Op::Min);
    case Kind::Max:
      return fold(e.args(), Op::Max);
    case Kind::Product:
      return fold(e.args(), Op::Mul);
    case Kind::Sum:
      code_.push_back({Op::PushConst, check, e.value()});
      for (size_t i = 0; i < e.args().size(); ++i) {
        emit(e.args()[i], check, depth + 1);
        if (e.coefficients()[i] != 1) {
          KILN_CHECK(depth + 2 < kMaxStack,
                     "GuardChecker: the guard {} nests deeper than {} levels", descriptions_[check],
                     kMaxStack);
          code_.push_back({Op::PushConst, check, e.coefficients()[i]});
          emit_op(Op::Mul, check);
        }
        emit_op(Op::Add, check);
      }
      return;
  }
}

std::optional<size_t> GuardChecker::first_failure(std::span<const int64_t> sizes) const {
  KILN_CHECK(sizes.size() == num_inputs_, "GuardChecker: expected {} input sizes, got {}",
             num_inputs_, sizes.size());
  std::array<int64_t, kMaxStack> stack;
  size_t top = 0;  // the number of values on the stack
  for (const Instruction& in : code_) {
    int64_t* x = top >= 2 ? &stack[top - 2] : nullptr;
    const int64_t y = top >= 1 ? stack[top - 1] : 0;
    bool ok = true;
    switch (in.op) {
      case Op::InputEquals:
        ok = sizes[static_cast<size_t>(in.a)] == in.b;
        break;
      case Op::InputEqualsInput:
        ok = sizes[static_cast<size_t>(in.a)] == sizes[static_cast<size_t>(in.b)];
        break;
      case Op::InputInRange: {
        const int64_t v = sizes[static_cast<size_t>(in.a)];
        ok = in.b <= v && v <= in.c;
        break;
      }
      case Op::PushConst:
        stack[top++] = in.a;
        break;
      case Op::PushInput:
        stack[top++] = sizes[static_cast<size_t>(in.a)];
        break;
      case Op::Add:
        ok = !__builtin_add_overflow(*x, y, x);
        --top;
        break;
      case Op::Mul:
        ok = !__builtin_mul_overflow(*x, y, x);
        --top;
        break;
      case Op::FloorDiv:
      case Op::Mod: {
        // A zero divisor or an overflow fails the guard: the trace never saw such sizes.
        ok = y != 0 && !(y == -1 && *x == std::numeric_limits<int64_t>::min());
        if (ok) {
          int64_t q = *x / y, r = *x % y;
          if (r != 0 && ((r < 0) != (y < 0))) {
            --q;
            r += y;
          }
          *x = in.op == Op::FloorDiv ? q : r;
        }
        --top;
        break;
      }
      case Op::Min:
        *x = std::min(*x, y);
        --top;
        break;
      case Op::Max:
        *x = std::max(*x, y);
        --top;
        break;
      case Op::Test:
        ok = holds(static_cast<Relation>(in.a), y);
        --top;
        break;
    }
    if (!ok) return in.check;
  }
  return std::nullopt;
}

std::string GuardChecker::explain_failure(std::span<const int64_t> sizes) const {
  const std::optional<size_t> failed = first_failure(sizes);
  if (!failed) return "";
  std::string values;
  for (size_t input : check_inputs_[*failed]) {
    values +=
        fmt::format("{}{} = {}", values.empty() ? "" : ", ", input_sources_[input], sizes[input]);
  }
  return fmt::format("{} failed: {}", descriptions_[*failed], values);
}

void GuardChecker::bind_symbols(std::span<const int64_t> sizes,
                                std::span<int64_t> symbol_values) const {
  KILN_CHECK(sizes.size() == num_inputs_,
             "GuardChecker::bind_symbols: expected {} input sizes, got {}", num_inputs_,
             sizes.size());
  KILN_CHECK(symbol_values.size() == symbol_inputs_.size(),
             "GuardChecker::bind_symbols: expected room for {} symbols, got {}",
             symbol_inputs_.size(), symbol_values.size());
  for (size_t i = 0; i < symbol_inputs_.size(); ++i) symbol_values[i] = sizes[symbol_inputs_[i]];
}

}  // namespace kiln::symbolic
