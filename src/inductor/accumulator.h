#pragma once
// A reduction's accumulator in generated code: its declaration, the OpenMP reduction clauses that
// combine per-thread and per-lane copies, the statement folding one value in, and the fix-up before
// the result is stored. Chosen so that the loops vectorize: float32 sums add float lanes per block
// of at most 4096 values and carry the blocks' totals in double (accuracy of a double sum, speed of
// a float one); max/min compare plainly and track NaN in a flag, so that a NaN anywhere gives NaN
// as in PyTorch, without a NaN test in the vector loop's dependency chain.
#include "inductor/loop_ir.h"

#include <string>

namespace kiln::inductor {

class Accumulator {
 public:
  // `out` is the result's dtype, `body` the dtype of the values reduced.
  Accumulator(const std::string& reduction, DType out, DType body);

  // The accumulator's C++ type ("double" for floating sums and products).
  const std::string& type() const { return type_; }
  // Statements declaring the accumulator (named `acc`) and its NaN flag.
  std::string declare(const std::string& indent) const;
  // OpenMP clauses combining private copies (for a parallel or simd loop): " reduction(+:acc)".
  std::string clauses() const;
  // The clauses of the innermost (vector) loop.
  std::string inner_clauses() const { return float_partial_ ? " reduction(+:part)" : clauses(); }
  // Whether the innermost loop adds into a float block partial `part` instead of `acc`.
  bool blocked() const { return float_partial_; }
  // The statement folding `value` (an expression of the body's type) into the accumulator (or the
  // block partial).
  std::string combine(const std::string& value) const;
  // Before the block loop / after it: the partial's declaration and its addition to acc.
  std::string open_block(const std::string& indent) const;
  std::string close_block(const std::string& indent) const;
  // Statements run after the reduction, before `acc` is stored.
  std::string finish(const std::string& indent) const;

 private:
  std::string reduction_;
  std::string type_;
  bool floating_ = false;
  bool boolean_ = false;
  bool float_partial_ = false;
};

}  // namespace kiln::inductor
