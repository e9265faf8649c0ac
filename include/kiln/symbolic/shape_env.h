#pragma once
// ShapeEnv: the symbols and guards of one compilation (PyTorch's ShapeEnv). Capture asks it for a
// symbol per dynamic input dimension; SymInts built from those symbols compute new expressions,
// and every comparison the trace takes a branch on is answered from the symbols' hints (the sizes
// of the example inputs) and recorded as a guard, unless the symbols' ranges already decide it.
// A GuardChecker (guard_checker.h) compiled from the environment decides whether a later call's
// sizes may reuse the trace.
//
// Not thread-safe: one trace builds one environment. SymInts keep their environment alive.
#include <kiln/core/symint.h>
#include <kiln/symbolic/guard.h>
#include <kiln/symbolic/sym_expr.h>
#include <kiln/symbolic/value_ranges.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::symbolic {

struct ShapeEnvOptions {
  // Dimensions with equal hints share one symbol, as PyTorch's duck shaping does (broadcasting
  // and matmul then need no guard); the checker verifies that the sizes stay equal.
  bool duck_sizes = true;
};

// What the environment made of one input dimension (one create_symbol call).
struct InputDim {
  enum class Kind : uint8_t {
    Symbol,       // introduced `symbol`
    Duck,         // reuses `symbol`, introduced by an earlier dimension with the same hint
    Specialized,  // a plain integer: `hint` (see `reason`)
  };
  std::string source;  // "x.size(1)"
  int64_t hint;
  Kind kind;
  int64_t symbol = -1;  // Symbol and Duck
  std::string reason;   // Specialized and Duck: why
};

struct SymbolInfo {
  std::string source;  // the input dimension that introduced it
  int64_t hint;
  size_t input;       // its index in inputs()
  SymRange declared;  // the range it was created with (checked on every call)
};

class ShapeEnv : public std::enable_shared_from_this<ShapeEnv> {
  struct Private {};

 public:
  // Environments are shared: every SymInt that reads a symbol holds its environment.
  static std::shared_ptr<ShapeEnv> create(ShapeEnvOptions options = {});
  ShapeEnv(Private, ShapeEnvOptions options);
  ShapeEnv(const ShapeEnv&) = delete;
  ShapeEnv& operator=(const ShapeEnv&) = delete;

  // The size of one dynamic input dimension, `hint` being its size in the example inputs. Sizes
  // 0 and 1 are specialized (a plain integer comes back and the reason is logged), as in
  // PyTorch: code often branches on them (broadcasting, empty tensors). Otherwise a symbol, or
  // with duck sizing the symbol of an earlier dimension of the same size. `min`/`max`
  // (mark_dynamic's bounds) restrict the symbol's range, which is never below 2.
  SymInt create_symbol(int64_t hint, std::string source, std::optional<int64_t> min = {},
                       std::optional<int64_t> max = {});

  std::span<const InputDim> inputs() const { return inputs_; }
  std::span<const SymbolInfo> symbols() const { return symbols_; }
  std::span<const Guard> guards() const { return guards_; }
  // The example size of each symbol, by id.
  std::span<const int64_t> hints() const { return hints_; }
  // What the environment knows about each symbol, by id (declared ranges narrowed by guards).
  std::span<const SymRange> ranges() const { return ranges_; }

  // `e` with the replacements guards established (Eq(s1, s0) makes s1 read s0) and simplified
  // with the symbols' ranges.
  SymExpr simplify(const SymExpr& e) const;
  SymRange bounds(const SymExpr& e) const;
  // The value of `e` at the hints.
  int64_t hint(const SymExpr& e) const;
  // `a == b` / `a < b`, decided statically when the ranges allow, else answered at the hints and
  // recorded as a guard.
  bool guard_eq(const SymExpr& a, const SymExpr& b);
  bool guard_lt(const SymExpr& a, const SymExpr& b);
  // The answer without a guard, when the ranges decide it.
  std::optional<bool> static_eq(const SymExpr& a, const SymExpr& b) const;
  std::optional<bool> static_lt(const SymExpr& a, const SymExpr& b) const;

  // A SymInt for `e`: a plain integer when `e` simplifies to a constant, else a symbolic one
  // reading this environment.
  SymInt to_symint(const SymExpr& e);

  // Guards, one per line (for the guards log and explain).
  std::string guards_str() const;

  // A guard another trace of the same inputs recorded (its compiled code, reused here, assumed
  // it): whether it holds at this environment's hints, and recording it here.
  bool holds(const Guard& guard) const;
  void replay(const Guard& guard);

 private:
  void add_guard(Guard guard);
  void learn_from(const Guard& guard);
  void narrow(int64_t symbol, SymRange range);
  void replace(int64_t symbol, const SymExpr& by);

  ShapeEnvOptions options_;
  std::vector<InputDim> inputs_;
  std::vector<SymbolInfo> symbols_;
  std::vector<int64_t> hints_;
  std::vector<SymRange> ranges_;
  std::vector<Guard> guards_;
  std::map<int64_t, SymExpr> replacements_;    // symbol id -> what it equals
  std::map<int64_t, int64_t> symbol_of_hint_;  // duck sizing: hint -> first symbol with it
};

}  // namespace kiln::symbolic
