#pragma once
// Values of a pointwise body that depend on its innermost loop variable alone: the per-channel
// scale and shift of a channels-last batch norm (rsqrt(var + eps) * weight), whose channel is the
// innermost loop. Row-major, such a value does not depend on the inner loop and is hoisted out of
// it; channels-last, it would be computed again for every element. A nest computes each once per
// column into a small array before its loops, and the body reads the array.
#include "inductor/loop_ir.h"

#include <set>
#include <vector>

namespace kiln::inductor {

struct ColumnValue {
  int buffer = -1;  // the array the body now reads, indexed by the innermost variable
  Expr value;       // what it holds (reads only the innermost variable)
};

// Replaces each maximal subexpression of `body` that reads loop variable `var` and no other one,
// costs more than one operation and loads none of the `unavailable` buffers (written in the same
// nest, or local to its iterations) by a load of a new buffer numbered from `next_buffer` on
// (advanced). Returns the replaced values, in buffer order.
std::vector<ColumnValue> extract_column_values(Expr& body, int64_t var,
                                               const std::set<int>& unavailable, int& next_buffer);

}  // namespace kiln::inductor
