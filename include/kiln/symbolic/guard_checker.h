#pragma once
// GuardChecker: a ShapeEnv's assumptions compiled into a flat program, so that the per-call check
// of a compiled function's input sizes is a short loop without heap allocation. It checks, in
// order: each input dimension against what the environment made of it (a specialized size still
// has its value, a duck-sized one still equals its twin, a symbol's size lies in its declared
// range), then every guard, evaluated on an int64 stack.
#include <kiln/symbolic/shape_env.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::symbolic {

class GuardChecker {
 public:
  // The deepest expression a guard may have (the evaluation stack lives on the C++ stack).
  static constexpr size_t kMaxStack = 64;

  explicit GuardChecker(const ShapeEnv& env);

  // How many sizes a call passes: one per ShapeEnv::inputs() entry, in that order.
  size_t num_inputs() const { return num_inputs_; }
  size_t num_symbols() const { return symbol_inputs_.size(); }
  size_t num_checks() const { return descriptions_.size(); }

  // The index of the first check that `sizes` fail, or nullopt when all pass. No allocation.
  // Raises kiln::Error when sizes.size() != num_inputs().
  std::optional<size_t> first_failure(std::span<const int64_t> sizes) const;
  bool check(std::span<const int64_t> sizes) const { return !first_failure(sizes).has_value(); }

  // What check `index` asserts: "Lt(s0*2, 64)", "x.size(0) == 1 (size 1 (0/1 specialization))".
  const std::string& description(size_t index) const { return descriptions_.at(index); }
  // Why `sizes` fail, with the values involved, for the recompiles log; "" when they pass.
  std::string explain_failure(std::span<const int64_t> sizes) const;

  // Symbol i's value in a call: sizes[input of symbol i]. No allocation.
  void bind_symbols(std::span<const int64_t> sizes, std::span<int64_t> symbol_values) const;

 private:
  enum class Op : uint8_t {
    InputEquals,       // sizes[a] == b
    InputEqualsInput,  // sizes[a] == sizes[b]
    InputInRange,      // b <= sizes[a] <= c
    PushConst,         // push a
    PushInput,         // push sizes[a]
    Add,
    Mul,
    FloorDiv,
    Mod,
    Min,
    Max,
    Test,  // pop d; the check passes when holds(Relation(a), d)
  };
  struct Instruction {
    Op op;
    uint32_t check;  // the check this instruction belongs to
    int64_t a = 0, b = 0, c = 0;
  };
  // Appends code pushing e's value; tracks the stack depth.
  void emit(const SymExpr& e, uint32_t check, size_t depth);
  void emit_op(Op op, uint32_t check) { code_.push_back({op, check}); }

  std::vector<Instruction> code_;
  std::vector<std::string> descriptions_;
  std::vector<std::vector<size_t>> check_inputs_;  // the input sizes each check reads
  std::vector<size_t> symbol_inputs_;              // symbol id -> its input index
  std::vector<std::string> input_sources_;         // "x.size(1) (s0)", for failure messages
  size_t num_inputs_ = 0;
};

}  // namespace kiln::symbolic
